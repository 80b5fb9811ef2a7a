package changeset

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/nginxconf"
	"github.com/stacktune/stacktune/phpfpmconf"
)

// Every kind of change has a grammar: what its target, name and value
// may be. A change set is checked against it when it is read (Validate,
// from Decode and Read) and again by apply before anything is touched
// (Check, from every target's constructor), and what apply writes (DDL,
// setting lines) is built from the parts the grammar parsed, never from
// the text of a To. The grammars are narrow on purpose: a change file is
// input that a person may edit or an attacker may write, and each kind
// carries only what stacktune's own advice needs.

// grammar is one kind's rules: check returns an error naming what is
// wrong; doc says in one line what the kind takes (for ARCHITECTURE.md,
// the README and messages).
type grammar struct {
	doc   string
	check func(c *Change) error
}

// grammars is the registry of the kinds' grammars; a kind without one is
// unknown.
var grammars = map[Kind]grammar{
	MySQLVariable: {"a variable name, and one value of the variable's type (mysqlvar.CheckValue)", checkMySQL},
	MySQLOption:   {"a startup option name, and one word", checkMySQL},
	Sysctl:        {"a sysctl name, and numbers or words separated by single blanks", checkSysctl},
	Nginx:         {"a directive in a context, its arguments read by nginxconf's lexer; none that loads code or files (include, load_module, perl, lua, js)", checkNginx},
	Systemd:       {"a .service unit, and a resource limit (Limit*: a number with a unit, infinity, or soft:hard), NUMAPolicy, or Environment=LD_PRELOAD of a system memory allocator", checkSystemd},
	Memcached:     {"one of memcached's sizing options (-m, -c, -t, -b, -R, -B, -I, -U, -C, -s), and one word", checkMemcached},
	Redis:         {"one of Redis's sizing settings (maxmemory, maxmemory-policy, maxclients, ...), and one word", checkRedis},
	Mount:         {"a mount point, the name options, and mount options", checkMount},
	PHPFPM:        {"a pool, one of its process-manager or limit settings (pm.*, request_*_timeout, rlimit_*), and one word", checkPHPFPM},
	Index:         {"schema.table, an index name, and its state from and to: absent, key parts (column[(length)] [ASC|DESC], ...), or key parts followed by ignored; never a drop of the primary key", checkIndex},
	App:           {"words on one line, for a person: apply never runs it", checkApp},
}

// Kinds are the kinds of change, each with its grammar, sorted.
func Kinds() []Kind {
	ks := make([]Kind, 0, len(grammars))
	for k := range grammars {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Grammar is the one-line description of what a kind of change takes
// ("" for an unknown kind).
func Grammar(k Kind) string { return grammars[k].doc }

// Check checks a change against its kind's grammar: the check apply
// makes again before anything is touched.
func (c *Change) Check() error {
	g, ok := grammars[c.Kind]
	if !ok {
		return fmt.Errorf("unknown kind %q", c.Kind)
	}
	for what, v := range map[string]string{"target": c.Target, "name": c.Name, "option": c.Option, "from": c.From, "to": c.To} {
		if strings.ContainsAny(v, "\n\r\x00") {
			return fmt.Errorf("the %s holds a line break or a NUL byte", what)
		}
		if len(v) > maxField {
			return fmt.Errorf("the %s is %d bytes long (at most %d)", what, len(v), maxField)
		}
	}
	return g.check(c)
}

// maxField bounds each text field of a change.
const maxField = 4096

func checkMySQL(c *Change) error {
	if !mysqlvar.ValidName(c.Name) || (c.Option != "" && !mysqlvar.ValidName(c.Option)) {
		return fmt.Errorf("%q is not a variable name", c.Name)
	}
	if c.Target != "mysqld" && c.Target != "" {
		return fmt.Errorf("the target of a MySQL setting is mysqld, not %q", c.Target)
	}
	if err := mysqlvar.CheckValue(c.Name, c.To); err != nil {
		return err
	}
	if !MyCnf.writable(Line{Key: c.FileName(), Value: c.To}) {
		return fmt.Errorf("%q cannot be written in a my.cnf drop-in", c.To)
	}
	return nil
}

// sysctlWord is one word of a sysctl value.
var sysctlWord = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

func checkSysctl(c *Change) error {
	if !plainName(c.Name, "._-") || strings.Contains(c.Name, "..") || c.Name[0] == '.' || c.Name[0] == '-' {
		return fmt.Errorf("%q is not a sysctl name", c.Name)
	}
	words := strings.Split(c.To, " ")
	if len(words) > 8 {
		return fmt.Errorf("%s: %d words (a sysctl takes at most a few)", c.Name, len(words))
	}
	for _, w := range words {
		if !sysctlWord.MatchString(w) {
			return fmt.Errorf("%s: %q is not numbers or words separated by single blanks", c.Name, c.To)
		}
	}
	if !SysctlD.writable(Line{Key: c.Name, Value: c.To}) {
		return fmt.Errorf("%q cannot be written in a sysctl.d file", c.To)
	}
	return nil
}

func checkNginx(c *Change) error {
	if c.Target == "" {
		return fmt.Errorf("%s has no context", c.Name)
	}
	return (nginxconf.Edit{Context: c.Target, Name: c.Name, Args: c.To}).Check()
}

// systemdLimits are systemd's resource-limit directives (systemd.exec,
// "Process Properties"), each with what its value counts.
var systemdLimits = map[string]string{
	"LimitCPU": "time", "LimitFSIZE": "bytes", "LimitDATA": "bytes", "LimitSTACK": "bytes",
	"LimitCORE": "bytes", "LimitRSS": "bytes", "LimitNOFILE": "count", "LimitAS": "bytes",
	"LimitNPROC": "count", "LimitMEMLOCK": "bytes", "LimitLOCKS": "count", "LimitSIGPENDING": "count",
	"LimitMSGQUEUE": "bytes", "LimitNICE": "nice", "LimitRTPRIO": "count", "LimitRTTIME": "time",
}

var (
	limitPart = map[string]*regexp.Regexp{
		"count": regexp.MustCompile(`^(infinity|[0-9]{1,20})$`),
		"bytes": regexp.MustCompile(`^(infinity|[0-9]{1,20}[KMGTPE]?)$`),
		"time":  regexp.MustCompile(`^(infinity|[0-9]{1,20}(us|ms|s|min|h|d|w)?)$`),
		"nice":  regexp.MustCompile(`^([+-]?[0-9]{1,2})$`),
	}
	// systemdUnit is a service unit's name (systemd.unit: letters,
	// digits, ":-_.\", and one '@' for a template instance).
	systemdUnit = regexp.MustCompile(`^[A-Za-z0-9:_.-]+(@[A-Za-z0-9:_.-]*)?\.service$`)
	// allocatorPreload is the one Environment a change may set: a
	// system-installed jemalloc or tcmalloc preloaded into the service,
	// as the audit advises for mysqld.
	allocatorPreload = regexp.MustCompile(`^LD_PRELOAD=/usr/lib(64)?(/[a-z0-9_-]+-linux-gnu[a-z0-9_]*)?/lib(jemalloc|tcmalloc|tcmalloc_minimal)\.so(\.[0-9]+){0,3}$`)
	numaPolicies     = []string{"default", "preferred", "bind", "interleave", "local"}
)

func checkSystemd(c *Change) error {
	if !systemdUnit.MatchString(c.Target) || len(c.Target) > 256 {
		return fmt.Errorf("%q is not a service unit", c.Target)
	}
	switch unit := c.Target; {
	case systemdLimits[c.Name] != "":
		kind := systemdLimits[c.Name]
		soft, hard, pair := strings.Cut(c.To, ":")
		if !limitPart[kind].MatchString(soft) || pair && !limitPart[kind].MatchString(hard) {
			return fmt.Errorf("%s of %s takes a limit (%s, infinity, or soft:hard), not %q", c.Name, unit, kind, c.To)
		}
	case c.Name == "NUMAPolicy":
		if !slices.Contains(numaPolicies, c.To) {
			return fmt.Errorf("NUMAPolicy of %s takes one of %s, not %q", unit, strings.Join(numaPolicies, ", "), c.To)
		}
	case c.Name == "Environment":
		if !allocatorPreload.MatchString(c.To) {
			return fmt.Errorf("Environment of %s: only LD_PRELOAD of a system jemalloc or tcmalloc is applied, not %q", unit, c.To)
		}
	default:
		return fmt.Errorf("%q is not a setting a change may make to %s: a resource limit (%s), NUMAPolicy or the allocator's Environment", c.Name, unit, strings.Join(sortedKeys(systemdLimits), ", "))
	}
	if !SystemdDropIn.writable(Line{Key: c.Name, Value: c.To}) {
		return fmt.Errorf("%q cannot be written in a systemd drop-in", c.To)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// word is one value of a service's setting: no blanks, quotes, comments
// or escapes.
var word = regexp.MustCompile(`^[A-Za-z0-9_.,:/+-]{1,256}$`)

// memcachedFlags are memcached's sizing options; true when the option
// takes no value.
var memcachedFlags = map[string]bool{"-m": false, "-c": false, "-t": false, "-b": false, "-R": false,
	"-B": false, "-I": false, "-U": false, "-s": false, "-C": true}

func checkMemcached(c *Change) error {
	bare, ok := memcachedFlags[c.Name]
	switch {
	case !ok:
		return fmt.Errorf("%q is not a memcached option a change may set (%s)", c.Name, strings.Join(sortedKeys(memcachedFlags), " "))
	case bare && c.To != "":
		return fmt.Errorf("memcached %s takes no value, not %q", c.Name, c.To)
	case !bare && (!word.MatchString(c.To) || c.To[0] == '-'):
		return fmt.Errorf("memcached %s takes one word, not %q", c.Name, c.To)
	}
	return nil
}

// redisSettings are the Redis settings a change may set: memory,
// clients, the listen backlog and timeouts (never dir, dbfilename or
// anything that writes files or loads modules).
var redisSettings = []string{"maxmemory", "maxmemory-policy", "maxmemory-samples", "maxclients", "tcp-backlog",
	"timeout", "tcp-keepalive", "hz", "io-threads", "lazyfree-lazy-eviction", "lazyfree-lazy-expire"}

func checkRedis(c *Change) error {
	if !slices.Contains(redisSettings, c.Name) {
		return fmt.Errorf("%q is not a Redis setting a change may set (%s)", c.Name, strings.Join(redisSettings, ", "))
	}
	if !word.MatchString(c.To) || c.To[0] == '-' {
		return fmt.Errorf("Redis %s takes one word, not %q", c.Name, c.To)
	}
	return nil
}

func checkMount(c *Change) error {
	if !strings.HasPrefix(c.Target, "/") || strings.ContainsAny(c.Target, " \t#") || !plainName(c.To, "-_=,") || c.Name != "options" {
		return fmt.Errorf("a mount option needs a mount point, the name options and an option")
	}
	return nil
}

func checkPHPFPM(c *Change) error {
	e := phpfpmconf.Edit{Pool: PHPFPMPool(c.Target), Key: c.Name, Value: c.To}
	if err := e.Check(); err != nil {
		return fmt.Errorf("php-fpm pool %q: %w", c.Target, err)
	}
	if !phpfpmconf.Tunable(c.Name) {
		return fmt.Errorf("php-fpm pool %q: %q is not a setting a change may make (the process manager's pm.*, request_terminate_timeout, request_slowlog_timeout, rlimit_files, rlimit_core, listen.backlog)", c.Target, c.Name)
	}
	if !word.MatchString(c.To) || c.To[0] == '-' && (len(c.To) == 1 || c.To[1] < '0' || c.To[1] > '9') {
		return fmt.Errorf("php-fpm pool %q: %s takes one word, not %q", c.Target, c.Name, c.To)
	}
	return nil
}

func checkIndex(c *Change) error {
	schema, table, ok := strings.Cut(c.Target, ".")
	if !ok || table == "" || !validIdent(table) || schema != "" && !validIdent(schema) {
		return fmt.Errorf("an index needs a schema.table target, not %q", c.Target)
	}
	if !validIdent(c.Name) {
		return fmt.Errorf("%q is not an index name", c.Name)
	}
	if err := checkIndexStates(c); err != nil {
		return fmt.Errorf("index %s on %s: %w", c.Name, c.Target, err)
	}
	return nil
}

func checkApp(c *Change) error {
	if c.Activation != "" && c.Activation != Manual {
		return fmt.Errorf("a code change is made by a person, not %s", c.Activation)
	}
	return nil
}

// validIdent: a MySQL identifier as stacktune names tables, columns and
// indexes: 1 to 64 bytes of UTF-8, no NUL, no backquote (QuoteIdent could
// quote one, but no name stacktune advises on has one), no blanks at the
// ends.
func validIdent(s string) bool {
	return s != "" && len(s) <= 64 && utf8.ValidString(s) && s == strings.TrimSpace(s) && !strings.ContainsAny(s, "`\x00") &&
		!strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// KeyPart is one part of an index key: a column, a prefix length
// (0: the whole column) and its order.
type KeyPart struct {
	Column string
	Length int
	Desc   bool
}

// maxKeyParts is MySQL's and MariaDB's limit of parts in one index.
const maxKeyParts = 32

// ParseKeyParts reads an index's key parts, "(`a`, b(10) DESC)": a
// parenthesised list of columns, each a bare name (letters, digits, _
// and $) or a backquoted one (“ for a backquote is refused), with an
// optional prefix length and an optional ASC or DESC. Nothing else may
// follow the closing parenthesis: no SQL after the list, no comments.
func ParseKeyParts(s string) ([]KeyPart, error) {
	p := keyLexer{s: s}
	p.space()
	if !p.take('(') {
		return nil, fmt.Errorf("key parts %q: want a list of columns in parentheses", s)
	}
	var out []KeyPart
	for {
		p.space()
		col, err := p.ident()
		if err != nil {
			return nil, fmt.Errorf("key parts %q: %w", s, err)
		}
		kp := KeyPart{Column: col}
		p.space()
		if p.take('(') {
			n := p.digits()
			if n == "" || len(n) > 5 {
				return nil, fmt.Errorf("key parts %q: %s: a prefix length is 1 to 5 digits", s, col)
			}
			kp.Length, _ = strconv.Atoi(n)
			if kp.Length == 0 {
				return nil, fmt.Errorf("key parts %q: %s: a prefix length of 0", s, col)
			}
			if !p.take(')') {
				return nil, fmt.Errorf("key parts %q: %s: the prefix length is not closed", s, col)
			}
			p.space()
		}
		switch w := strings.ToUpper(p.word()); w {
		case "":
		case "ASC":
		case "DESC":
			kp.Desc = true
		default:
			return nil, fmt.Errorf("key parts %q: %s is followed by %q", s, col, w)
		}
		out = append(out, kp)
		if len(out) > maxKeyParts {
			return nil, fmt.Errorf("key parts %q: more than %d columns", s, maxKeyParts)
		}
		p.space()
		if p.take(',') {
			continue
		}
		if !p.take(')') {
			return nil, fmt.Errorf("key parts %q: want ',' or ')' at byte %d", s, p.i)
		}
		break
	}
	p.space()
	if p.i != len(s) {
		return nil, fmt.Errorf("key parts %q: %q after the list of columns", s, s[p.i:])
	}
	return out, nil
}

// FormatKeyParts writes key parts as DDL takes them: "(`a`, `b`(10)
// DESC)".
func FormatKeyParts(ps []KeyPart) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteIdent(p.Column))
		if p.Length > 0 {
			fmt.Fprintf(&b, "(%d)", p.Length)
		}
		if p.Desc {
			b.WriteString(" DESC")
		}
	}
	b.WriteByte(')')
	return b.String()
}

// keyLexer reads key parts.
type keyLexer struct {
	s string
	i int
}

func (p *keyLexer) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *keyLexer) take(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *keyLexer) digits() string {
	j := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.s[j:p.i]
}

func bareByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

func (p *keyLexer) word() string {
	j := p.i
	for p.i < len(p.s) && bareByte(p.s[p.i]) {
		p.i++
	}
	return p.s[j:p.i]
}

// ident reads a bare or backquoted column name.
func (p *keyLexer) ident() (string, error) {
	if p.take('`') {
		end := strings.IndexByte(p.s[p.i:], '`')
		if end < 0 {
			return "", fmt.Errorf("an unclosed backquote at byte %d", p.i-1)
		}
		name := p.s[p.i : p.i+end]
		p.i += end + 1
		if p.i < len(p.s) && p.s[p.i] == '`' {
			return "", fmt.Errorf("a backquote inside a column name")
		}
		if !validIdent(name) {
			return "", fmt.Errorf("%q is not a column name", name)
		}
		return name, nil
	}
	w := p.word()
	if w == "" {
		rest := p.s[p.i:]
		if len(rest) > 20 {
			rest = rest[:20] + "..."
		}
		return "", fmt.Errorf("want a column name at byte %d, found %q", p.i, rest)
	}
	if strings.Trim(w, "0123456789") == "" {
		return "", fmt.Errorf("%q is a number, not a column name", w)
	}
	if len(w) > 64 {
		return "", fmt.Errorf("%q is longer than 64 characters", w)
	}
	return w, nil
}
