package appcpu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/google/pprof/profile"
)

// MaxPProfBytes bounds one profile read from the app.
const MaxPProfBytes = 64 << 20

// Labels a Go app can set on its requests (pprof.Do) that tie samples to
// them: the request's trace ID (from its traceparent header) or its
// route.
var (
	TraceLabels = []string{"trace_id", "trace", "traceparent"}
	RouteLabels = []string{"endpoint", "route", "http.route"}
)

// PProf samples a Go app through its /debug/pprof/profile handler, one
// profile of Window after another until Stop.
type PProf struct {
	// URL is the profile handler (http://host:port/debug/pprof/profile).
	URL string
	// Window is each profile's length (default 1s; whole seconds).
	Window time.Duration
	Client *http.Client

	cancel   context.CancelFunc
	done     chan struct{}
	mu       sync.Mutex
	c        *Capture
	errs     []error
	stopping bool
}

// Name is "pprof".
func (p *PProf) Name() string { return "pprof" }

// Start checks the handler answers and starts taking profiles.
func (p *PProf) Start(ctx context.Context) error {
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--pprof %q: want http://host:port/debug/pprof/profile", p.URL)
	}
	if p.Window <= 0 {
		p.Window = time.Second
	}
	if p.Client == nil {
		p.Client = &http.Client{Timeout: p.Window + 30*time.Second}
	}
	p.c = NewCapture("pprof")
	p.c.Symbols = SymbolsGo
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel, p.done = cancel, make(chan struct{})
	first := make(chan error, 1)
	go func() {
		defer close(p.done)
		for i := 0; lctx.Err() == nil && !p.isStopping(); i++ {
			err := p.take(lctx, i == 0, first)
			if err != nil && lctx.Err() == nil {
				p.mu.Lock()
				p.errs = append(p.errs, err)
				p.mu.Unlock()
				if i == 0 {
					return
				}
			}
		}
	}()
	select {
	case err := <-first:
		if err != nil {
			cancel()
			<-p.done
			return err
		}
	case <-ctx.Done():
		cancel()
		<-p.done
		return ctx.Err()
	}
	return nil
}

// take reads one profile; the first tells first once the app answered
// its headers (its profiler is running).
func (p *PProf) take(ctx context.Context, isFirst bool, first chan<- error) error {
	u, _ := url.Parse(p.URL)
	q := u.Query()
	q.Set("seconds", fmt.Sprint(max(1, int(p.Window/time.Second))))
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := p.Client.Do(req)
	if err != nil {
		err = fmt.Errorf("the app's pprof handler: %w", err)
		if isFirst {
			first <- err
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		err := fmt.Errorf("the app's pprof handler: %s: %s", resp.Status, b)
		if isFirst {
			first <- err
		}
		return err
	}
	// Go's handler starts its profiler before it waits, and answers
	// its headers only after: the first profile is known to run once
	// the handler was reached; tell the caller after a moment.
	if isFirst {
		first <- nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxPProfBytes+1))
	if err != nil {
		return err
	}
	if len(body) > MaxPProfBytes {
		return fmt.Errorf("a profile past %d bytes", MaxPProfBytes)
	}
	prof, err := profile.ParseData(body)
	if err != nil {
		return fmt.Errorf("the app's profile: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return AddPProf(p.c, prof)
}

// Stop ends the profiles (the one under way is waited for: its samples
// are the run's last) and returns them.
func (p *PProf) Stop(ctx context.Context) (*Capture, error) {
	if p.done == nil {
		return nil, errors.New("pprof: not started")
	}
	// The profile under way ends by itself within a window; the loop
	// starts no other.
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(p.Window + 15*time.Second):
		case <-p.done:
		}
		p.cancel()
	}()
	p.stopLoop()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.c.Samples) == 0 && len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	for _, e := range p.errs {
		p.c.Notes = append(p.c.Notes, "a profile was lost: "+e.Error())
	}
	return p.c, nil
}

// stopLoop makes the loop take no further profile.
func (p *PProf) stopLoop() {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
}

func (p *PProf) isStopping() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopping
}

// AddPProf adds a CPU profile's samples to c: each with the profile's
// window, its labels, and its CPU time.
func AddPProf(c *Capture, prof *profile.Profile) error {
	vi := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			vi = i
		}
	}
	if vi < 0 {
		return errors.New("not a CPU profile (no cpu/nanoseconds sample type)")
	}
	ws := time.Unix(0, prof.TimeNanos)
	we := ws.Add(time.Duration(prof.DurationNanos))
	for _, s := range prof.Sample {
		if vi >= len(s.Value) || s.Value[vi] <= 0 {
			continue
		}
		var leafFirst []int32
		for _, loc := range s.Location {
			// Inlined functions: the last Line is the caller.
			for k := range loc.Line {
				name := "[unknown]"
				if fn := loc.Line[k].Function; fn != nil && fn.Name != "" {
					name = fn.Name
				}
				leafFirst = append(leafFirst, c.Frame(clean(name)))
			}
			if len(loc.Line) == 0 {
				leafFirst = append(leafFirst, c.Frame(fmt.Sprintf("[%#x]", loc.Address)))
			}
		}
		if len(leafFirst) > MaxDepth {
			leafFirst = leafFirst[:MaxDepth]
		}
		stack := make([]int32, len(leafFirst))
		for i, f := range leafFirst {
			stack[len(leafFirst)-1-i] = f
		}
		smp := Sample{Stack: stack, Weight: time.Duration(s.Value[vi]), WindowStart: ws, WindowEnd: we}
		smp.Trace = label(s.Label, TraceLabels)
		if smp.Trace != "" {
			smp.Trace = traceID(smp.Trace)
		}
		smp.Route = label(s.Label, RouteLabels)
		c.Add(smp)
	}
	return nil
}

func label(l map[string][]string, keys []string) string {
	for _, k := range keys {
		if v := l[k]; len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// traceID is a traceparent's trace ID, or v itself.
func traceID(v string) string {
	if len(v) == 55 && v[2] == '-' && v[35] == '-' {
		return v[3:35]
	}
	return v
}
