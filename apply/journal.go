package apply

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/stacktune/stacktune/internal/atomicfile"
)

// Journal states.
const (
	stateWriting        = "writing"
	stateActivating     = "activating"
	stateApplied        = "applied"
	stateRolledBack     = "rolled-back"
	stateRollbackFailed = "rollback-failed"
)

// TxState is a transaction's state as History lists it (Summary.State):
// its journal's, a stable code (docs/json.md; the hyphenated ones are
// older than the rule of snake_case codes and stay: journals on disk
// hold them).
type TxState string

// Codes lists the states.
func (TxState) Codes() []string {
	return []string{stateWriting, stateActivating, stateApplied, stateRolledBack, stateRollbackFailed}
}

const journalName = "journal.json"

// journal is one transaction's record, rewritten atomically at every
// state change.
type journal struct {
	ID       string          `json:"id"`
	Label    string          `json:"label,omitempty"`
	Started  time.Time       `json:"started"`
	Finished time.Time       `json:"finished,omitzero"`
	State    string          `json:"state"`
	Error    string          `json:"error,omitempty"`
	Files    []journalFile   `json:"files"`
	Targets  []journalTarget `json:"targets"`
	Plan     []Step          `json:"plan,omitempty"`
	// Leftovers are what the last rollback could not put back
	// (state rollback-failed).
	Leftovers []Leftover `json:"leftovers,omitempty"`
}

// fileIndex is the index of path's entry in j.Files (backed up before
// any write, so it is there).
func (j *journal) fileIndex(path string) int {
	p := filepath.Clean(path)
	return slices.IndexFunc(j.Files, func(f journalFile) bool { return f.Path == p })
}

// journalFile is one replaced file and where its old content is.
type journalFile struct {
	Path    string      `json:"path"`
	Target  string      `json:"target,omitempty"`
	Existed bool        `json:"existed"`
	Backup  string      `json:"backup,omitempty"` // file name in the transaction directory
	Sum     string      `json:"sha256,omitempty"` // of the old content
	Perm    fs.FileMode `json:"perm,omitempty"`
	// MadeDirs are the directories the write creates (a new systemd
	// UNIT.d), outermost first; restore removes them when empty.
	MadeDirs []string `json:"made_dirs,omitempty"`
	// New is the sha256 of the content the transaction writes, recorded
	// (with Writing) before it is written: restore puts the old content
	// back only over the transaction's own, never over someone's edit.
	New     string `json:"new_sha256,omitempty"`
	Writing bool   `json:"writing,omitempty"`
}

type journalTarget struct {
	Name      string   `json:"name"`
	Files     []string `json:"files,omitempty"`
	Before    State    `json:"before"`
	Wanted    State    `json:"wanted"`
	Activated bool     `json:"activated,omitempty"`
}

// newID is sortable by time and unique.
func newID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + hex.EncodeToString(b[:])
}

func (j *journal) save(dir string) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, journalName), 0o600, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	return syncDir(dir)
}

// last returns the newest journal in one of the states (nil when none).
// Transactions are ordered by id, which starts with the time.
func last(stateDir string, states ...string) (string, *journal, error) {
	entries, err := os.ReadDir(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("apply: state directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	for _, n := range names {
		dir := filepath.Join(stateDir, n)
		b, err := os.ReadFile(filepath.Join(dir, journalName))
		if errors.Is(err, fs.ErrNotExist) {
			continue // killed before the first journal write: nothing changed
		}
		if err != nil {
			return "", nil, fmt.Errorf("apply: journal %s: %w", n, err)
		}
		var j journal
		if err := json.Unmarshal(b, &j); err != nil {
			return "", nil, fmt.Errorf("apply: journal %s is unreadable: %w", dir, err)
		}
		for _, s := range states {
			if j.State == s {
				return dir, &j, nil
			}
		}
		if j.State == stateRollbackFailed {
			// Recover tries it again; until it succeeds nothing older is
			// touched.
			return "", nil, fmt.Errorf("apply: the rollback of transaction %s could not finish; run stacktune rollback to try it again (its journal: %s)", j.ID, dir)
		}
		// Rolled-back transactions are skipped: Rollback walks back through
		// the applied ones, newest first.
	}
	return "", nil, nil
}

// backup copies f's current file (if any) into dir. A file whose new
// content was computed from a base (File.FromBase) must still be that
// base.
func backup(dir string, f File, n int) (journalFile, error) {
	jf := journalFile{Path: filepath.Clean(f.Path)}
	old, err := readTarget(jf.Path)
	if f.FromBase {
		exists := err == nil
		if exists != (f.Base != nil) || exists && !bytes.Equal(old, f.Base) {
			return jf, fmt.Errorf("apply: %s changed since the change was computed from it (edited by someone meanwhile?): nothing was changed; run again", jf.Path)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		for d := filepath.Dir(jf.Path); ; d = filepath.Dir(d) {
			_, err := os.Stat(d)
			if err == nil {
				break
			}
			if !errors.Is(err, fs.ErrNotExist) || d == filepath.Dir(d) {
				return jf, fmt.Errorf("apply: %s: its directory: %w", jf.Path, err)
			}
			jf.MadeDirs = append([]string{d}, jf.MadeDirs...)
		}
		return jf, nil
	case err != nil:
		return jf, fmt.Errorf("apply: backing up %s: %w", jf.Path, err)
	}
	st, err := os.Stat(jf.Path)
	if err != nil {
		return jf, fmt.Errorf("apply: backing up %s: %w", jf.Path, err)
	}
	jf.Existed = true
	jf.Perm = st.Mode().Perm()
	jf.Sum = sum(old)
	jf.Backup = fmt.Sprintf("backup-%03d-%s", n, filepath.Base(jf.Path))
	if err := atomicfile.Write(filepath.Join(dir, jf.Backup), 0o600, func(w io.Writer) error {
		_, err := w.Write(old)
		return err
	}); err != nil {
		return jf, fmt.Errorf("apply: backing up %s: %w", jf.Path, err)
	}
	return jf, nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// unchanged checks that jf's file is still what was backed up (or still
// absent), right before it is replaced: an edit made in between would
// be lost.
func unchanged(dir string, jf journalFile) error {
	cur, err := readTarget(jf.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if jf.Existed {
			return fmt.Errorf("%s was removed after it was backed up", jf.Path)
		}
		return nil
	case err != nil:
		return err
	case !jf.Existed:
		return fmt.Errorf("%s was created by someone else after the transaction began", jf.Path)
	case sum(cur) != jf.Sum:
		return fmt.Errorf("%s was edited after it was backed up (the edit is kept; the transaction is not applied)", jf.Path)
	}
	return nil
}

// handRestore is the command that puts jf's old content back by hand.
func (jf journalFile) handRestore(dir string) string {
	if !jf.Existed {
		return "rm -f " + shellQuote(jf.Path)
	}
	return "cp " + shellQuote(filepath.Join(dir, jf.Backup)) + " " + shellQuote(jf.Path)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:=@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// restore puts a backup back (or removes a file that did not exist),
// when the file holds what the transaction wrote; a file it never wrote
// is left alone, and one edited since it was written is not overwritten
// (an error names it).
func restore(dir string, jf journalFile) error {
	if !jf.Writing {
		return nil
	}
	cur, err := readTarget(jf.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !jf.Existed {
			return nil
		}
	case err != nil:
		return fmt.Errorf("reading %s: %w", jf.Path, err)
	case jf.Existed && sum(cur) == jf.Sum:
		return nil
	case sum(cur) != jf.New:
		return fmt.Errorf("%s was changed after stacktune wrote it: not overwritten (its old content is the backup)", jf.Path)
	}
	if !jf.Existed {
		if err := os.Remove(jf.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", jf.Path, err)
		}
		parent := filepath.Dir(jf.Path)
		for i := len(jf.MadeDirs) - 1; i >= 0; i-- {
			if os.Remove(jf.MadeDirs[i]) != nil { // only when empty: something else may have moved in
				break
			}
			parent = filepath.Dir(jf.MadeDirs[i])
		}
		// The file may never have been written: its directory may not
		// exist either. Sync the nearest one that does.
		for {
			if _, err := os.Stat(parent); err == nil || filepath.Dir(parent) == parent {
				break
			}
			parent = filepath.Dir(parent)
		}
		return syncDir(parent)
	}
	old, err := os.ReadFile(filepath.Join(dir, jf.Backup))
	if err != nil {
		return fmt.Errorf("reading the backup of %s: %w", jf.Path, err)
	}
	if sum(old) != jf.Sum {
		return fmt.Errorf("the backup of %s is damaged (its checksum differs)", jf.Path)
	}
	return writeFile(File{Path: jf.Path, Data: old, Perm: jf.Perm})
}

// writeFile writes f atomically and syncs its directory, creating the
// directory if needed.
func writeFile(f File) error {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return err
	}
	perm := f.Perm
	if perm == 0 {
		perm = 0o644
	}
	if err := atomicfile.Write(f.Path, perm, func(w io.Writer) error {
		_, err := w.Write(f.Data)
		return err
	}); err != nil {
		return err
	}
	return syncDir(filepath.Dir(f.Path))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// History lists the transactions in stateDir, newest first.
func History(stateDir string) ([]Summary, error) {
	entries, err := os.ReadDir(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Summary
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(stateDir, e.Name(), journalName))
		if err != nil {
			continue
		}
		var j journal
		if json.Unmarshal(b, &j) != nil {
			continue
		}
		s := Summary{ID: j.ID, Label: j.Label, State: TxState(j.State), Started: j.Started, Error: j.Error}
		for _, f := range j.Files {
			s.Files = append(s.Files, f.Path)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID > out[b].ID })
	return out, nil
}

// Summary is one transaction as History lists it.
type Summary struct {
	ID      string    `json:"id"`
	Label   string    `json:"label,omitempty"`
	State   TxState   `json:"state"`
	Started time.Time `json:"started"`
	Files   []string  `json:"files"`
	Error   string    `json:"error,omitempty"`
}
