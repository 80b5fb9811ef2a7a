package mysqlconf

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseHelp: any output is a Search within the bounds or an error,
// never a panic.
func FuzzParseHelp(f *testing.F) {
	for _, name := range []string{"mariadbd-10.11-defaults-file-suffix.txt", "mariadbd-10.11-extra-file.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(filesHeader + "\n" + groupsPrefix + "\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		s, err := ParseHelp(out)
		if err != nil {
			return
		}
		if len(s.Files) == 0 || len(s.Files) > maxSearchFiles || len(s.Groups) > maxGroups {
			t.Fatalf("%d files, %d groups", len(s.Files), len(s.Groups))
		}
	})
}

// FuzzReadOptionFile: an option file of any content (including itself,
// its directory, or nothing) is read within the bounds, each setting
// named by a file read and a line of it.
func FuzzReadOptionFile(f *testing.F) {
	for _, s := range []string{
		"[mysqld]\nmax_connections = 10\n!includedir d\n[client]\nuser=x\n",
		"!include f.cnf\n[mysqld]\nskip-name-resolve\n",
		"[mysqld]\n!includedir .\nkey_buffer_size=8M\n",
		"[mysqld\nx\n",
		"[mysqld]\n!include\t  f.cnf  \n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Every path stays in the test's directory: the reader reads a
		// relative include against it.
		data = bytes.ReplaceAll(data, []byte("/"), []byte("_"))
		dir := t.TempDir()
		path := filepath.Join(dir, "f.cnf")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "d", "a.cnf"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		r := newReader([]string{"mysqld", "server"}, dir)
		r.read(path, nil, 0)
		if len(r.files) > maxOptionFiles {
			t.Fatalf("%d files read", len(r.files))
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, s := range r.settings {
			if s.Line < 1 || s.Line > lines || (s.File != path && s.File != filepath.Join(dir, "d", "a.cnf")) {
				t.Fatalf("setting %+v", s)
			}
		}
		for _, in := range r.includes {
			if d := depth(in); d > maxIncludeDepth {
				t.Fatalf("include %d deep", d)
			}
		}
	})
}
