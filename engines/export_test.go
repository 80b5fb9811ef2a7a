package engines

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// scriptData extracts the scenario data an exported script embeds.
func scriptData(t *testing.T, script, prefix string) *model {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(prefix) + `(.*?);?$`)
	m := re.FindStringSubmatch(script)
	if m == nil {
		t.Fatalf("no %q line in the script", prefix)
	}
	raw := m[1]
	if strings.HasPrefix(raw, `"`) {
		// Locust's: a Python string literal of the JSON, written by
		// strconv.QuoteToASCII, whose escapes Go reads back.
		var s string
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			t.Fatalf("SCENARIO literal: %v", err)
		}
		raw = s
	}
	var md model
	if err := json.Unmarshal([]byte(raw), &md); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	return &md
}

// TestK6Export checks the structure of the k6 script (k6 itself is not
// installable here): the embedded scenario, the executor of each model,
// thresholds from fail_if, the metric names ImportK6 reads, and, where
// Node.js is installed, that the script parses as an ES module.
func TestK6Export(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opt    ExportOptions
		rate   float64
		think  bool
		expect string
	}{
		{"open", ExportOptions{Users: 10, Rate: 20, Duration: 30 * time.Second}, 20, false, "constant-arrival-rate"},
		{"closed", ExportOptions{Users: 10, Duration: 30 * time.Second}, 0, true, "constant-vus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			warn, err := K6(&b, refScenario(t), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			script := b.String()
			md := scriptData(t, script, "const S = ")
			if md.Rate != tc.rate || md.Users != 10 || md.DurationS != 30 || md.Think != tc.think || md.TimeoutS != 10 {
				t.Errorf("model %+v", md)
			}
			if md.Login == nil || md.Login.Index != 0 || len(md.Steps) != 8 || md.Steps[0].Name != "home" || md.Steps[0].Weight != 10 || md.Steps[0].Index != 1 {
				t.Errorf("steps: login %+v, %d steps", md.Login, len(md.Steps))
			}
			home := md.Steps[0]
			if home.Selector != "#friend-entries li.friend-entry" || home.MinCount != 1 || len(home.Contains) != 5 || len(home.Status) != 1 {
				t.Errorf("home's checks: %+v", home)
			}
			// The login binds users and passwords to the user's row.
			if f := md.Login.Form; len(f) != 2 || f[0].Parts[0][0] != "list" || f[0].Parts[0][1] != "users" || md.UserList != "users" {
				t.Errorf("login form %+v", f)
			}
			if md.Scoring.ErrorRate != 0.01 || !strings.Contains(script, "stacktune_failed: ['rate<=' + S.scoring.error_rate]") {
				t.Error("the error-rate threshold")
			}
			for _, want := range []string{tc.expect, "export const options", "export default function", "summaryTrendStats", "'p(99)'",
				"new Counter(p + 'requests')", "new Trend(p + 'latency', true)", "new Counter(p + 'fail_' + k)", "new Counter(p + 'slow')",
				"new Counter('stacktune_requests')", "new Trend('stacktune_latency', true)", "redirects: 0", "parseHTML(body)", "exec.vu.idInTest"} {
				if !strings.Contains(script, want) {
					t.Errorf("the script lacks %q", want)
				}
			}
			// The runtime names a step's metrics as k6Metric does.
			if !strings.Contains(script, "const p = 'stacktune_' + pad(i) + '_';") || k6Metric(3, "requests") != "stacktune_03_requests" {
				t.Error("metric names")
			}
			if len(warn) == 0 {
				t.Error("no warning about what k6 does differently")
			}
			node, err := exec.LookPath("node")
			if err != nil {
				t.Log("node is not installed: the script's syntax is not checked")
				return
			}
			p := filepath.Join(t.TempDir(), "script.mjs")
			if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(node, "--check", p).CombinedOutput(); err != nil {
				t.Errorf("node --check: %v\n%s", err, out)
			}
		})
	}
}

// TestLocustExport checks the Locust file's structure and that Python
// with Locust imports it (its runtime runs at import: the data parses,
// the user class is built with its pacing).
func TestLocustExport(t *testing.T) {
	var b bytes.Buffer
	warn, err := Locust(&b, refScenario(t), ExportOptions{Users: 4, Rate: 8, Duration: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	md := scriptData(t, b.String(), "SCENARIO = ")
	if md.Rate != 8 || md.Users != 4 || len(md.Steps) != 8 || !md.NeedsHTML {
		t.Errorf("model %+v", md)
	}
	for _, want := range []string{"locust -f FILE --headless -u 4 -r 4 -t 20s --csv RESULT", "--master --expect-workers N", "stacktune bench import --scenario SCENARIO.yaml --locust-csv RESULT",
		"constant_throughput(S[\"rate\"] / S[\"users\"])", `r.failure("%s: %s" % (kind,`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the file lacks %q", want)
		}
	}
	if len(warn) < 2 {
		t.Errorf("warnings %q", warn)
	}
	p := filepath.Join(t.TempDir(), "locustfile.py")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/usr/bin/python3", "-c", `import importlib.util, sys
spec = importlib.util.spec_from_file_location("lf", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
u = m.StacktuneUser
print(u.host, len(m.S["steps"]), m.HTML)`, p).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "http://127.0.0.1:8080 8 lxml") {
		t.Errorf("python: %v\n%s", err, out)
	}
}

func TestExportBad(t *testing.T) {
	for _, o := range []ExportOptions{{Users: -1}, {Rate: -1}, {Duration: time.Millisecond}, {Timeout: time.Hour}, {BaseURL: "ftp://x"}} {
		var b bytes.Buffer
		if _, err := Locust(&b, refScenario(t), o); err == nil || b.Len() != 0 {
			t.Errorf("%+v: err %v, %d bytes written", o, err, b.Len())
		}
	}
}
