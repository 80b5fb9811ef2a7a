package phpfpmconf

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/input"
)

// Bounds of Load.
const (
	MaxFileBytes = 1 << 20
	MaxFiles     = 256
	MaxLines     = 100000
	MaxPools     = 1000
)

// Setting is one "key = value" line.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	File  string `json:"file"`
	Line  int    `json:"line"`
}

// Pool is one pool section; a pool's settings may be spread over
// several files (later ones win, as in PHP-FPM).
type Pool struct {
	Name string `json:"name"`
	// File and Line are where the pool's first section header is.
	File string `json:"file"`
	Line int    `json:"line"`
	// Settings are the last value of each key, by key as written (lower
	// case: PHP-FPM's keys are).
	Settings map[string]Setting `json:"settings"`
	// last is where the pool's last line is, per file: an edit that adds
	// a key goes after it.
	last map[string]int
}

// Config is a loaded configuration.
type Config struct {
	Main string `json:"main"`
	// Files are every file read, the main one first.
	Files  []string           `json:"files"`
	Global map[string]Setting `json:"global"`
	Pools  []*Pool            `json:"pools"`

	content map[string][]byte
	lines   int
}

// Defaults are PHP-FPM's values of the pool settings stacktune reads,
// for a pool that does not set them (php-fpm.conf(5), PHP 8.2's
// www.conf).
var Defaults = map[string]string{
	"pm.max_requests":           "0",
	"request_terminate_timeout": "0",
	"pm.process_idle_timeout":   "10s",
	"listen.backlog":            "511",
	"request_slowlog_timeout":   "0",
	"pm.status_path":            "",
	"ping.path":                 "",
}

// Load reads main and the files it includes.
func Load(main string) (*Config, error) {
	c := &Config{Main: main, Global: map[string]Setting{}, content: map[string][]byte{}}
	if err := c.read(main, 0); err != nil {
		return nil, err
	}
	return c, nil
}

// Parse reads one file's text as a whole configuration without includes
// (tests, fuzzing).
func Parse(name string, data []byte) (*Config, error) {
	c := &Config{Main: name, Global: map[string]Setting{}, content: map[string][]byte{}}
	if err := c.parse(name, data, -1); err != nil {
		return nil, err
	}
	return c, nil
}

// read loads one file; depth counts include levels.
func (c *Config) read(path string, depth int) error {
	if len(c.Files) >= MaxFiles {
		return fmt.Errorf("%s: more than %d files included", c.Main, MaxFiles)
	}
	b, err := input.ReadFile(path, MaxFileBytes)
	if errors.Is(err, input.ErrTooLarge) {
		return fmt.Errorf("%w (phpfpmconf.MaxFileBytes)", err)
	}
	if err != nil {
		return err
	}
	return c.parse(path, b, depth)
}

// parse reads the lines of one file; depth < 0 follows no include.
func (c *Config) parse(path string, b []byte, depth int) error {
	if _, dup := c.content[path]; dup {
		return fmt.Errorf("%s is included twice", path)
	}
	c.Files = append(c.Files, path)
	c.content[path] = b
	section := "global"
	var pool *Pool
	var includes []Setting
	for i, raw := range strings.Split(string(b), "\n") {
		c.lines++
		if c.lines > MaxLines {
			return fmt.Errorf("%s: more than %d lines in all", path, MaxLines)
		}
		n := i + 1
		s := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if s == "" || s[0] == ';' || s[0] == '#' {
			continue
		}
		if strings.ContainsRune(s, 0) {
			return fmt.Errorf("%s:%d: a NUL byte", path, n)
		}
		if s[0] == '[' {
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return fmt.Errorf("%s:%d: a section header without ']'", path, n)
			}
			section = strings.TrimSpace(s[1:end])
			if section == "" {
				return fmt.Errorf("%s:%d: an empty section name", path, n)
			}
			pool = nil
			if section != "global" {
				pool = c.Pool(section)
				if pool == nil {
					if len(c.Pools) >= MaxPools {
						return fmt.Errorf("%s:%d: more than %d pools", path, n, MaxPools)
					}
					pool = &Pool{Name: section, File: path, Line: n, Settings: map[string]Setting{}, last: map[string]int{}}
					c.Pools = append(c.Pools, pool)
				}
				pool.last[path] = n
			}
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("%s:%d: %q is not key = value", path, n, cut(s, 60))
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if !ValidKey(k) {
			return fmt.Errorf("%s:%d: %q is not a setting name", path, n, cut(k, 60))
		}
		v = unquote(stripComment(strings.TrimSpace(v)))
		st := Setting{Key: k, Value: v, File: path, Line: n}
		if pool == nil {
			if k == "include" {
				includes = append(includes, st)
			}
			c.Global[k] = st
			continue
		}
		pool.Settings[k] = st
		pool.last[path] = n
	}
	if depth < 0 {
		return nil
	}
	for _, inc := range includes {
		pat := inc.Value
		if !filepath.IsAbs(pat) {
			pat = filepath.Join(filepath.Dir(c.Main), pat)
		}
		matches, err := filepath.Glob(pat)
		if err != nil {
			return fmt.Errorf("%s:%d: include %q: %w", inc.File, inc.Line, inc.Value, err)
		}
		sort.Strings(matches)
		for _, m := range matches {
			if err := c.read(m, depth+1); err != nil {
				return fmt.Errorf("%s:%d: include: %w", inc.File, inc.Line, err)
			}
		}
	}
	return nil
}

// stripComment removes a trailing " ; comment" from an unquoted value.
func stripComment(v string) string {
	if strings.HasPrefix(v, `"`) {
		return v
	}
	if i := strings.Index(v, ";"); i >= 0 {
		return strings.TrimSpace(v[:i])
	}
	return v
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' {
		if end := strings.LastIndexByte(v, '"'); end > 0 {
			return v[1:end]
		}
	}
	return v
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// ValidKey reports whether k is a setting name: letters, digits, '.',
// '_', '-', with at most one bracketed part of the same and '/'
// (php_admin_value[memory_limit], env[PATH]).
func ValidKey(k string) bool {
	if k == "" || len(k) > 256 {
		return false
	}
	base, rest, bracket := strings.Cut(k, "[")
	if bracket && (!strings.HasSuffix(rest, "]") || !plain(strings.TrimSuffix(rest, "]"), "._-/")) {
		return false
	}
	return plain(base, "._-")
}

func plain(s, extra string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte(extra, ch) >= 0) {
			return false
		}
	}
	return true
}

// tunable are the pool settings a change may make: the process
// manager's and the request limits. Never the ones that load code
// (php_admin_value[auto_prepend_file]), name files or users, or listen
// elsewhere.
var tunable = []string{"pm", "pm.max_children", "pm.start_servers", "pm.min_spare_servers", "pm.max_spare_servers",
	"pm.max_spawn_rate", "pm.process_idle_timeout", "pm.max_requests", "request_terminate_timeout",
	"request_terminate_timeout_track_finished", "request_slowlog_timeout", "rlimit_files", "rlimit_core", "listen.backlog"}

// Tunable reports whether a change may set the pool setting k: the
// process manager's settings and the request and resource limits.
func Tunable(k string) bool { return slices.Contains(tunable, k) }

// Pool returns the pool named name, nil when there is none.
func (c *Config) Pool(name string) *Pool {
	for _, p := range c.Pools {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Value is a pool setting as PHP-FPM applies it: the pool's value with
// $pool replaced by the pool's name, else the default (Defaults); ok is
// false when neither has it.
func (p *Pool) Value(key string) (string, bool) {
	if s, ok := p.Settings[key]; ok {
		return strings.ReplaceAll(s.Value, "$pool", p.Name), true
	}
	v, ok := Defaults[key]
	return v, ok
}

// Int is a numeric pool setting.
func (p *Pool) Int(key string) (int64, bool) {
	v, ok := p.Value(key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil
}

// Seconds reads a time setting ("30s", "5m", "1h", "2d", or a number of
// seconds) as PHP-FPM does; ok is false when it is absent or malformed.
func (p *Pool) Seconds(key string) (time.Duration, bool) {
	v, ok := p.Value(key)
	if !ok {
		return 0, false
	}
	return ParseSeconds(v)
}

// ParseSeconds reads a PHP-FPM time value.
func ParseSeconds(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	unit := time.Second
	switch v[len(v)-1] {
	case 's':
		v = v[:len(v)-1]
	case 'm':
		unit, v = time.Minute, v[:len(v)-1]
	case 'h':
		unit, v = time.Hour, v[:len(v)-1]
	case 'd':
		unit, v = 24*time.Hour, v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > int64(365*24*time.Hour/unit) {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// Listen is where a pool accepts connections: network "unix" and a path,
// or "tcp" and host:port ("9000" alone is every address: 127.0.0.1).
func (p *Pool) Listen() (network, addr string, ok bool) {
	v, ok := p.Value("listen")
	if !ok || v == "" {
		return "", "", false
	}
	if strings.HasPrefix(v, "/") {
		return "unix", v, true
	}
	if _, err := strconv.Atoi(v); err == nil {
		return "tcp", "127.0.0.1:" + v, true
	}
	i := strings.LastIndex(v, ":")
	if i < 0 || i == len(v)-1 {
		return "", "", false
	}
	host, port := v[:i], v[i+1:]
	if _, err := strconv.Atoi(port); err != nil {
		return "", "", false
	}
	host = strings.Trim(host, "[]")
	if host == "" || host == "0.0.0.0" || host == "*" {
		host = "127.0.0.1"
	}
	if host == "::" {
		host = "::1"
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return "tcp", host + ":" + port, true
}

// Content returns a file's bytes as read.
func (c *Config) Content(path string) []byte { return c.content[path] }

// Edit sets Key of Pool to Value.
type Edit struct {
	Pool, Key, Value string
}

// Check refuses an edit that cannot be written as one line of a pool.
func (e Edit) Check() error {
	switch {
	case e.Pool == "" || e.Pool == "global" || strings.ContainsAny(e.Pool, "[]\n\r\x00;"):
		return fmt.Errorf("%q is not a pool name", e.Pool)
	case !ValidKey(e.Key):
		return fmt.Errorf("%q is not a setting name", e.Key)
	case strings.ContainsAny(e.Value, "\n\r\x00\";"):
		return fmt.Errorf("%s: %q cannot be written as a value", e.Key, e.Value)
	}
	return nil
}

// ErrNoPool is returned by Apply for an edit of a pool the
// configuration does not have.
var ErrNoPool = errors.New("no such pool")

// Current is the value of an edit's key as the files set it now (found
// false when they do not set it: PHP-FPM's default applies).
func (c *Config) Current(e Edit) (value string, found bool, err error) {
	p := c.Pool(e.Pool)
	if p == nil {
		return "", false, fmt.Errorf("pool %s: %w", e.Pool, ErrNoPool)
	}
	s, ok := p.Settings[e.Key]
	return s.Value, ok, nil
}

// Apply returns the new contents of the files the edits change: a key
// the pool sets is replaced on its (last) line; a key it does not set is
// added after the pool's last line in the file of its section header.
// Every other byte stays as it was.
func (c *Config) Apply(edits []Edit) (map[string][]byte, error) {
	type repl struct {
		line  int
		text  string
		after bool // insert after line instead of replacing it
	}
	byFile := map[string][]repl{}
	for _, e := range edits {
		if err := e.Check(); err != nil {
			return nil, err
		}
		p := c.Pool(e.Pool)
		if p == nil {
			return nil, fmt.Errorf("pool %s: %w", e.Pool, ErrNoPool)
		}
		text := e.Key + " = " + e.Value
		if s, ok := p.Settings[e.Key]; ok {
			byFile[s.File] = append(byFile[s.File], repl{line: s.Line, text: text})
			continue
		}
		byFile[p.File] = append(byFile[p.File], repl{line: p.last[p.File], text: text, after: true})
	}
	out := map[string][]byte{}
	for file, rs := range byFile {
		lines := strings.SplitAfter(string(c.content[file]), "\n")
		var b bytes.Buffer
		for i, l := range lines {
			n := i + 1
			replaced := false
			for _, r := range rs {
				if r.line == n && !r.after {
					end := ""
					if strings.HasSuffix(l, "\r\n") {
						end = "\r\n"
					} else if strings.HasSuffix(l, "\n") {
						end = "\n"
					}
					b.WriteString(r.text + end)
					replaced = true
					break
				}
			}
			if !replaced {
				b.WriteString(l)
			}
			for _, r := range rs {
				if r.line == n && r.after {
					if !strings.HasSuffix(l, "\n") {
						b.WriteString("\n")
					}
					b.WriteString(r.text + "\n")
				}
			}
		}
		out[file] = b.Bytes()
	}
	return out, nil
}
