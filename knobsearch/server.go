package knobsearch

import (
	"context"
	"errors"
	"fmt"

	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/mysqlvar"
)

// ErrServerState marks an error after which the server's settings are
// not known to be either a trial's or the ones it was found with (a
// rollback that could not put everything back): the search stops.
var ErrServerState = errors.New("the server's settings could not be put back")

// MySQL makes a configuration through package apply, as stacktune apply
// would: the MySQL changes go to the my.cnf drop-in (Services.MySQLConf,
// backed up first), dynamic variables are set with SET GLOBAL, the
// others by a restart (Services.MySQLRestart), and every value is read
// back; Undo is apply's rollback of that transaction. Every trial is
// one transaction in StateDir's journal, so a search killed at any
// point is put back by stacktune rollback (or the next apply).
type MySQL struct {
	Services apply.Services
	StateDir string
	// Log receives apply's lines.
	Log func(format string, args ...any)

	applied string // the id of the transaction Undo rolls back
}

var _ Server = (*MySQL)(nil)

// Apply makes c the server's configuration.
func (m *MySQL) Apply(ctx context.Context, c Config, label string) error {
	set := &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune knob search"}
	for _, name := range c.Keys() {
		ch := changeset.Change{Kind: changeset.MySQLVariable, Target: "mysqld", Name: name, To: c[name], Finding: FindingID}
		if o := mysqlvar.OptionName(name); o != name {
			ch.Option = o
		}
		set.Changes = append(set.Changes, ch)
	}
	targets, _, err := apply.FromChangeSet(set, m.Services)
	if err != nil {
		return err
	}
	res, err := apply.Run(ctx, targets, apply.Options{StateDir: m.StateDir, Label: "knob search: " + label, Log: m.Log})
	var rb *apply.RollbackError
	if errors.As(err, &rb) {
		return fmt.Errorf("%w: %w", ErrServerState, err)
	}
	if err == nil {
		m.applied = res.ID
	}
	return err
}

// Undo rolls the last Apply back: only that transaction, never one
// someone else made in the same state directory meanwhile.
func (m *MySQL) Undo(ctx context.Context) error {
	last, err := apply.LastApplied(m.StateDir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrServerState, err)
	}
	if last == nil || last.ID != m.applied {
		return fmt.Errorf("%w: the newest transaction in %s is not the search's own (%s): roll back by hand with stacktune rollback", ErrServerState, m.StateDir, m.applied)
	}
	targets, err := apply.RollbackTargets(m.StateDir, m.Services)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrServerState, err)
	}
	if _, err := apply.Rollback(ctx, targets, apply.Options{StateDir: m.StateDir, Label: "knob search: back to the server as found", Log: m.Log}); err != nil {
		return fmt.Errorf("%w: %w", ErrServerState, err)
	}
	m.applied = ""
	return nil
}
