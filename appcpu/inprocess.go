package appcpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"sync"

	"github.com/google/pprof/profile"
)

// InProcess samples a Go app that runs inside the calling program (a
// test's or a demo's app started in-process) with Go's own profiler,
// runtime/pprof, for the whole run. The program's other work (its load
// generator, its proxies) is in the same profile: only the samples the
// app labelled with a request's trace ID (pprof.Do with "trace_id", see
// TraceLabels) are kept, the others counted in Skipped. So an endpoint's
// app CPU is its handlers' (and the goroutines they start), not the HTTP
// server's reading and writing of the connection outside them.
type InProcess struct {
	mu      sync.Mutex
	buf     *bytes.Buffer
	running bool
}

// Name is "pprof".
func (p *InProcess) Name() string { return "pprof" }

// Start starts Go's CPU profiler (an error when another profile of the
// program is under way: a test's -cpuprofile).
func (p *InProcess) Start(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return errors.New("in-process pprof: already started")
	}
	p.buf = &bytes.Buffer{}
	if err := pprof.StartCPUProfile(p.buf); err != nil {
		return fmt.Errorf("in-process pprof: %w", err)
	}
	p.running = true
	return nil
}

// Stop stops the profiler and returns the app's labelled samples.
func (p *InProcess) Stop(context.Context) (*Capture, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running {
		return nil, errors.New("in-process pprof: not started")
	}
	pprof.StopCPUProfile()
	p.running = false
	if p.buf.Len() > MaxPProfBytes {
		return nil, fmt.Errorf("in-process pprof: a profile past %d bytes", MaxPProfBytes)
	}
	prof, err := profile.Parse(p.buf)
	p.buf = nil
	if err != nil {
		return nil, fmt.Errorf("in-process pprof: %w", err)
	}
	c := NewCapture("pprof")
	c.Symbols = SymbolsGo
	if err := AddPProf(c, prof); err != nil {
		return nil, err
	}
	labelledOnly(c)
	return c, nil
}

// labelledOnly keeps c's samples that carry a trace ID.
func labelledOnly(c *Capture) {
	kept := c.Samples[:0]
	var dropped int64
	for _, s := range c.Samples {
		if s.Trace != "" {
			kept = append(kept, s)
		} else {
			dropped++
		}
	}
	c.Samples = kept
	c.skip(SkippedUnlabelled, dropped)
	c.Notes = append(c.Notes, "the app runs inside the profiled program: only the samples its handlers labelled with their request's trace ID are counted (the HTTP server's own reading and writing outside the handlers is not)")
}
