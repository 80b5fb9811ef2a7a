package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/stacktune/stacktune/input"
)

// within runs load and fails the test if it has not returned after a
// generous bound (a hang, or a walk without end); unblock, if set, is
// called then to free what load is stuck on.
func within(t *testing.T, load func() error, unblock func()) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- load() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		if unblock != nil {
			unblock()
		}
		t.Fatal("still loading after 20 s")
		return nil
	}
}

// openWriter frees a reader blocked opening the FIFO at path.
func openWriter(path string) func() {
	return func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
}

// TestLoadHostileFiles gives Load paths that are not scenario files: a
// FIFO nobody writes (whose open used to block for ever), a directory,
// a file past MaxFileSize (sparse: it costs no disk), and the same as data
// files. Each is refused at once, with what it is or the bound it is past.
// (/dev/zero, which Load used to read without end, is a row of
// cmd/stacktune's TestFileInputsHostile, where a child process's memory is
// measured.)
func TestLoadHostileFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxFileSize+1); err != nil {
		t.Fatal(err)
	}
	bigData := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(bigData, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(bigData, MaxDataFileSize+1); err != nil {
		t.Fatal(err)
	}
	withData := func(name, data string) string {
		p := filepath.Join(dir, name)
		src := "base_url: http://h/\ndata: {ids: {file: " + data + "}}\nsteps: [{url: '/{{ids}}'}]\n"
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path string
		want       string // the whole error
		fifo       string // a FIFO the load may block on
	}{
		{name: "scenario is a FIFO", path: fifo, fifo: fifo,
			want: fifo + ": cannot read: a named pipe (FIFO), not a regular file"},
		{name: "scenario is a directory", path: dir,
			want: dir + ": cannot read: a directory, not a regular file"},
		{name: "scenario past MaxFileSize", path: big,
			want: big + ": larger than 1 MiB (scenario.MaxFileSize): a scenario is a few KB: put long lists in data files"},
		{name: "data file is a FIFO", path: withData("fifo.yaml", fifo), fifo: fifo,
			want: dir + "/fifo.yaml:2: data.ids.file: cannot read " + fifo + ": a named pipe (FIFO), not a regular file"},
		{name: "data file is /dev/zero", path: withData("zero.yaml", "/dev/zero"),
			want: dir + "/zero.yaml:2: data.ids.file: cannot read /dev/zero: a character device, not a regular file"},
		{name: "data file past MaxDataFileSize", path: withData("bigdata.yaml", "big.txt"),
			want: dir + "/bigdata.yaml:2: data.ids.file: cannot read big.txt: larger than 64 MiB (scenario.MaxDataFileSize)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var unblock func()
			if tt.fifo != "" {
				unblock = openWriter(tt.fifo)
			}
			err := within(t, func() error { _, err := Load(tt.path); return err }, unblock)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got\n%v\nwant\n%s", err, tt.want)
			}
		})
	}
	err := within(t, func() error { _, err := Load(fifo); return err }, openWriter(fifo))
	if !errors.Is(err, input.ErrNotRegular) {
		t.Errorf("errors.Is(%v, input.ErrNotRegular) = false", err)
	}
	_, err = Load(big)
	if !errors.Is(err, input.ErrTooLarge) {
		t.Errorf("errors.Is(%v, input.ErrTooLarge) = false", err)
	}
}

// TestLoadBounds feeds scenarios past each of the other bounds: more
// steps than MaxSteps (a generated 17 MB file of 500,000 steps took
// 2.1 GB), a data file of more values than MaxListValues, lists past
// MaxDataValues together, and data files past MaxDataBytes together (40
// lists naming one 63 MB file ran out of memory at 14.8 GB).
func TestLoadBounds(t *testing.T) {
	lines := func(n int) []byte { return []byte(strings.Repeat("a\n", n)) }
	blank := []byte(strings.Repeat(" ", 40<<20))
	files := map[string][]byte{
		"many.txt":  lines(MaxListValues + 1),
		"900k.txt":  lines(900_000),
		"blank.txt": blank,
	}
	readFile := func(path string, limit int64) ([]byte, error) {
		b, ok := files[path]
		switch {
		case !ok:
			return nil, os.ErrNotExist
		case int64(len(b)) > limit:
			return nil, &input.TooLargeError{Path: path, Limit: limit}
		}
		return b, nil
	}
	lists := func(n int, file string) string {
		var b strings.Builder
		b.WriteString("base_url: http://h/\ndata:\n")
		for i := range n {
			fmt.Fprintf(&b, "  l%d: {file: %s}\n", i, file)
		}
		return b.String() + "steps: [{url: /}]\n"
	}
	tests := []struct {
		name, src string
		want      string // a line of the error
	}{
		{name: "steps past MaxSteps",
			src:  "base_url: http://h/\nsteps:\n" + strings.Repeat("  - {url: /}\n", MaxSteps+1),
			want: "s.yaml:3: steps: 10001 steps, more than 10000 (scenario.MaxSteps)"},
		{name: "a data file past MaxListValues", src: lists(1, "many.txt"),
			want: "s.yaml:3: data.l0.file: many.txt has more than 1000000 values (scenario.MaxListValues)"},
		{name: "lists past MaxDataValues together", src: lists(5, "900k.txt"),
			want: "s.yaml:7: data.l4.file: takes the values of all data lists together past 4000000 (scenario.MaxDataValues)"},
		{name: "data files past MaxDataBytes together", src: lists(4, "blank.txt"),
			want: "s.yaml:6: data.l3.file: cannot read blank.txt: it takes the data files of all lists together past 128 MiB (scenario.MaxDataBytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("s.yaml", []byte(tt.src), readFile)
			if err == nil || !strings.Contains("\n"+err.Error()+"\n", "\n"+tt.want+"\n") {
				t.Fatalf("got\n%v\nwant a line\n%s", err, tt.want)
			}
		})
	}
}

// mergeBomb is a YAML file of a few KB whose merge keys stand for
// fanout^levels mappings: each level merges the one before it fanout
// times.
func mergeBomb(levels, fanout int) string {
	var b strings.Builder
	b.WriteString("x-l0: &l0 {k: v}\n")
	for i := 1; i <= levels; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), fanout), ", ")
		fmt.Fprintf(&b, "x-l%d: &l%d {<<: [%s]}\n", i, i, refs)
	}
	fmt.Fprintf(&b, "base_url: http://h/\nheaders: {<<: *l%d}\nsteps: [{url: /}]\n", levels)
	return b.String()
}

// TestLoadAliasBomb loads YAML whose aliases and merge keys stand for far
// more than the file holds: the merge keys fifteen levels deep used to
// spin the CPU without end; each is refused at once, at the alias that
// goes past the bound.
func TestLoadAliasBomb(t *testing.T) {
	aliasList := "x-a: &a [" + strings.Repeat("x, ", 999) + "x]\n" +
		"x-b: &b [" + strings.TrimSuffix(strings.Repeat("*a, ", 200), ", ") + "]\n" +
		"base_url: http://h/\nsteps: [{url: /}]\n"
	longValue := "x-a: &a " + strings.Repeat("x", 1<<20-200) + "\n" +
		"x-b: &b [" + strings.TrimSuffix(strings.Repeat("*a, ", 17), ", ") + "]\n" +
		"base_url: http://h/\nsteps: [{url: /}]\n"
	tests := []struct {
		name, src, want string
	}{
		{name: "merge keys fifteen levels deep", src: mergeBomb(15, 8),
			want: "s.yaml:6: aliases and merge keys (<<) expand to more than 100000 nodes (scenario.MaxAliasNodes) by this alias (*l4); write the fields out or share less"},
		{name: "a list of aliases of a list", src: aliasList,
			want: "s.yaml:2: aliases and merge keys (<<) expand to more than 100000 nodes (scenario.MaxAliasNodes) by this alias (*a); write the fields out or share less"},
		{name: "aliases of a long value", src: longValue,
			want: "s.yaml:2: aliases and merge keys (<<) expand to more than 16777216 bytes of values (scenario.MaxAliasBytes) by this alias (*a); write the fields out or share less"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := within(t, func() error { _, err := parse("s.yaml", []byte(tt.src), fakeFiles); return err }, nil)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got\n%v\nwant\n%s", err, tt.want)
			}
		})
	}
	// A few merges, as a real scenario shares its headers, are fine.
	if _, err := parse("s.yaml", []byte(mergeBomb(3, 2)), fakeFiles); err != nil {
		t.Errorf("a few merges: %v", err)
	}
}

// TestLoadTOMLNesting feeds TOML nested past MaxTOMLNesting in each way
// TOML nests (60,000 nested '[' used to take 9.5 GB): each is refused
// before the decoder sees it, with the line; brackets in strings and
// comments do not count, and a file just within the bound reaches the
// decoder.
func TestLoadTOMLNesting(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	tests := []struct {
		name, src string
		want      string // the whole error, "" for no nesting error
	}{
		{name: "arrays", src: "base_url = 'http://h/'\nx = " + deep("[", "]", 64),
			want: "s.toml:2: nested deeper than 64 levels (scenario.MaxTOMLNesting: tables, dotted keys, arrays and inline tables)"},
		{name: "60,000 nested [", src: "x = " + strings.Repeat("[", 60_000),
			want: "s.toml:1: nested deeper than 64 levels (scenario.MaxTOMLNesting: tables, dotted keys, arrays and inline tables)"},
		{name: "inline tables", src: "\n\nx = " + deep("{a = ", "}", 64),
			want: "s.toml:3: nested deeper than 64 levels (scenario.MaxTOMLNesting: tables, dotted keys, arrays and inline tables)"},
		{name: "dotted key", src: "a" + strings.Repeat(".a", 64) + " = 1",
			want: "s.toml:1: nested deeper than 64 levels (scenario.MaxTOMLNesting: tables, dotted keys, arrays and inline tables)"},
		{name: "table header", src: "[[steps]]\nurl = '/'\n[a" + strings.Repeat(".a", 64) + "]",
			want: "s.toml:3: nested deeper than 64 levels (scenario.MaxTOMLNesting: tables, dotted keys, arrays and inline tables)"},
		{name: "within the bound", src: "x = " + deep("[", "]", 62)},
		{name: "brackets in strings and comments", src: "x = '" + strings.Repeat("[", 100) + "' # " + strings.Repeat("{", 100) +
			"\ny = \"\"\"\n" + strings.Repeat("[", 100) + "\n\"\"\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			within(t, func() error { _, err = parse("s.toml", []byte(tt.src), fakeFiles); return nil }, nil)
			switch {
			case tt.want == "" && err != nil && strings.Contains(err.Error(), "nested deeper"):
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("got\n%v\nwant\n%s", err, tt.want)
			}
		})
	}
}

// tomlDepth is the depth of a decoded TOML value as tomlNesting counts
// it: the document is level 1, each table and array one more.
func tomlDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			d = max(d, tomlDepth(c))
		}
	case []map[string]any:
		for _, c := range v {
			d = max(d, tomlDepth(c))
		}
	case []any:
		for _, c := range v {
			d = max(d, tomlDepth(c))
		}
	default:
		return 0
	}
	return d + 1
}

// FuzzTOMLNesting checks the scan that bounds a TOML scenario's depth
// against the decoder: on any text the decoder accepts, the scan follows
// it to the end and finds it at least as deep as it decodes.
func FuzzTOMLNesting(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.toml")
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
	}
	for _, s := range []string{
		"a = [[1, [2]], {b = {c = [3]}}]", "a.b.c = 1\n[x.y]\nz = 2\n[[p.q]]\nr = {s.t = [1]}",
		"a = \"\"\"\n[[[\"\"\"\"\"\nb = '''x'''''", "d = 1979-05-27 07:32:00Z\ne = 1979-05-27T07:32:00.5-07:00 # [[",
		"\"q.k\".'l k' = [\n  1, # c\n  2,\n]\n", "t = {a = 1,\n b = 2, }", "a = \"\\\"[\"\nb = 'x\\'", "[ a . b ]\n[[ c ]]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1024 {
			return // the decoder's cost grows with the square of the depth
		}
		_, deepest, stopped := tomlNesting(src, 1<<30)
		var doc map[string]any
		if _, err := toml.Decode(src, &doc); err != nil {
			return
		}
		if stopped {
			t.Fatalf("the scan stopped on text the decoder accepts:\n%s", src)
		}
		if d := tomlDepth(doc); d > deepest {
			t.Fatalf("the scan found depth %d, the decoder %d:\n%s", deepest, d, src)
		}
	})
}
