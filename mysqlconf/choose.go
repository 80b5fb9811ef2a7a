package mysqlconf

import (
	"fmt"
	"path/filepath"
	"strings"
)

// choose picks the drop-in: DropInName in the "!includedir" directory
// whose file of that name the server would read last, and says why.
func (c *Config) choose() {
	p := c.Process
	if p.NoDefaults {
		c.Why = fmt.Sprintf("my.cnf drop-in: none: the server reads no option file (its command line starts with --no-defaults, pid %d) and takes its settings from its command line; give --mysql-conf only for a file its next start reads", p.PID)
		return
	}
	var best *Include
	bestPos := 0
	for _, in := range c.includes {
		if !in.Dir {
			continue
		}
		pos := in.dropInPos(DropInName)
		if best == nil || pos > bestPos || pos == bestPos && depth(in) < depth(best) {
			best, bestPos = in, pos
		}
	}
	if best == nil {
		c.Why = "my.cnf drop-in: none: " + c.noDir()
		return
	}
	c.DropIn, c.Via, c.dropPos = filepath.Join(best.Path, DropInName), best, bestPos
	c.Why = fmt.Sprintf("my.cnf drop-in: %s (the server reads %s through %s; found from %s)", c.DropIn, best.Path, best.Chain(), c.foundFrom())
}

// noDir says that the server's files include no directory, and what to
// do.
func (c *Config) noDir() string {
	if len(c.Files) == 0 {
		return fmt.Sprintf("the server reads no option file that exists (found from %s); give --mysql-conf", c.foundFrom())
	}
	first := c.Files[0]
	dir := filepath.Join(filepath.Dir(first), "stacktune.d")
	return fmt.Sprintf("the server reads %s (found from %s) and includes no directory with '!includedir': add '!includedir %s' as the last line of %s and give --mysql-conf %s",
		strings.Join(c.Files, ", "), c.foundFrom(), dir, first, filepath.Join(dir, DropInName))
}

// foundFrom says how the files were found: the server's command line,
// or its binary's search order.
func (c *Config) foundFrom() string {
	p := c.Process
	if p.DefaultsFile != "" {
		return fmt.Sprintf("its command line --defaults-file=%s, pid %d", p.DefaultsFile, p.PID)
	}
	return fmt.Sprintf("the search order of %s --help --verbose (%s), pid %d", p.Exe, strings.Join(c.Search.Files, " "), p.PID)
}

func depth(in *Include) int {
	n := 0
	for f := in; f != nil; f = f.From {
		n++
	}
	return n
}

// Given makes path the drop-in (the --mysql-conf the user gave) and
// says in Why whether the server reads it.
func (c *Config) Given(path string) {
	path = filepath.Clean(path)
	c.DropIn, c.Via, c.dropPos = path, nil, 0
	if c.Process == nil {
		c.Guess = false
		c.Why = fmt.Sprintf("my.cnf drop-in: %s (given by --mysql-conf; the server's process is not on this host, so whether it reads the file is not known)", path)
		return
	}
	if pos, ok := c.starts[path]; ok {
		c.dropPos = pos
		c.Why = fmt.Sprintf("my.cnf drop-in: %s (given by --mysql-conf; the server reads it, found from %s)", path, c.foundFrom())
		return
	}
	for _, in := range c.includes {
		if in.Dir && in.Path == filepath.Dir(path) && strings.HasSuffix(path, ".cnf") {
			if pos := in.dropInPos(filepath.Base(path)); pos > c.dropPos {
				c.dropPos, c.Via = pos, in
			}
		}
	}
	if c.Via != nil {
		c.Why = fmt.Sprintf("my.cnf drop-in: %s (given by --mysql-conf; the server reads %s through %s; found from %s)", path, c.Via.Path, c.Via.Chain(), c.foundFrom())
		return
	}
	c.Why = fmt.Sprintf("my.cnf drop-in: %s (given by --mysql-conf; WARNING: the server does not read it: its option files are %s (found from %s) and no '!includedir' names %s)",
		path, orNone(strings.Join(c.Files, ", ")), c.foundFrom(), filepath.Dir(path))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Reads reports whether the server reads the drop-in (false for a
// guess, or a given path it does not read).
func (c *Config) Reads() bool { return c.dropPos > 0 }

// After lists the settings of key that the server reads after the
// drop-in, so that they win over it: in a file read later, later in the
// file that includes its directory, or on its command line.
func (c *Config) After(key string) []Setting {
	if c.dropPos == 0 {
		return nil
	}
	var out []Setting
	for _, s := range c.Settings {
		if s.pos >= c.dropPos && s.File != c.DropIn && sameOption(s.Key, key) {
			out = append(out, s)
		}
	}
	return out
}

// Override says which setting the server reads after the drop-in wins
// over key's there ("" when none): the last of After.
func (c *Config) Override(key string) string {
	after := c.After(key)
	if len(after) == 0 {
		return ""
	}
	s := after[len(after)-1].String()
	if after[len(after)-1].File == "" && c.Process != nil {
		s = fmt.Sprintf("the server's command line (pid %d) sets %s", c.Process.PID, strings.TrimPrefix(s, "its command line sets "))
	}
	return s + ", read after " + c.DropIn
}
