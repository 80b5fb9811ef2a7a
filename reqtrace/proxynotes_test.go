package reqtrace

import (
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/internal/skip"
	"github.com/stacktune/stacktune/mysqlproxy"
)

// TestProxyNotes: what the proxy refused or closed during a trace run
// (its counts at the end less those at the start) is in the report's
// skipped counts, by reason, and a refusal past the cap has a note saying
// what is missing and what to do.
func TestProxyNotes(t *testing.T) {
	o := mysqlproxy.Options{MaxConns: 24, HandshakeTimeout: 10 * time.Second, IdleTimeout: 30 * time.Minute}
	before := mysqlproxy.Stats{Refused: 5, OverCap: 3, HandshakeTimeouts: 2, IdleClosed: 1}
	tests := []struct {
		name    string
		after   mysqlproxy.Stats
		skipped skip.Counts
		note    string
		// notes are other notes the report must have (the timeouts).
		notes []string
	}{
		{"nothing new", before, skip.Counts{}, "", nil},
		{"past the cap", mysqlproxy.Stats{Refused: 12, OverCap: 10, HandshakeTimeouts: 2, IdleClosed: 1}, skip.Counts{
			"proxy_over_cap": 7,
		}, "the MySQL proxy turned away 7 of the app's connections past its cap of 24 (error 1040)", nil},
		{"timeouts and other refusals", mysqlproxy.Stats{Refused: 6, OverCap: 3, HandshakeTimeouts: 302, IdleClosed: 4}, skip.Counts{
			"proxy_refused":           1,
			"proxy_handshake_timeout": 300,
			"proxy_idle_timeout":      3,
		}, "", []string{"the MySQL proxy's handshake timeout: 10s", "the MySQL proxy's idle timeout: 30m0s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bl := newBuilder(Options{})
			proxyNotes(bl, o, before, tc.after)
			rep := bl.report(SourceProxy, "")
			if len(rep.Skipped) != len(tc.skipped) {
				t.Errorf("skipped %v, want %v", rep.Skipped, tc.skipped)
			}
			for k, v := range tc.skipped {
				if rep.Skipped[k] != v {
					t.Errorf("skipped[%q] = %d, want %d (all: %v)", k, rep.Skipped[k], v, rep.Skipped)
				}
			}
			notes := strings.Join(rep.Notes, "\n")
			if (tc.note == "") != !strings.Contains(notes, "turned away") || !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
			for _, n := range tc.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes %q, want %q among them", notes, n)
				}
			}
			if u := rep.Skipped.Unknown(); len(u) > 0 {
				t.Errorf("skipped by codes no reason has: %v", u)
			}
		})
	}
}
