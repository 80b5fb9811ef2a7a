package appcpu

import (
	"bytes"
	"context"
	"math"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// capture builds a capture from folded stacks ("a;b;c") at times.
func capture(samples ...struct {
	at     time.Duration
	stack  string
	trace  string
	window [2]time.Duration
}) *Capture {
	c := NewCapture("test")
	for _, s := range samples {
		var ids []int32
		for _, f := range strings.Split(s.stack, ";") {
			ids = append(ids, c.Frame(f))
		}
		smp := Sample{Stack: ids, Weight: time.Millisecond, Trace: s.trace}
		if s.window != [2]time.Duration{} {
			smp.WindowStart, smp.WindowEnd = t0.Add(s.window[0]), t0.Add(s.window[1])
		} else {
			smp.Time = t0.Add(s.at)
		}
		c.Add(smp)
	}
	return c
}

var t0 = time.Unix(1_700_000_000, 0)

type smp = struct {
	at     time.Duration
	stack  string
	trace  string
	window [2]time.Duration
}

func req(ep, trace string, from, to time.Duration) Request {
	return Request{Endpoint: ep, Trace: trace, Start: t0.Add(from), End: t0.Add(to)}
}

func TestAttribute(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name    string
		c       *Capture
		reqs    []Request
		db      map[string]EndpointTimes
		want    map[string][3]float64 // endpoint: app cpu, db, other ms per request
		top     map[string]string     // endpoint: top function
		outside int64
		shared  int64
		ambig   int64
	}{
		{
			name: "one at a time",
			c: capture(
				smp{at: 1 * ms, stack: "main;serve;burn"}, smp{at: 2 * ms, stack: "main;serve;burn"}, smp{at: 3 * ms, stack: "main;serve;fmt"},
				smp{at: 15 * ms, stack: "main;serve;query"},
				smp{at: 50 * ms, stack: "main;gc"},
			),
			reqs:    []Request{req("GET /burn", "", 0, 10*ms), req("GET /wait", "", 10*ms, 30*ms)},
			db:      map[string]EndpointTimes{"GET /wait": {DBMsPerRequest: 18}},
			want:    map[string][3]float64{"GET /burn": {3, 0, 7}, "GET /wait": {1, 18, 1}},
			top:     map[string]string{"GET /burn": "burn", "GET /wait": "query"},
			outside: 1,
		},
		{
			name: "pprof labels",
			c: capture(
				smp{stack: "main;burn", trace: "aaa", window: [2]time.Duration{0, time.Second}},
				smp{stack: "main;burn", trace: "aaa", window: [2]time.Duration{0, time.Second}},
				smp{stack: "main;list", trace: "bbb", window: [2]time.Duration{0, time.Second}},
			),
			reqs: []Request{req("GET /burn", "aaa", 0, 10*ms), req("GET /list", "bbb", 10*ms, 20*ms)},
			want: map[string][3]float64{"GET /burn": {2, 0, 8}, "GET /list": {1, 0, 9}},
			top:  map[string]string{"GET /burn": "burn", "GET /list": "list"},
		},
		{
			name: "pprof windows shared by time",
			c: capture(
				smp{stack: "main;burn", window: [2]time.Duration{0, 100 * ms}},
				smp{stack: "main;burn", window: [2]time.Duration{0, 100 * ms}},
			),
			reqs:   []Request{req("GET /a", "", 0, 75*ms), req("GET /b", "", 75*ms, 100*ms)},
			want:   map[string][3]float64{"GET /a": {1.5, 0, 73.5}, "GET /b": {0.5, 0, 24.5}},
			shared: 2,
		},
		{
			name:  "concurrent requests",
			c:     capture(smp{at: 5 * ms, stack: "main;x"}, smp{at: 15 * ms, stack: "main;y"}),
			reqs:  []Request{req("GET /a", "", 0, 10*ms), req("GET /b", "", 2*ms, 20*ms)},
			want:  map[string][3]float64{"GET /a": {0, 0, 10}, "GET /b": {1, 0, 17}},
			ambig: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Attribute(tc.c, tc.reqs, tc.db)
			if p.Outside != tc.outside || p.Shared != tc.shared || p.Ambiguous != tc.ambig {
				t.Errorf("outside %d shared %d ambiguous %d, want %d %d %d", p.Outside, p.Shared, p.Ambiguous, tc.outside, tc.shared, tc.ambig)
			}
			got := map[string]Usage{}
			for _, u := range p.Endpoints {
				got[u.Endpoint] = u
			}
			for ep, w := range tc.want {
				u := got[ep]
				for i, v := range []float64{u.AppCPUMsPerRequest, u.DBMsPerRequest, u.OtherMsPerRequest} {
					if math.Abs(v-w[i]) > 1e-9 {
						t.Errorf("%s: part %d = %v, want %v (%+v)", ep, i, v, w[i], u)
					}
				}
			}
			for ep, f := range tc.top {
				if u := got[ep]; len(u.TopFunctions) == 0 || u.TopFunctions[0].Name != f {
					t.Errorf("%s: top functions %+v, want %s first", ep, u.TopFunctions, f)
				}
			}
		})
	}
}

func TestStacksBound(t *testing.T) {
	c := NewCapture("test")
	for i := 0; i < MaxStacks+50; i++ {
		c.Add(Sample{Time: t0.Add(time.Millisecond), Stack: []int32{c.Frame("main"), c.Frame("f" + itoa(i))}, Weight: time.Millisecond})
	}
	p := Attribute(c, []Request{req("GET /", "", 0, time.Second)}, nil)
	st := p.Endpoints[0].Stacks
	if len(st) != MaxStacks || st[len(st)-1].Frames[0] != OtherStacks || st[len(st)-1].Ms != 51 {
		t.Fatalf("%d stacks, last %+v", len(st), st[len(st)-1])
	}
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return fmtInt(i/10) + string(rune('0'+i%10))
}

// spinLabelled burns cpu of this thread's CPU time (or stops after 20 s)
// and returns what it burnt.
//
//go:noinline
func spinLabelled(cpu time.Duration) (time.Duration, uint64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var h uint64 = 1
	start := threadCPU()
	for end := time.Now().Add(20 * time.Second); threadCPU()-start < cpu && time.Now().Before(end); {
		for i := 0; i < 100000; i++ {
			h = h*31 + uint64(i)
		}
	}
	return threadCPU() - start, h
}

func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestAddPProf reads a real CPU profile of this process, its samples
// labelled as an app labels its requests.
func TestAddPProf(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skip("a CPU profile is already running:", err)
	}
	start := time.Now()
	var burnt time.Duration
	pprof.Do(context.Background(), pprof.Labels("trace_id", "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01"), func(context.Context) {
		burnt, _ = spinLabelled(500 * time.Millisecond)
	})
	end := time.Now()
	pprof.StopCPUProfile()
	prof, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCapture("pprof")
	if err := AddPProf(c, prof); err != nil {
		t.Fatal(err)
	}
	p := Attribute(c, []Request{{Endpoint: "GET /burn", Trace: "0123456789abcdef0123456789abcdef", Start: start, End: end}}, nil)
	if len(p.Endpoints) != 1 {
		t.Fatalf("endpoints %+v", p.Endpoints)
	}
	u := p.Endpoints[0]
	// pprof's 100 Hz over half a second: within 20% of what the
	// thread's own clock says it burnt.
	if own := burnt.Seconds() * 1000; math.Abs(u.AppCPUMsPerRequest-own) > 0.2*own {
		t.Errorf("app cpu %.1f ms, the thread measured %.1f ms", u.AppCPUMsPerRequest, own)
	}
	if len(u.TopFunctions) == 0 || !strings.HasSuffix(u.TopFunctions[0].Name, "spinLabelled") || u.TopFunctions[0].TotalShare < 0.9 {
		t.Fatalf("top %+v", u.TopFunctions)
	}
}

func TestDiff(t *testing.T) {
	before := []Usage{{Endpoint: "GET /a", ProfiledRequests: 10, AppCPUMsPerRequest: 5, Stacks: []Stack{
		{Frames: []string{"main", "render", "escape"}, Ms: 30}, {Frames: []string{"main", "hash"}, Ms: 20}}},
		{Endpoint: "GET /gone", ProfiledRequests: 1, Stacks: []Stack{{Frames: []string{"main"}, Ms: 1}}}}
	after := []Usage{{Endpoint: "GET /a", ProfiledRequests: 20, AppCPUMsPerRequest: 2, Stacks: []Stack{
		{Frames: []string{"main", "render", "escape"}, Ms: 20}, {Frames: []string{"main", "hash"}, Ms: 20}}}}
	d := Diff(before, after)
	if len(d) != 2 {
		t.Fatalf("%+v", d)
	}
	var a EndpointDiff
	for _, e := range d {
		if e.Endpoint == "GET /a" {
			a = e
		} else if e.Status != DiffOnlyBefore {
			t.Errorf("GET /gone status %q", e.Status)
		}
	}
	// escape: 3 → 1 ms per request; hash 2 → 1.
	if len(a.Functions) != 2 || a.Functions[0].Name != "escape" || math.Abs(a.Functions[0].DeltaMs+2) > 1e-9 || math.Abs(a.Functions[1].DeltaMs+1) > 1e-9 {
		t.Fatalf("functions %+v", a.Functions)
	}
	if len(a.Stacks) != 2 || a.Stacks[0].BeforeMs != 3 || a.Stacks[0].AfterMs != 1 {
		t.Fatalf("stacks %+v", a.Stacks)
	}
}
