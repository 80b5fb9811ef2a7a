package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/stacktune/stacktune/internal/dirsnap"
)

// DataCopy is what a snapshot or a restore of a server's data dir did
// and how long it took: Copy the copying alone, Total with the stop and
// the start.
type DataCopy struct {
	Files int           `json:"files"`
	Bytes int64         `json:"bytes"`
	Copy  time.Duration `json:"copy_ns"`
	Total time.Duration `json:"total_ns"`
}

// SnapshotData stops the server gracefully (a clean shutdown: InnoDB
// flushes its pages and its redo log is empty, so the copy starts
// without crash recovery), copies its data dir to dst, which must not
// exist, and starts the server again with the same command line. It is
// how a benchmark keeps the bytes each trial starts from (RestoreData).
func (m *MariaDB) SnapshotData(ctx context.Context, dst string) (DataCopy, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return DataCopy{}, errors.New("sandbox: MariaDB snapshot: the server has been stopped")
	}
	if _, err := os.Lstat(dst); err == nil {
		return DataCopy{}, fmt.Errorf("sandbox: MariaDB snapshot: %s already exists", dst)
	}
	start := time.Now()
	if p := m.inst.proc; p != nil {
		p.kill(m.inst.grace)
		m.inst.proc = nil
	}
	st, err := dirsnap.Copy(dst, m.datadir)
	dc := DataCopy{Files: st.Files, Bytes: st.Bytes, Copy: st.Elapsed}
	if rerr := m.relaunchLocked(ctx); rerr != nil || err != nil {
		return dc, errors.Join(err, rerr)
	}
	dc.Total = time.Since(start)
	return dc, nil
}

// RestoreData brings the server's data back to a snapshot taken by
// SnapshotData: it kills the server at once (SIGKILL: what it holds is
// thrown away, so a clean shutdown, which would flush every dirty page,
// is only time lost), replaces the data dir with a copy of src
// (dirsnap.Restore: the whole directory or nothing), and starts the
// server again; it reads my.cnf and conf.d afresh, as Restart does. On an
// error the server may be down: RestoreData or Restart can be called
// again.
func (m *MariaDB) RestoreData(ctx context.Context, src string) (DataCopy, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return DataCopy{}, errors.New("sandbox: MariaDB restore: the server has been stopped")
	}
	start := time.Now()
	if p := m.inst.proc; p != nil {
		p.killNow()
		m.inst.proc = nil
	}
	st, err := dirsnap.Restore(m.datadir, src)
	dc := DataCopy{Files: st.Files, Bytes: st.Bytes, Copy: st.Elapsed}
	if err != nil {
		return dc, fmt.Errorf("sandbox: MariaDB restore: %w", err)
	}
	if err := m.relaunchLocked(ctx); err != nil {
		return dc, err
	}
	dc.Total = time.Since(start)
	return dc, nil
}

// relaunchLocked starts mariadbd again on the same command line; m.mu is
// held.
func (m *MariaDB) relaunchLocked(ctx context.Context) error {
	if err := m.inst.relaunch(ctx, m.timeout, m.bin, m.args, m.db.PingContext); err != nil {
		return fmt.Errorf("sandbox: MariaDB start: %w", err)
	}
	var v string
	if err := m.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return fmt.Errorf("sandbox: MariaDB start: SELECT VERSION(): %w", err)
	}
	m.version = v
	return nil
}

// killNow sends SIGKILL to the process group and waits until the leader
// has been reaped.
func (p *process) killNow() {
	if p.exited() {
		p.kill(0) // only its helpers are left
		return
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	<-p.done
}
