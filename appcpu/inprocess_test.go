package appcpu

import (
	"context"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:noinline
func inProcessSpin(rounds int) uint64 {
	h := uint64(1)
	for i := 0; i < rounds; i++ {
		h = h*1099511628211 ^ uint64(i)
		h ^= h >> 29
	}
	return h
}

// TestInProcess: the app's labelled work is kept, the program's own
// (unlabelled) work is counted as skipped, never attributed.
func TestInProcess(t *testing.T) {
	var p InProcess
	if _, err := p.Stop(context.Background()); err == nil {
		t.Fatal("Stop before Start: no error")
	}
	if err := p.Start(context.Background()); err != nil {
		t.Skipf("the program's profiler is taken: %v", err)
	}
	if err := p.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("second Start: %v", err)
	}
	var wg sync.WaitGroup
	var own time.Duration // the labelled goroutine's CPU, by its thread's clock
	wg.Add(2)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pprof.Do(context.Background(), pprof.Labels("trace_id", "0af7651916cd43dd8448eb211c80319c", "route", "GET /burn"), func(context.Context) {
			start := threadCPU()
			inProcessSpin(100_000_000)
			own = threadCPU() - start
		})
	}()
	go func() { defer wg.Done(); inProcessSpin(50_000_000) }()
	wg.Wait()
	c, err := p.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Samples) == 0 {
		t.Fatal("no labelled sample kept")
	}
	for _, s := range c.Samples {
		if s.Trace != "0af7651916cd43dd8448eb211c80319c" {
			t.Fatalf("a sample of trace %q kept", s.Trace)
		}
	}
	if c.Skipped[SkippedUnlabelled.Code()] == 0 {
		t.Errorf("the unlabelled spin was not counted as skipped: %v", c.Skipped)
	}
	prof := Attribute(c, []Request{{Endpoint: "GET /burn", Trace: "0af7651916cd43dd8448eb211c80319c", Start: time.Now().Add(-time.Second), End: time.Now()}}, nil)
	if len(prof.Endpoints) != 1 || prof.Shared != 0 {
		t.Fatalf("attributed: %+v", prof)
	}
	top := prof.Endpoints[0].TopFunctions
	if len(top) == 0 || !strings.Contains(top[0].Name, "inProcessSpin") {
		t.Errorf("top functions %+v, want inProcessSpin first", top)
	}
	// Go's profiler samples at 100 Hz: within 30% over some 30 samples.
	if ms, want := prof.Endpoints[0].AppCPUMsPerRequest, float64(own)/1e6; ms < 0.7*want || ms > 1.3*want {
		t.Errorf("app CPU %.0f ms, the goroutine's thread measured %.0f ms", ms, want)
	}
}
