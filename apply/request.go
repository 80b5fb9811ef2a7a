package apply

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/mysqlvar"
)

// Request is one `stacktune apply` on this host: a change set (the
// directory audit --emit wrote, or its changes.json) and/or a file of
// index DDL, the services reached as Reach says, as one transaction (or
// its plan, DryRun). Errors name the command's flags.
type Request struct {
	// Path is the change set ("": none); Skip leaves out the changes of
	// these findings.
	Path string
	Skip []string
	// DDL is a file of ALTER TABLE ... ADD INDEX (stacktune indexes'
	// output), "-" for DDLInput.
	DDL      string
	DDLInput io.Reader
	// DSN is the server of MySQL settings and indexes ("": none).
	DSN   string
	Reach Reach
	// DryRun plans, changing nothing.
	DryRun bool
	// Options are the transaction's; StateDir must be set.
	Options Options
	// Note receives what a person should know on the way (notes of the
	// change set, of the server's option files, of the targets).
	Note func(string)
}

// Outcome is what Apply did: the plan of a DryRun, or the transaction's
// Result (set even when it failed and rolled back).
type Outcome struct {
	Plan   *Plan
	Result *Result
}

// Apply runs r: the change set is read (and --skip checked) and the DDL
// file read before any server is asked, the server opened when a change
// needs it, the targets built (FromChangeSet), then DryRun or Run.
func Apply(ctx context.Context, r Request) (Outcome, error) {
	note := r.note()
	if r.Path == "" && r.DDL == "" {
		return Outcome{}, errors.New("nothing to apply: give the directory of stacktune audit --emit (or its changes.json), or --ddl FILE")
	}
	set, err := ReadSet(r.Path, r.Skip, note)
	if err != nil {
		return Outcome{}, err
	}
	var ddl []byte
	if r.DDL != "" {
		if r.DSN == "" {
			return Outcome{}, errors.New("--ddl needs --dsn: the indexes are added on that server")
		}
		if ddl, err = ReadDDL(r.DDL, r.DDLInput); err != nil {
			return Outcome{}, err
		}
	}
	var db *sql.DB
	var srv mysqlvar.Server
	if NeedsDB(set) || r.DDL != "" {
		if r.DSN == "" {
			return Outcome{}, fmt.Errorf("%s holds MySQL settings: give --dsn, the server they are applied to and read back from", r.Path)
		}
		if db, srv, err = dbconn.OpenServer(ctx, r.DSN); err != nil {
			return Outcome{}, err
		}
		defer db.Close()
	}
	sv, err := r.Reach.Services(ctx, r.DSN, db, srv, true, note)
	if err != nil {
		return Outcome{}, err
	}
	if r.DDL != "" {
		ixs, err := ReadIndexChanges(ddl, sv.Schema)
		if err != nil {
			return Outcome{}, fmt.Errorf("--ddl %s: %w", r.DDL, err)
		}
		if len(ixs) == 0 {
			note(fmt.Sprintf("--ddl %s holds no index", r.DDL))
		}
		set.Changes = append(set.Changes, ixs...)
	}
	targets, notes, err := FromChangeSet(set, sv)
	for _, n := range notes {
		note(n)
	}
	if err != nil {
		return Outcome{}, err
	}
	if len(targets) == 0 {
		return Outcome{}, errors.New("nothing to apply")
	}
	if r.DryRun {
		plan, err := DryRun(ctx, targets, r.Options)
		return Outcome{Plan: plan}, err
	}
	res, err := Run(ctx, targets, r.Options)
	return Outcome{Result: res}, err
}

func (r Request) note() func(string) {
	if r.Note == nil {
		return func(string) {}
	}
	return r.Note
}

// ReadSet reads the change set of path (a directory audit --emit wrote,
// or a changes.json; "": an empty set), without the changes of the
// findings skip names, each of which must have one. Read's notes go to
// note.
func ReadSet(path string, skip []string, note func(string)) (*changeset.Set, error) {
	set := &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune apply"}
	if path != "" {
		s, notes, err := changeset.Read(path)
		for _, n := range notes {
			note(n)
		}
		if err != nil {
			return nil, err
		}
		set = s
	}
	for _, id := range skip {
		if !slices.ContainsFunc(set.Changes, func(c changeset.Change) bool { return c.Finding == id }) {
			return nil, fmt.Errorf("--skip %s: no change of %s comes from that finding", id, path)
		}
	}
	return set.Without(skip...), nil
}

// MaxDDL bounds what ReadDDL reads.
const MaxDDL = 16 << 20

// ReadDDL reads a file of index DDL (path; "-" reads stdin), bounded by
// MaxDDL: a regular file only, so a FIFO never blocks the open.
func ReadDDL(path string, stdin io.Reader) ([]byte, error) {
	var text []byte
	var err error
	if path == "-" {
		text, err = io.ReadAll(io.LimitReader(stdin, MaxDDL+1))
	} else {
		text, err = input.ReadFile(path, MaxDDL)
	}
	if err != nil && !errors.Is(err, input.ErrTooLarge) {
		return nil, fmt.Errorf("--ddl: %w", err)
	}
	if len(text) > MaxDDL || err != nil {
		return nil, fmt.Errorf("--ddl %s: larger than %s: not the output of stacktune indexes", path, input.SizeText(MaxDDL))
	}
	return text, nil
}

// RollbackRequest is one `stacktune rollback`: the newest transaction of
// Options.StateDir undone, the services reached as Reach says (Nginx:
// whether nginx is), only when it carries ExpectLabel if that is set.
type RollbackRequest struct {
	DSN         string
	Reach       Reach
	Nginx       bool
	ExpectLabel string
	Options     Options
	Note        func(string)
}

// RollbackLast runs r: the label checked, the server opened when DSN is
// set, the journal's targets reached again (RollbackTargets; the ones
// these services cannot reach are named in a note: their files are
// restored, their service is not reloaded), then Rollback.
func RollbackLast(ctx context.Context, r RollbackRequest) (*Result, error) {
	note := func(string) {}
	if r.Note != nil {
		note = r.Note
	}
	state := r.Options.StateDir
	if err := CheckExpectLabel(state, r.ExpectLabel); err != nil {
		return nil, err
	}
	var db *sql.DB
	var srv mysqlvar.Server
	if r.DSN != "" {
		var err error
		if db, srv, err = dbconn.OpenServer(ctx, r.DSN); err != nil {
			return nil, err
		}
		defer db.Close()
	}
	reach := r.Reach
	reach.MySQLCheck = "none" // a rollback puts back files that passed before
	reach.Rollback = true
	sv, err := reach.Services(ctx, r.DSN, db, srv, r.Nginx, note)
	if err != nil {
		return nil, err
	}
	targets, err := RollbackTargets(state, sv)
	if err != nil {
		return nil, err
	}
	if last, err := LastApplied(state); err == nil && last != nil {
		reached := map[string]bool{}
		for _, t := range targets {
			reached[t.Name()] = true
		}
		var manual []string
		for _, n := range last.Targets {
			if !reached[n] {
				manual = append(manual, n)
			}
		}
		if len(manual) > 0 {
			note(fmt.Sprintf("undoing %s: %s not reachable with these flags (--dsn, --nginx-*, --host-wide): its files are restored, the service is not reloaded", last.ID, strings.Join(manual, ", ")))
		}
	}
	return Rollback(ctx, targets, r.Options)
}

// CheckExpectLabel fails unless the transaction a rollback of state would
// undo carries label ("": any).
func CheckExpectLabel(state, label string) error {
	if label == "" {
		return nil
	}
	hist, err := History(state)
	if err != nil {
		return err
	}
	for _, t := range hist { // newest first
		if t.State == "rolled-back" {
			continue
		}
		if t.Label != label {
			return fmt.Errorf("--expect-label: the transaction to undo is %s (label %q), not one labelled %q: nothing rolled back", t.ID, t.Label, label)
		}
		return nil
	}
	return fmt.Errorf("--expect-label: no transaction to undo in %s: nothing rolled back", state)
}
