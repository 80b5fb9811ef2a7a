package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"gopkg.in/yaml.v3"
)

// Both formats are validated from the same tree: YAML's own nodes, which
// carry lines, and for TOML a tree of yaml.Nodes built from the decoded
// document with the line of each key found in the source.

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func yamlNodes(name string, src []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		msg := err.Error()
		line := 0
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
			line = guessYAMLErrLine(msg, src)
		}
		return nil, Errors{{File: name, Line: max(line, 1), Msg: "invalid YAML: " + msg}}
	}
	if fe := aliasBomb(name, &doc); fe != nil {
		return nil, Errors{fe}
	}
	return &doc, nil
}

// guessYAMLErrLine finds the line of the YAML errors that carry none: bad
// bytes and undefined aliases. It returns 1 when it cannot tell.
func guessYAMLErrLine(msg string, src []byte) int {
	lineOf := func(off int) int { return 1 + strings.Count(string(src[:off]), "\n") }
	switch {
	case strings.Contains(msg, "UTF-8"), strings.Contains(msg, "UTF-16"):
		for off := 0; off < len(src); {
			r, size := utf8.DecodeRune(src[off:])
			if r == utf8.RuneError && size <= 1 {
				return lineOf(off)
			}
			off += size
		}
	case strings.Contains(msg, "control characters"):
		for off, r := range string(src) {
			if r != '\t' && r != '\n' && r != '\r' && (r < 0x20 || (r >= 0x7f && r <= 0x9f && r != 0x85) ||
				r == 0xfffe || r == 0xffff || (r >= 0xd800 && r <= 0xdfff)) {
				return lineOf(off)
			}
		}
	case strings.HasPrefix(msg, "unknown anchor '"):
		anchor := strings.TrimSuffix(strings.TrimPrefix(msg, "unknown anchor '"), "' referenced")
		if i := strings.Index(string(src), "*"+anchor); i >= 0 {
			return lineOf(i)
		}
	}
	return 1
}

func tomlNodes(name string, src []byte) (*yaml.Node, error) {
	if line, _, _ := tomlNesting(string(src), MaxTOMLNesting); line > 0 {
		return nil, Errors{{File: name, Line: line, Msg: fmt.Sprintf("nested deeper than %d levels (scenario.MaxTOMLNesting: tables, dotted keys, arrays and inline tables)", MaxTOMLNesting)}}
	}
	var doc map[string]any
	md, err := toml.Decode(string(src), &doc)
	if err != nil {
		var pe toml.ParseError
		var ppe *toml.ParseError
		switch {
		case errors.As(err, &pe):
		case errors.As(err, &ppe):
			pe = *ppe
		default:
			return nil, Errors{{File: name, Line: 1, Msg: "invalid TOML: " + err.Error()}}
		}
		line := pe.Position.Line
		if off := pe.Position.Start; off > 0 && off <= len(src) {
			// The decoder counts a newline it stopped at as the next line.
			line = 1 + bytes.Count(src[:off], []byte("\n"))
		}
		return nil, Errors{{File: name, Line: max(line, 1), Msg: "invalid TOML: " + pe.Message}}
	}
	lines := tomlKeyLines(string(src), &md)
	return tomlNode(doc, "", lines, 1), nil
}

// tomlKeyLines maps field paths ("steps[2].expect.status") to the line
// defining them. The TOML decoder lists keys in document order without
// their positions, so each key is searched for in the source from where the
// previous one was found; a key it cannot find gets its parent's line.
func tomlKeyLines(src string, md *toml.MetaData) map[string]int {
	lines := map[string]int{}
	arrays := map[string]int{} // array-of-tables key → tables so far
	pos := 0
	for _, k := range md.Keys() {
		path := ""
		for i := range k {
			path = sub(path, k[i])
			if md.Type(k[:i+1]...) == "ArrayHash" {
				raw := toml.Key(k[:i+1]).String()
				if i == len(k)-1 {
					arrays[raw]++
				}
				path = index(path, max(arrays[raw]-1, 0))
			}
		}
		if off := findTOMLKey(src, pos, k[len(k)-1]); off >= 0 {
			pos = off + len(k[len(k)-1])
			lines[path] = 1 + strings.Count(src[:off], "\n")
		}
	}
	return lines
}

// findTOMLKey returns the offset of the next occurrence of key at or after
// from that looks like a key (bare or quoted, before '=', '.', ']'), or -1.
func findTOMLKey(src string, from int, key string) int {
	if key == "" {
		return -1
	}
	before := func(c byte) bool { return strings.IndexByte(" \t\n[.{,\"'", c) >= 0 }
	after := func(c byte) bool { return strings.IndexByte(" \t=.]\"'", c) >= 0 }
	for from < len(src) {
		i := strings.Index(src[from:], key)
		if i < 0 {
			return -1
		}
		off := from + i
		end := off + len(key)
		if (off == 0 || before(src[off-1])) && end < len(src) && after(src[end]) {
			return off
		}
		from = off + 1
	}
	return -1
}

func tomlNode(v any, path string, lines map[string]int, line int) *yaml.Node {
	if l := lines[path]; l > 0 {
		line = l
	}
	scalar := func(tag, value string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value, Line: line}
	}
	switch v := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		lineOf := func(k string) int {
			if l := lines[sub(path, k)]; l > 0 {
				return l
			}
			if l := lines[index(sub(path, k), 0)]; l > 0 {
				return l
			}
			return line
		}
		sort.Slice(keys, func(i, j int) bool {
			li, lj := lineOf(keys[i]), lineOf(keys[j])
			if li != lj {
				return li < lj
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			kl := lineOf(k)
			n.Content = append(n.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: kl},
				tomlNode(v[k], sub(path, k), lines, kl))
		}
		return n
	case []map[string]any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: line}
		for i, c := range v {
			n.Content = append(n.Content, tomlNode(c, index(path, i), lines, line))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: line}
		for i, c := range v {
			n.Content = append(n.Content, tomlNode(c, index(path, i), lines, line))
		}
		return n
	case string:
		return scalar("!!str", v)
	case int64:
		return scalar("!!int", strconv.FormatInt(v, 10))
	case float64:
		switch {
		case math.IsNaN(v):
			return scalar("!!float", ".nan")
		case math.IsInf(v, 1):
			return scalar("!!float", ".inf")
		case math.IsInf(v, -1):
			return scalar("!!float", "-.inf")
		}
		return scalar("!!float", strconv.FormatFloat(v, 'g', -1, 64))
	case bool:
		return scalar("!!bool", strconv.FormatBool(v))
	}
	return scalar("!!timestamp", fmt.Sprint(v))
}
