package knobsearch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/stacktune/stacktune/internal/dirsnap"
)

// Datadir resets a server's data by copying its whole data directory
// while the server is stopped: Take makes the snapshot once, Restore
// puts it back before every trial. It is for a server used only for the
// benchmark: everything in the data directory, every database, goes
// back to the snapshot. The server is stopped and started with the
// commands given (systemctl stop/start mariadb); Ping says when it
// answers again.
type Datadir struct {
	Dir      string
	Snapshot string
	Stop     func(ctx context.Context) error
	Start    func(ctx context.Context) error
	Ping     func(ctx context.Context) error
	// StartTimeout bounds the wait for Ping after Start (default 2 min).
	StartTimeout time.Duration
}

// Take stops the server (cleanly: the copy needs no crash recovery),
// copies the data directory to Snapshot (which must not exist) and
// starts the server again.
func (d *Datadir) Take(ctx context.Context) (dirsnap.Stats, error) {
	if err := d.check(); err != nil {
		return dirsnap.Stats{}, err
	}
	if _, err := os.Lstat(d.Snapshot); err == nil {
		return dirsnap.Stats{}, fmt.Errorf("datadir snapshot: %s already exists (remove it, or restore from it)", d.Snapshot)
	}
	if err := d.Stop(ctx); err != nil {
		return dirsnap.Stats{}, fmt.Errorf("datadir snapshot: stopping the server: %w", err)
	}
	st, err := dirsnap.Copy(d.Snapshot, d.Dir)
	return st, errors.Join(err, d.start(ctx))
}

// Restore stops the server, replaces the data directory with a copy of
// the snapshot and starts the server.
func (d *Datadir) Restore(ctx context.Context) error {
	if err := d.check(); err != nil {
		return err
	}
	if err := d.Stop(ctx); err != nil {
		return fmt.Errorf("datadir restore: stopping the server: %w", err)
	}
	if _, err := dirsnap.Restore(d.Dir, d.Snapshot); err != nil {
		return errors.Join(err, d.start(ctx))
	}
	return d.start(ctx)
}

func (d *Datadir) check() error {
	switch {
	case d.Stop == nil || d.Start == nil || d.Ping == nil:
		return errors.New("datadir reset: the commands that stop and start the server are needed")
	case !filepath.IsAbs(d.Dir) || !filepath.IsAbs(d.Snapshot):
		return fmt.Errorf("datadir reset: the data directory (%q) and the snapshot (%q) must be absolute paths", d.Dir, d.Snapshot)
	case filepath.Clean(d.Dir) == "/" || filepath.Clean(d.Snapshot) == "/":
		return errors.New("datadir reset: refusing the root directory")
	}
	return nil
}

func (d *Datadir) start(ctx context.Context) error {
	if err := d.Start(ctx); err != nil {
		return fmt.Errorf("starting the server: %w", err)
	}
	timeout := d.StartTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	deadline := time.Now().Add(timeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := d.Ping(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the server does not answer after its start: %w", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
