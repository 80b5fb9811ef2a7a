package nginxconf

import (
	"fmt"
	"strings"
)

// Edit is one directive to put in a configuration: "Name Args;" in the
// context Context, replacing the directive of the same name there (see
// the package comment for which ones count as the same). Package apply
// makes one of each nginx change of a change set.
type Edit struct {
	// Context is where the directive goes, as the audit names it:
	// "nginx http {}", "nginx upstream app {} (FILE:LINE)",
	// "nginx http>server>location / (FILE:LINE)".
	Context string
	// Name is the directive's name: "keepalive".
	Name string
	// Args is the raw argument text without the ';': `Connection ""`.
	Args string
}

// String is the directive as written into a file.
func (e Edit) String() string {
	args := trimArgs(e.Args)
	if args == "" {
		return e.Name + ";"
	}
	return e.Name + " " + args + ";"
}

// trimArgs trims white space around arguments, except a blank that a
// backslash escapes ("a\ " ends with an escaped space).
func trimArgs(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	i := len(s)
	for i > 0 && isSpace(s[i-1]) {
		i--
	}
	bs := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		bs++
	}
	if bs%2 == 1 && i < len(s) {
		i++
	}
	return s[:i]
}

// directiveName: nginx's directive names are lower-case letters,
// digits and '_'.
func directiveName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// loadsCode reports whether a directive makes nginx read other
// configuration or load or run code: include, load_module, and the
// embedded languages' directives (perl, Lua, njs).
func loadsCode(name string) bool {
	switch {
	case name == "include", name == "load_module", name == "env", name == "ssl_engine",
		strings.HasPrefix(name, "perl"), strings.HasPrefix(name, "lua_"), strings.Contains(name, "_by_lua"),
		strings.HasPrefix(name, "js_"):
		return true
	}
	return false
}

// Check validates an edit's name and arguments: a directive name that
// loads nothing, and arguments that nginx's lexer reads as words (no ';',
// braces or comments).
func (e Edit) Check() error {
	if !directiveName(e.Name) {
		return fmt.Errorf("%q is not a directive name", e.Name)
	}
	if loadsCode(e.Name) {
		return fmt.Errorf("%s loads code or other files: an edit may not set it", e.Name)
	}
	if _, err := words(e.Args); err != nil {
		return fmt.Errorf("%s: arguments %q: %w", e.Name, e.Args, err)
	}
	return nil
}
