package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchExportImport(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history.db")
	sc := "../../refstack/refapp/scenario.yaml"
	for _, f := range []string{"locust", "k6"} {
		out := filepath.Join(dir, "script."+f)
		_, stderr, err := run(t, "", "bench", "export", "--format", f, "--rate", "20", "-u", "10", "-d", "30s", sc, "-o", out)
		if err != nil {
			t.Fatalf("%s: %v\n%s", f, err, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil || !strings.Contains(string(b), "stacktune scenario refapp") || !strings.Contains(stderr, "stacktune: "+f+": ") {
			t.Errorf("%s: %v %s", f, err, stderr)
		}
	}
	if _, _, err := run(t, "", "bench", "export", "--format", "jmeter", sc); err == nil || !strings.Contains(err.Error(), "use locust or k6") {
		t.Errorf("unknown engine: %v", err)
	}
	stdout, _, err := run(t, "", "bench", "import", "--history", hist, "--scenario", sc, "--locust-csv", "../../engines/testdata/locust/locust", "--rate", "12", "--users", "8", "--label", "locust")
	if err != nil || !strings.Contains(stdout, "# measured by locust, scored by stacktune") || !strings.Contains(stdout, "score 1,067, PASSED") {
		t.Errorf("import locust: %v\n%s", err, stdout)
	}
	_, _, err = run(t, "", "bench", "import", "--history", hist, "--scenario", sc, "--k6-summary", "../../engines/testdata/k6/handle-summary.json", "--label", "k6")
	if err == nil || !strings.Contains(err.Error(), "the run failed: unfinished") {
		t.Errorf("import k6: %v", err)
	}
	stdout, _, err = run(t, "", "history", "--history", hist)
	if err != nil || !strings.Contains(stdout, "locust") || !strings.Contains(stdout, "k6 ") {
		t.Errorf("history: %v\n%s", err, stdout)
	}
	if _, _, err := run(t, "", "bench", "import", "--scenario", sc, "--no-history"); err == nil || !strings.Contains(err.Error(), "give one of") {
		t.Errorf("no result file: %v", err)
	}
}
