package tpcc

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestServerGoneMidRun kills the server (SIGKILL) part way into the
// measured interval of a run: the run ends on time, says the server went
// away, when, and whether it came back, gives the rates over the time it
// was up only, and returns ErrServerLost (the command exits non-zero).
func TestServerGoneMidRun(t *testing.T) {
	tests := []struct {
		name    string
		restart bool // the server is started again at once
		back    string
	}{
		{"killed, not back", false, "not back by the end of the run"},
		{"killed and started again", true, "back after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, db := newDB(t)
			ctx := context.Background()
			if _, err := Load(ctx, db, LoadOptions{Warehouses: 1, Sizes: TinySizes, Workers: 2}); err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			var killed time.Time
			restarted := make(chan error, 1)
			opt := RunOptions{Duration: 8 * time.Second, Connections: 2, Grace: 5 * time.Second,
				Progress: func(p Progress) {
					// Once the measured interval has New-Orders in it.
					if p.WarmUp || p.TpmC == 0 || p.Elapsed < 2*time.Second {
						return
					}
					once.Do(func() {
						killed = time.Now()
						if err := syscall.Kill(m.PID(), syscall.SIGKILL); err != nil {
							t.Errorf("kill: %v", err)
						}
						if tt.restart {
							go func() { restarted <- m.Restart(ctx) }()
						}
					})
				}}
			start := time.Now()
			res, err := Run(ctx, db, opt)
			if time.Since(start) > opt.Duration+opt.Grace+10*time.Second {
				t.Errorf("the run took %s", time.Since(start))
			}
			if killed.IsZero() {
				t.Fatalf("the server was never killed: %v %+v", err, res)
			}
			if tt.restart {
				if err := <-restarted; err != nil {
					t.Fatalf("restart: %v", err)
				}
			}
			if !errors.Is(err, ErrServerLost) || !strings.Contains(err.Error(), tt.back) || !strings.Contains(err.Error(), "into the measured interval") {
				t.Errorf("err %v, want ErrServerLost, %q", err, tt.back)
			}
			if res == nil || len(res.Outages) != 1 {
				t.Fatalf("result %+v", res)
			}
			o := res.Outages[0]
			measureFrom := res.Started.Add(res.WarmUp)
			// The server went away between the last progress line and
			// the kill's being seen; it is seen within a second or two.
			if o.From.Before(measureFrom) || o.From.After(killed.Add(5*time.Second)) || o.From.Before(killed.Add(-2*time.Second)) || o.Error == "" {
				t.Errorf("outage %+v, killed at %s", o, killed)
			}
			if tt.restart != !o.To.IsZero() || !o.To.IsZero() && !o.To.After(o.From) {
				t.Errorf("outage %+v: restarted %v", o, tt.restart)
			}
			end := measureFrom.Add(res.Duration)
			if !o.To.IsZero() && o.To.Before(end) {
				end = o.To
			}
			away := end.Sub(o.From)
			if res.Up != res.Duration-away || res.Up <= 0 || res.Up >= res.Duration {
				t.Errorf("up %s of %s, away %s", res.Up, res.Duration, away)
			}
			// The rates are over the time the server was up.
			var newOrders int64
			for _, x := range res.Transactions {
				if x.Name == NewOrder.String() {
					newOrders = x.Completed
				}
			}
			if want := float64(newOrders) / res.Up.Minutes(); newOrders == 0 || math.Abs(res.TpmC-want) > 1e-6*want {
				t.Errorf("tpmC %.1f, want %d New-Orders over %s = %.1f", res.TpmC, newOrders, res.Up, want)
			}
			if h := res.HistoryRun("x", "y"); h.Passed {
				t.Error("the history calls the run passed")
			}
		})
	}
}
