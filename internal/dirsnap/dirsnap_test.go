package dirsnap

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tree writes a small data directory: nested files with modes and times,
// an empty directory and a symbolic link.
func tree(t *testing.T, dir string) {
	t.Helper()
	for path, data := range map[string]string{"ibdata1": strings.Repeat("x", 3<<20), "db/t.ibd": "table", "db/t.frm": "", "mysql/user.MAD": "u"} {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("db/t.ibd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "db/t.ibd"), old, old); err != nil {
		t.Fatal(err)
	}
}

// listing describes every entry of dir: path, type, mode, size, content
// of small files, link target, mtime of files.
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		desc := fi.Mode().String()
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " → " + target
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			desc += " " + fi.ModTime().UTC().Format(time.RFC3339Nano)
			if len(data) < 100 {
				desc += " " + string(data)
			} else {
				desc += " " + string(rune(len(data)))
			}
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func same(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: %d entries, want %d: %v vs %v", what, len(b), len(a), a, b)
	}
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s: %s is %q, want %q", what, k, b[k], v)
		}
	}
}

func TestCopyAndRestore(t *testing.T) {
	root := t.TempDir()
	data, snap := filepath.Join(root, "data"), filepath.Join(root, "snap")
	tree(t, data)
	want := listing(t, data)
	st, err := Copy(snap, data)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 4 || st.Bytes != 3<<20+5+1 {
		t.Errorf("stats %+v", st)
	}
	same(t, "snapshot", want, listing(t, snap))
	if _, err := Copy(snap, data); err == nil {
		t.Error("a copy over an existing directory was accepted")
	}

	// The server writes, creates and deletes: the restore undoes it all.
	os.WriteFile(filepath.Join(data, "db/t.ibd"), []byte("changed"), 0o640)
	os.WriteFile(filepath.Join(data, "db/new.ibd"), []byte("new"), 0o600)
	os.Remove(filepath.Join(data, "mysql/user.MAD"))
	if _, err := Restore(data, snap); err != nil {
		t.Fatal(err)
	}
	same(t, "restored", want, listing(t, data))
	same(t, "snapshot after the restore", want, listing(t, snap))

	// Debris of a restore killed between its renames: the directory is
	// missing, the old copy and a partial new one are there.
	os.Rename(data, data+".dirsnap-old")
	os.MkdirAll(data+".dirsnap-new/partial", 0o700)
	if _, err := Restore(data, snap); err != nil {
		t.Fatal(err)
	}
	same(t, "restored after debris", want, listing(t, data))
	for _, p := range []string{data + ".dirsnap-old", data + ".dirsnap-new"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
}

func TestRefusals(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	tree(t, data)
	if err := syscall.Mkfifo(filepath.Join(data, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(filepath.Join(root, "snap"), data); err == nil || !strings.Contains(err.Error(), "fifo") {
		t.Errorf("a FIFO was copied: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "snap")); err == nil {
		t.Error("a failed copy left its partial directory")
	}
	// A failed restore (the snapshot is missing) leaves the directory.
	before := listing(t, data)
	if _, err := Restore(data, filepath.Join(root, "nothing")); err == nil {
		t.Error("a restore from nothing succeeded")
	}
	same(t, "after a failed restore", before, listing(t, data))
	if _, err := Copy(filepath.Join(root, "x"), filepath.Join(data, "ibdata1")); err == nil {
		t.Error("a copy of a file as a directory was accepted")
	}
}

// TestRestoreFailures fails each step of a restore in turn: before the
// snapshot is in place the directory ends as it was and no copy is left
// beside it; after, it is the snapshot and the error says so. A failed
// Copy (its fsyncs) leaves no partial directory.
func TestRestoreFailures(t *testing.T) {
	for _, c := range []struct {
		step     string
		restored bool // dir is the snapshot after the error
	}{
		{"sync-file", false},
		{"sync-dir", false},
		{"rename-away", false},
		{"rename-in", false},
		{"remove-old", true},
		{"sync-parent", true},
	} {
		t.Run(c.step, func(t *testing.T) {
			root := t.TempDir()
			data, snap := filepath.Join(root, "data"), filepath.Join(root, "snap")
			tree(t, data)
			if _, err := Copy(snap, data); err != nil {
				t.Fatal(err)
			}
			want := listing(t, snap)
			os.WriteFile(filepath.Join(data, "db/t.ibd"), []byte("changed"), 0o640)
			before := listing(t, data)

			ran := false
			failAt = func(name string) error {
				if name == c.step {
					ran = true
					return errors.New("injected")
				}
				return nil
			}
			_, err := Restore(data, snap)
			failAt = nil
			if !ran {
				t.Fatalf("step %s never ran", c.step)
			}
			if err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("err %v", err)
			}
			if c.restored {
				same(t, "after "+c.step, want, listing(t, data))
				if !strings.Contains(err.Error(), "restored") {
					t.Errorf("the error does not say the snapshot is in place: %v", err)
				}
			} else {
				same(t, "after "+c.step, before, listing(t, data))
				if _, err := os.Stat(data + ".dirsnap-new"); err == nil {
					t.Error("the new copy was left beside the directory")
				}
			}
			same(t, "the snapshot", want, listing(t, snap))
			// The next restore puts the snapshot in place whatever was left.
			if _, err := Restore(data, snap); err != nil {
				t.Fatal(err)
			}
			same(t, "restored again", want, listing(t, data))
		})
	}
	// Copy's own fsyncs failing leave no partial snapshot.
	for _, s := range []string{"sync-file", "sync-dir"} {
		root := t.TempDir()
		data := filepath.Join(root, "data")
		tree(t, data)
		failAt = func(name string) error {
			if name == s {
				return errors.New("injected")
			}
			return nil
		}
		_, err := Copy(filepath.Join(root, "snap"), data)
		failAt = nil
		if err == nil {
			t.Errorf("%s: the copy succeeded", s)
		}
		if _, err := os.Stat(filepath.Join(root, "snap")); err == nil {
			t.Errorf("%s: a failed copy left its partial directory", s)
		}
	}
}
