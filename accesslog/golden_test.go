package accesslog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/internal/golden"
)

// parseAll parses every line of data with p and renders each record or
// skip reason, one per line, with the counts at the end.
func parseAll(p Parser, data []byte) string {
	var b strings.Builder
	skipped := map[string]int{}
	records := 0
	var r Record
	chunk.Lines(data, func(off int, line []byte) {
		r = Record{Offset: int64(off)}
		if ok, reason := p.Parse(line, &r); ok {
			records++
			fmt.Fprintf(&b, "@%d %s\n", r.Offset, recordText(&r))
		} else {
			skipped[reason.String()]++
			fmt.Fprintf(&b, "@%d skip: %s\n", r.Offset, reason)
		}
	})
	reasons := make([]string, 0, len(skipped))
	for k, v := range skipped {
		reasons = append(reasons, fmt.Sprintf("%q: %d", k, v))
	}
	sort.Strings(reasons)
	fmt.Fprintf(&b, "format %q records %d skipped {%s}\n", p.Format(), records, strings.Join(reasons, ", "))
	return b.String()
}

// goldenLogs are the sample logs of testdata/logs and how to read them.
var goldenLogs = []struct {
	file   string
	parser func(t *testing.T) Parser
	detect string // the format Detect picks, or "" when it cannot
}{
	{"nginx-timed.log", func(t *testing.T) Parser { return configFormat(t, "timed") }, "nginx combined+request_time+upstream_response_time"},
	{"nginx-upstream-time.log", func(t *testing.T) Parser { return configFormat(t, "upstream_time") }, ""},
	{"ltsv.log", func(t *testing.T) Parser { return NewLTSV() }, "ltsv"},
	{"nginx-json.log", func(t *testing.T) Parser { return NewJSON() }, "json"},
	{"apache-combined-d.log", func(t *testing.T) Parser { return mustApache(t, ApacheCombinedD) }, "apache combined_d"},
}

const sampleConf = "testdata/nginx/nginx.conf"

// configFormat compiles log_format name of the sample nginx.conf.
func configFormat(t *testing.T, name string) Parser {
	t.Helper()
	f, err := NginxFormatFromConfig(sampleConf, name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewNginx(name, f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGolden parses each sample log and compares every record and skip
// with a reviewed golden file (go test -update rewrites them).
func TestGolden(t *testing.T) {
	for _, g := range goldenLogs {
		t.Run(g.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "logs", g.file))
			if err != nil {
				t.Fatal(err)
			}
			got := parseAll(g.parser(t), data)
			golden.Check(t, filepath.Join("testdata", "golden", strings.TrimSuffix(g.file, ".log")+".records"), []byte(got))
		})
	}
}

// TestDetectSamples runs Detect on the first lines of each sample log.
func TestDetectSamples(t *testing.T) {
	for _, g := range goldenLogs {
		t.Run(g.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "logs", g.file))
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.Split(data, []byte("\n"))
			p, err := Detect(lines[:min(len(lines), 20)])
			switch {
			case g.detect == "":
				if err == nil {
					t.Fatalf("detected %s", p.Format())
				}
				for _, c := range detectOrder {
					if !strings.Contains(err.Error(), c.Label+" (") {
						t.Errorf("error does not say %s was tried: %v", c.Label, err)
					}
				}
			case err != nil:
				t.Fatal(err)
			case p.Format() != g.detect:
				t.Errorf("detected %s, want %s", p.Format(), g.detect)
			}
		})
	}
}

// TestJSONFormatTwoWays reads the escape=json sample with NewJSON and with
// the compiled log_format that wrote it: the records must be the same.
func TestJSONFormatTwoWays(t *testing.T) {
	data, err := os.ReadFile("testdata/logs/nginx-json.log")
	if err != nil {
		t.Fatal(err)
	}
	records := func(p Parser) string {
		var out []string
		for _, l := range strings.Split(parseAll(p, data), "\n") {
			if strings.HasPrefix(l, "@") && !strings.Contains(l, " skip: ") {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	a, b := records(NewJSON()), records(configFormat(t, "json_combined"))
	if a != b {
		t.Errorf("NewJSON and the compiled format differ:\n%s", golden.Diff(a, b))
	}
	if strings.Count(a, "\n") < 25 {
		t.Errorf("only %d records", strings.Count(a, "\n")+1)
	}
}
