package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/capacity"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/diagnose"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/fleet"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/indexadv"
	"github.com/stacktune/stacktune/internal/golden"
	"github.com/stacktune/stacktune/internal/jsonschema"
	"github.com/stacktune/stacktune/internal/skip"
	"github.com/stacktune/stacktune/knobsearch"
	"github.com/stacktune/stacktune/refstack/demo"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/tpcc"
	"github.com/stacktune/stacktune/tune"
)

// jsonResults are the JSON documents the commands write, by the name of
// their schema golden (testdata/schema/NAME.json): with --format json, or
// as their output file (collect).
var jsonResults = map[string]any{
	"digest":             &digest.Report{},
	"demo-digest":        &demo.DigestResult{},
	"http":               &httpprof.Report{},
	"http-diff":          &httpprof.DiffReport{},
	"bench":              &benchrun.Summary{},
	"history":            &report.TransitionsJSON{},
	"collect":            &collect.Snapshot{},
	"collect-hosts":      &fleet.Snapshot{},
	"audit":              &advise.Result{},
	"audit-fleet":        &fleet.Report{},
	"plan":               &capacity.Report{},
	"plan-fleet":         &fleet.Plan{},
	"indexes":            &indexadv.Result{},
	"apply":              &apply.Result{},
	"apply-dry-run":      &report.ApplyDryRunJSON{},
	"apply-transactions": []apply.Summary{},
	"apply-hosts":        &fleet.ApplyReport{},
	"diagnose":           &diagnose.Result{},
	"tune":               &tune.Result{},
	"search":             &knobsearch.Result{},
	"tpcc-prepare":       &tpcc.LoadResult{},
	"tpcc-run":           &tpcc.Result{},
	"tpcc-check":         &tpcc.CheckResult{},
	"endpoints":          &reqtrace.Report{},
	"endpoints-diff":     &report.EndpointsDiffView{},
	"ab":                 &tune.ABResult{},
}

// commandResults are the schemas of each command that takes --format
// json (its path under stacktune, its modes apart).
var commandResults = map[string][]string{
	"digest":         {"digest"},
	"demo":           {"tune"},
	"demo digest":    {"demo-digest"},
	"http":           {"http"},
	"http diff":      {"http-diff"},
	"bench":          {"bench"},
	"bench import":   {"bench"},
	"history":        {"history"},
	"audit":          {"audit", "audit-fleet"},
	"plan":           {"plan", "plan-fleet"},
	"indexes":        {"indexes"},
	"apply":          {"apply", "apply-dry-run", "apply-transactions", "apply-hosts"},
	"rollback":       {"apply"},
	"diagnose":       {"diagnose"},
	"tune":           {"tune", "search"},
	"search":         {"search"},
	"tpcc prepare":   {"tpcc-prepare"},
	"tpcc run":       {"tpcc-run"},
	"tpcc check":     {"tpcc-check"},
	"endpoints":      {"endpoints"},
	"endpoints diff": {"endpoints-diff"},
	"ab":             {"ab"},
}

// TestJSONSchema pins the JSON of every result (field names, value types,
// the codes of enumerations) in testdata/schema: a change shows as a
// diff to review (-update rewrites them), and wording, which only report
// writes, cannot reach it.
func TestJSONSchema(t *testing.T) {
	names := make([]string, 0, len(jsonResults))
	for name := range jsonResults {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			doc, err := jsonschema.Describe(reflect.TypeOf(jsonResults[name]))
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetIndent("", "  ")
			if err := enc.Encode(doc); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/schema/"+name+".json", b.Bytes())
		})
	}
	if *golden.Update {
		return
	}
	files, err := os.ReadDir("testdata/schema")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := jsonResults[strings.TrimSuffix(f.Name(), ".json")]; !ok {
			t.Errorf("testdata/schema/%s describes no result of jsonResults: remove it", f.Name())
		}
	}
}

// TestJSONSchemaCoversCommands: every command whose --format takes json
// has its results in commandResults, and each of those is described.
func TestJSONSchemaCoversCommands(t *testing.T) {
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		f := c.Flags().Lookup("format")
		if f == nil || !strings.Contains(f.Usage, "json") {
			return
		}
		path := strings.TrimPrefix(c.CommandPath(), "stacktune ")
		seen[path] = true
		if _, ok := commandResults[path]; !ok {
			t.Errorf("stacktune %s writes JSON (--format %q) but has no schema in commandResults", path, f.Usage)
		}
	}
	walk(newRootCmd(strings.NewReader(""), io.Discard, io.Discard))
	for path, results := range commandResults {
		if !seen[path] {
			t.Errorf("commandResults names stacktune %s, which takes no --format json", path)
		}
		for _, r := range results {
			if _, ok := jsonResults[r]; !ok {
				t.Errorf("stacktune %s: no result %q in jsonResults", path, r)
			}
		}
	}
}

// skipCodes is the enumeration of skip counts' keys.
const skipCodes = "skip.Code"

// docCode is a row of docs/json.md's tables: | `code` | meaning |;
// docWords the second column of skip.Code's rows, the words.
var (
	docHeading = regexp.MustCompile("^### `([a-z0-9_]+\\.[A-Za-z0-9_]+)`")
	docCode    = regexp.MustCompile("^\\| `([^`]*)` \\|")
	docWords   = regexp.MustCompile("^\\| `([^`]*)` \\| ([^|]*) \\|")
)

// TestJSONCodesDocumented: docs/json.md lists every enumeration the
// results reach, each with exactly its codes, and nothing else. The skip
// codes (the keys of every skip count) are reached, are exactly the
// registered ones, well formed, and documented with the words report
// prints for them.
func TestJSONCodesDocumented(t *testing.T) {
	if err := skip.Check(); err != nil {
		t.Error(err)
	}
	want := map[string][]string{}
	for _, v := range jsonResults {
		doc, err := jsonschema.Describe(reflect.TypeOf(v))
		if err != nil {
			t.Fatal(err)
		}
		for name, codes := range doc.Enums() {
			want[name] = codes
		}
	}
	md, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	words := map[skip.Code]string{}
	cur := ""
	for _, line := range strings.Split(string(md), "\n") {
		if m := docHeading.FindStringSubmatch(line); m != nil {
			cur = m[1]
			got[cur] = []string{}
			continue
		}
		if strings.HasPrefix(line, "## ") {
			cur = ""
		}
		if m := docCode.FindStringSubmatch(line); m != nil && cur != "" {
			got[cur] = append(got[cur], m[1])
		}
		if m := docWords.FindStringSubmatch(line); m != nil && cur == skipCodes {
			words[skip.Code(m[1])] = m[2]
		}
	}
	if reg := skip.Code("").Codes(); strings.Join(want[skipCodes], ",") != strings.Join(reg, ",") {
		t.Errorf("the results reach the skip codes %s, the registry has %s", strings.Join(want[skipCodes], ", "), strings.Join(reg, ", "))
	}
	for _, e := range skip.Registered() {
		if w, ok := words[e.Code]; ok && w != e.Words {
			t.Errorf("docs/json.md says skip code %s in words as %q, report prints %q", e.Code, w, e.Words)
		}
	}
	for name, codes := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("docs/json.md has no section ### `%s` (codes %s)", name, strings.Join(codes, ", "))
			continue
		}
		sort.Strings(g)
		if strings.Join(g, ",") != strings.Join(codes, ",") {
			t.Errorf("docs/json.md lists %s as %s, the code has %s", name, strings.Join(g, ", "), strings.Join(codes, ", "))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/json.md lists %s, which no result reaches", name)
		}
	}
}
