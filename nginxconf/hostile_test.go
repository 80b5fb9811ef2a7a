//go:build linux

package nginxconf

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/stacktune/stacktune/input"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostile is a configuration that is wrong or hostile in a way that
// could take the memory of the host reading it, with what Load and nginx
// -t make of it.
type hostile struct {
	name string
	// build writes the configuration into dir and returns the path of
	// its main file.
	build func(t testing.TB, dir string) string
	// err is the start of Load's error, DIR standing for dir; "" when it
	// loads.
	err string
	// nginx is what nginx -t -p DIR -c MAIN does with it: "accepts",
	// "refuses" (exits 1 with an emerg or crit message), "crashes"
	// (killed by a signal; nginx recurses on blocks and includes until
	// the stack runs out), or "" for not run, why in a comment.
	nginx string
	// directives is how many directives Directives lists when it loads.
	directives int
	// atCap is a configuration that fills one of the count bounds
	// before it fails: it takes the memory of the largest configuration
	// that loads, not of one refused early.
	atCap bool
}

// writeRepeat writes head, then line n times, then tail into dir/name,
// through a small buffer (the test process stays small for the memory
// test's children).
func writeRepeat(t testing.TB, dir, name, head, line string, n int, tail string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(head)
	for range n {
		w.WriteString(line)
	}
	w.WriteString(tail)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// fill writes a file of exactly size bytes of comment lines.
func fill(t testing.TB, dir, name string, size int) string {
	t.Helper()
	line := "# " + strings.Repeat("x", 61) + "\n" // 64 bytes
	rest := size % len(line)
	return writeRepeat(t, dir, name, "", line, size/len(line), strings.Repeat("#", rest))
}

// httpConf is a main file whose http block holds body, from line 3.
func httpConf(body string) string {
	return "events {}\nhttp {\n" + body + "}\n"
}

// nested is n blocks "location / {" one in the next, one a line, from
// line 4 (under http and server), then body, then the closing braces.
func nested(t testing.TB, dir string, n int, body string, copies int) string {
	return writeRepeat(t, dir, "nginx.conf", "events {}\nhttp {\nserver {\n", "location / {\n", n,
		strings.Repeat(body, copies)+strings.Repeat("}\n", n)+"}\n}\n")
}

var hostiles = []hostile{
	{
		// nginx reads as many bytes as fstat says a file has: 0 for
		// /dev/zero.
		name: "include-dev-zero",
		build: func(t testing.TB, dir string) string {
			return write(t, dir, "nginx.conf", httpConf("include /dev/zero;\n"))
		},
		err:   "DIR/nginx.conf:3: include /dev/zero: /dev/zero is a character device, not a regular file",
		nginx: "accepts",
	},
	{
		name: "include-symlink-to-dev-zero",
		build: func(t testing.TB, dir string) string {
			if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.conf")); err != nil {
				t.Fatal(err)
			}
			return write(t, dir, "nginx.conf", httpConf("include zero.conf;\n"))
		},
		err:   "DIR/nginx.conf:3: include zero.conf: DIR/zero.conf is a character device, not a regular file",
		nginx: "accepts",
	},
	{
		// nginx: "no events section", having read nothing.
		name:  "main-dev-zero",
		build: func(t testing.TB, dir string) string { return "/dev/zero" },
		err:   "nginx configuration: /dev/zero is a character device, not a regular file",
		nginx: "refuses",
	},
	{
		// nginx -t blocks for good opening a FIFO no one writes: not run.
		name: "include-fifo",
		build: func(t testing.TB, dir string) string {
			if err := syscall.Mkfifo(filepath.Join(dir, "fifo.conf"), 0o644); err != nil {
				t.Fatal(err)
			}
			return write(t, dir, "nginx.conf", httpConf("\ninclude fifo.conf;\n"))
		},
		err: "DIR/nginx.conf:4: include fifo.conf: DIR/fifo.conf is a named pipe (FIFO), not a regular file",
	},
	{
		name: "include-glob-matching-fifo",
		build: func(t testing.TB, dir string) string {
			write(t, dir, "conf.d/a.conf", "gzip on;\n")
			if err := syscall.Mkfifo(filepath.Join(dir, "conf.d", "b.conf"), 0o644); err != nil {
				t.Fatal(err)
			}
			return write(t, dir, "nginx.conf", httpConf("include conf.d/*.conf;\n"))
		},
		err: "DIR/nginx.conf:3: include conf.d/*.conf: DIR/conf.d/b.conf is a named pipe (FIFO), not a regular file",
	},
	{
		name: "main-fifo",
		build: func(t testing.TB, dir string) string {
			p := filepath.Join(dir, "nginx.conf")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		},
		err: "nginx configuration: DIR/nginx.conf is a named pipe (FIFO), not a regular file",
	},
	{
		name: "include-directory",
		build: func(t testing.TB, dir string) string {
			write(t, dir, "conf.d/a.conf", "gzip on;\n")
			return write(t, dir, "nginx.conf", httpConf("include conf.d;\n"))
		},
		err:   "DIR/nginx.conf:3: include conf.d: DIR/conf.d is a directory, not a regular file",
		nginx: "refuses",
	},
	{
		// nginx too: pread() "DIR/conf.d/sub" failed (21: Is a directory).
		name: "include-glob-matching-directory",
		build: func(t testing.TB, dir string) string {
			write(t, dir, "conf.d/a", "gzip on;\n")
			write(t, dir, "conf.d/sub/b", "gzip on;\n")
			return write(t, dir, "nginx.conf", httpConf("include conf.d/*;\n"))
		},
		err:   "DIR/nginx.conf:3: include conf.d/*: DIR/conf.d/sub is a directory, not a regular file",
		nginx: "refuses",
	},
	{
		name: "main-directory",
		build: func(t testing.TB, dir string) string {
			return dir
		},
		err: "nginx configuration: DIR is a directory, not a regular file",
	},
	{
		name: "include-file-over-file-cap",
		build: func(t testing.TB, dir string) string {
			fill(t, dir, "big.conf", MaxFileBytes+1)
			return write(t, dir, "nginx.conf", httpConf("include big.conf;\n"))
		},
		err:   "DIR/nginx.conf:3: include big.conf: DIR/big.conf is larger than 16 MiB, the most nginxconf reads of one file (MaxFileBytes)",
		nginx: "accepts",
	},
	{
		name: "include-file-at-file-cap",
		build: func(t testing.TB, dir string) string {
			fill(t, dir, "big.conf", MaxFileBytes)
			return write(t, dir, "nginx.conf", httpConf("include big.conf;\n"))
		},
		nginx:      "accepts",
		directives: 3,
	},
	{
		name: "main-file-over-file-cap",
		build: func(t testing.TB, dir string) string {
			return fill(t, dir, "nginx.conf", MaxFileBytes+1)
		},
		err: "nginx configuration: DIR/nginx.conf is larger than 16 MiB, the most nginxconf reads of one file (MaxFileBytes)",
	},
	{
		// Five files of 15 MiB: the fifth would make 75 MiB.
		name: "total-cap-across-includes",
		build: func(t testing.TB, dir string) string {
			for i := 1; i <= 5; i++ {
				fill(t, dir, fmt.Sprintf("conf.d/%02d.conf", i), 15<<20)
			}
			return write(t, dir, "nginx.conf", httpConf("include conf.d/*.conf;\n"))
		},
		err:   "DIR/nginx.conf:3: include conf.d/*.conf: DIR/conf.d/05.conf: the configuration would be larger than 64 MiB in all, the most nginxconf reads (MaxTotalBytes; ",
		nginx: "accepts",
	},
	{
		// A file read again counts again: with the main file, 4 MiB 16
		// times is past 64 MiB.
		name: "total-cap-one-file-included-again",
		build: func(t testing.TB, dir string) string {
			fill(t, dir, "big.conf", 4<<20)
			return write(t, dir, "nginx.conf", httpConf(strings.Repeat("include big.conf;\n", 16)))
		},
		err:   "DIR/nginx.conf:18: include big.conf: DIR/big.conf: the configuration would be larger than 64 MiB in all, the most nginxconf reads (MaxTotalBytes; ",
		nginx: "accepts",
	},
	{
		name: "include-loop",
		build: func(t testing.TB, dir string) string {
			write(t, dir, "a.conf", "# a\ninclude b.conf;\n")
			write(t, dir, "b.conf", "include a.conf;\n")
			return write(t, dir, "nginx.conf", httpConf("include a.conf;\n"))
		},
		// a.conf is read 1, 3, ... 31 includes deep, b.conf 2, ... 32:
		// b.conf's include is the 33rd.
		err:   "DIR/b.conf:1: include a.conf: includes nested deeper than 32 (MaxIncludeDepth; a cycle?)",
		nginx: "crashes",
	},
	{
		// Each of two files includes both: 2^n reads but for the depth
		// bound.
		name: "include-glob-loop",
		build: func(t testing.TB, dir string) string {
			write(t, dir, "loop/a.conf", "include loop/*.conf;\n")
			write(t, dir, "loop/b.conf", "include loop/*.conf;\n")
			return write(t, dir, "nginx.conf", httpConf("include loop/*.conf;\n"))
		},
		err:   "DIR/loop/a.conf:1: include loop/*.conf: includes nested deeper than 32 (MaxIncludeDepth; a cycle?)",
		nginx: "crashes",
	},
	{
		// 22 files each include 22 files that each include 22 files:
		// 22 + 484 + 10648 reads, no loop.
		name: "include-count-runaway-via-glob",
		build: func(t testing.TB, dir string) string {
			for i := range 22 {
				write(t, dir, fmt.Sprintf("l1/%02d.conf", i), "include l2/*.conf;\n")
				write(t, dir, fmt.Sprintf("l2/%02d.conf", i), "include l3/*.conf;\n")
				write(t, dir, fmt.Sprintf("l3/%02d.conf", i), "add_header X-L3 1;\n")
			}
			return write(t, dir, "nginx.conf", httpConf("include l1/*.conf;\n"))
		},
		// Read depth first, each level-1 file reading 1 + 22*23 files:
		// the 10,001st read is the 21st level-3 file of l2/15.conf, read
		// for l1/19.conf.
		err:   "DIR/l2/15.conf:1: include l3/*.conf: more than 10000 files read by includes in all (MaxIncludeReads; a file included N times counts N times)",
		nginx: "accepts",
	},
	{
		name: "include-glob-matching-too-many-files",
		build: func(t testing.TB, dir string) string {
			for i := range MaxIncludeReads + 1 {
				write(t, dir, fmt.Sprintf("many/%05d.conf", i), "")
			}
			return write(t, dir, "nginx.conf", httpConf("include many/*.conf;\n"))
		},
		err:   "DIR/nginx.conf:3: include many/*.conf: matches more than 10000 files (MaxIncludeReads)",
		nginx: "accepts",
	},
	{
		// location / nested 99 deep in server in http: 101 blocks.
		name:  "depth-over-cap",
		build: func(t testing.TB, dir string) string { return nested(t, dir, 99, "", 0) },
		err:   "DIR/nginx.conf:102: blocks nested more than 100 deep (MaxBlockDepth)",
		nginx: "accepts",
	},
	{
		name: "depth-over-cap-across-include",
		build: func(t testing.TB, dir string) string {
			writeRepeat(t, dir, "deep.conf", "", "location / {\n", 99, strings.Repeat("}\n", 99))
			return write(t, dir, "nginx.conf", "events {}\nhttp {\nserver {\ninclude deep.conf;\n}\n}\n")
		},
		err:   "DIR/deep.conf:99: blocks nested more than 100 deep (MaxBlockDepth)",
		nginx: "accepts",
	},
	{
		// The case: 20,000 nested locations (280 KB).
		name:  "20000-nested-locations",
		build: func(t testing.TB, dir string) string { return nested(t, dir, 20000, "", 0) },
		err:   "DIR/nginx.conf:102: blocks nested more than 100 deep (MaxBlockDepth)",
		nginx: "crashes",
	},
	{
		// At the cap: 100 blocks deep, 10,000 blocks side by side at
		// the bottom, each with a directive.
		name: "depth-at-cap-many-siblings",
		build: func(t testing.TB, dir string) string {
			return nested(t, dir, 97, "if ($arg_a) { return 204; }\n", 10000)
		},
		nginx:      "accepts",
		directives: 3 + 97 + 2*10000,
	},
	{
		// Blocks 100 deep holding a directive, 20,001 of them: http,
		// server and the locations hold 1 + 2 + (3 + ... + 99) = 4,950
		// entries, each if 100 more: the 19,951st if's return (line 100
		// + 19,951) is past 2,000,000.
		name: "context-entries-over-cap",
		build: func(t testing.TB, dir string) string {
			return nested(t, dir, 97, "if ($arg_a) { return 204; }\n", 20001)
		},
		err:   "DIR/nginx.conf:20051: the block paths of the configuration would have more than 2000000 entries in all (MaxContextEntries: many blocks nested deep)",
		nginx: "accepts",
		atCap: true,
	},
	{
		// Not run with nginx: "a" is no nginx directive.
		name: "directives-over-cap",
		build: func(t testing.TB, dir string) string {
			return writeRepeat(t, dir, "nginx.conf", "", "a;\n", MaxDirectives+1, "")
		},
		err:   "DIR/nginx.conf:500001: more than 500000 directives in all (MaxDirectives)",
		atCap: true,
	},
	{
		name: "words-over-cap",
		build: func(t testing.TB, dir string) string {
			return writeRepeat(t, dir, "nginx.conf", "a", " b\n", MaxWords, ";\n")
		},
		// One directive of 2,000,001 words.
		err:   "DIR/nginx.conf:2000000: more than 2000000 words in all (MaxWords)",
		atCap: true,
	},
}

// TestLoadHostile: each hostile configuration loads or fails with the
// error naming its file and line; what loads lists its directives.
func TestLoadHostile(t *testing.T) {
	for _, tc := range hostiles {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			main := tc.build(t, dir)
			c, err := Load(main)
			t.Logf("Load: %v", err)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if got := len(c.Directives()); got != tc.directives {
					t.Errorf("Directives: %d, want %d", got, tc.directives)
				}
				return
			}
			want := strings.ReplaceAll(tc.err, "DIR", dir)
			if err == nil {
				t.Fatalf("Load: no error, want %q", want)
			}
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Load:\n got %v\nwant %s", err, want)
			}
		})
	}
}

// nginxVerdict runs nginx -t on main with dir as the prefix and says
// what it did: "accepts", "refuses" or "crashes".
func nginxVerdict(t *testing.T, bin, dir, main string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-t", "-p", dir+"/", "-c", main, "-e", filepath.Join(dir, "error.log"), "-g", "pid "+filepath.Join(dir, "nginx.pid")+";")
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "accepts", text
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return "refuses", text
	case errors.As(err, &exit):
		return "crashes", text + " (" + exit.String() + ")"
	}
	t.Fatalf("nginx -t: %v", err)
	return "", ""
}

// TestHostileNginxT: real nginx -t on the same files, to show where
// nginx agrees (a directory, a deep include loop, 20,000 nested blocks
// that crash it) and where Load is stricter (/dev/zero, which nginx
// reads as empty; 101 blocks deep; files past the byte caps).
func TestHostileNginxT(t *testing.T) {
	bin := nginxBinary(t)
	for _, tc := range hostiles {
		if tc.nginx == "" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			main := tc.build(t, dir)
			got, out := nginxVerdict(t, bin, dir, main)
			t.Logf("nginx %s: %s", got, out)
			// Where nginx crashes (its stack runs out), a larger stack
			// limit may make it refuse instead: either fails.
			if got != tc.nginx && !(tc.nginx == "crashes" && got == "refuses") {
				t.Errorf("nginx -t %s, want %s:\n%s", got, tc.nginx, out)
			}
		})
	}
}

// endless is a reader that never ends, counting what it gives.
type endless struct{ n int64 }

func (r *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	r.n += int64(len(p))
	return len(p), nil
}

// TestReadLimited: a reader reads at most limit+1 bytes, whatever size
// the file said it had (files of /proc say 0).
func TestReadLimited(t *testing.T) {
	for _, tc := range []struct {
		name        string
		size, limit int64
		data        int64 // bytes there; -1 for endless
		tooLarge    bool
	}{
		{name: "endless-size-0", size: 0, limit: 1000, data: -1, tooLarge: true},
		{name: "endless-size-lies-small", size: 10, limit: MaxFileBytes, data: -1, tooLarge: true},
		{name: "at-limit", size: 1000, limit: 1000, data: 1000},
		{name: "at-limit-size-0", size: 0, limit: 1000, data: 1000},
		{name: "one-over", size: 1001, limit: 1000, data: 1001, tooLarge: true},
		{name: "empty", size: 0, limit: 1000, data: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &endless{}
			var r io.Reader = src
			if tc.data >= 0 {
				r = io.LimitReader(src, tc.data)
			}
			b, err := input.ReadLimited(r, tc.size, tc.limit)
			var tl *input.TooLargeError
			if tc.tooLarge != errors.As(err, &tl) {
				t.Fatalf("err %v, want too large %v", err, tc.tooLarge)
			}
			if !tc.tooLarge && int64(len(b)) != tc.data {
				t.Errorf("read %d bytes, want %d", len(b), tc.data)
			}
			if src.n > tc.limit+1 {
				t.Errorf("took %d bytes from the reader, limit %d", src.n, tc.limit)
			}
		})
	}
}

// TestGlob: glob matches what filepath.Glob matches, in its order, and
// stops past its limit.
func TestGlob(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"conf.d/b.conf", "conf.d/a.conf", "conf.d/.h.conf", "conf.d/x.txt", "c2/a.conf", "c2/sub/z.conf", "sites/default", "x"} {
		write(t, dir, name, "")
	}
	for _, tc := range []struct {
		name, pattern string
		limit         int
		tooMany       bool
	}{
		{name: "files", pattern: "conf.d/*.conf", limit: 100},
		{name: "hidden-too", pattern: "conf.d/.*", limit: 100},
		{name: "glob-in-directory", pattern: "c*/*.conf", limit: 100},
		{name: "class", pattern: "c*/[ab].conf", limit: 100},
		{name: "directories-match", pattern: "c2/*", limit: 100},
		{name: "nothing", pattern: "none/*", limit: 100},
		{name: "file-as-directory", pattern: "x/*", limit: 100},
		{name: "deep", pattern: "*/*/*", limit: 100},
		{name: "bad-pattern", pattern: "conf.d/[", limit: 100},
		{name: "at-limit", pattern: "conf.d/*.conf", limit: 3}, // .h.conf too
		{name: "past-limit", pattern: "conf.d/*", limit: 2, tooMany: true},
		{name: "past-limit-directories", pattern: "*/*.conf", limit: 1, tooMany: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.pattern)
			got, err := glob(p, tc.limit)
			if tc.tooMany {
				if !errors.Is(err, errTooManyMatches) {
					t.Fatalf("glob: %q, %v; want too many", got, err)
				}
				return
			}
			want, wantErr := filepath.Glob(p)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("glob: %q, %v\nfilepath.Glob: %q, %v", got, err, want, wantErr)
			}
		})
	}
}
