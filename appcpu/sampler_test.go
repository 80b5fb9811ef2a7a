package appcpu

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSamplerFailures: a sampler that cannot sample says why at Start,
// and leaves nothing behind (no perf process, no temporary directory).
func TestSamplerFailures(t *testing.T) {
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		s    Sampler
		want string
	}{
		{"no process", NewPerf(PerfOptions{}), "no process to sample"},
		{"perf missing", NewPerf(PerfOptions{PIDs: []int{os.Getpid()}, Perf: "/nonexistent/perf"}), "perf is not installed"},
		{"process gone", NewPerf(PerfOptions{PIDs: []int{gone.Process.Pid}}), "process"},
		{"pprof not served", &PProf{URL: notFound.URL + "/debug/pprof/profile"}, "404"},
		{"pprof bad URL", &PProf{URL: "ftp://x/"}, "want http://"},
		{"pprof unreachable", &PProf{URL: "http://127.0.0.1:1/debug/pprof/profile"}, "pprof handler"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tempDirs(t)
			err := tc.s.Start(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start: %v, want %q", err, tc.want)
			}
			if after := tempDirs(t); after > before {
				t.Errorf("%d temporary directories left", after-before)
			}
			if _, err := tc.s.Stop(context.Background()); err == nil {
				t.Error("Stop after a failed Start: no error")
			}
		})
	}
}

func tempDirs(t *testing.T) int {
	ents, _ := os.ReadDir(os.TempDir())
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "stacktune-perf-") {
			n++
		}
	}
	return n
}
