package apply

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// lockName is the file in the state directory that a transaction holds
// (flock) while it runs.
const lockName = ".lock"

// Holder is who holds a state directory's lock.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host,omitempty"`
	Started time.Time `json:"started"`
	Label   string    `json:"label,omitempty"`
	Command string    `json:"command,omitempty"`
}

// LockedError is the error of a second transaction on a state directory
// that one holds.
type LockedError struct {
	Dir    string
	Holder *Holder // nil when unreadable
}

func (e *LockedError) Error() string {
	msg := "apply: another stacktune apply or rollback is running on " + e.Dir
	if h := e.Holder; h != nil && h.PID > 0 {
		msg += fmt.Sprintf(" (pid %d", h.PID)
		if h.Host != "" {
			msg += " on " + h.Host
		}
		msg += ", since " + h.Started.Local().Format("2006-01-02 15:04:05")
		if h.Label != "" {
			msg += fmt.Sprintf(", label %q", h.Label)
		}
		if h.Command != "" {
			msg += ": " + h.Command
		}
		msg += ")"
	}
	return msg + ": one transaction at a time; wait for it to finish"
}

// ErrLocked matches a *LockedError with errors.Is.
var ErrLocked = errors.New("apply: state directory locked")

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// lock takes the state directory's lock without waiting, and writes who
// holds it into the lock file. The kernel releases the lock when the
// process ends, however it ends, so a killed run never leaves it held.
func lock(dir, label string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("apply: state directory: %w", err)
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("apply: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			le := &LockedError{Dir: dir}
			if b, rerr := os.ReadFile(path); rerr == nil {
				var h Holder
				if json.Unmarshal(b, &h) == nil {
					le.Holder = &h
				}
			}
			return nil, le
		}
		return nil, fmt.Errorf("apply: lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	// The program and its subcommand only: the arguments may hold a DSN
	// with a password.
	cmd := filepath.Base(os.Args[0])
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		cmd += " " + os.Args[1]
	}
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Started: time.Now(), Label: label, Command: cmd})
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(append(b, '\n'), 0)
		_ = f.Sync()
	}
	return func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
