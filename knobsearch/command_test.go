package knobsearch

import (
	"context"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/tpcc"
)

// TestSearchRequestRefused: what the command's flags get wrong is refused
// before any server is reached, naming the flag.
func TestSearchRequestRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Request
		want string
	}{
		{"workload", Request{Workload: "nosuch", DSN: "x"}, `--workload "nosuch": tpcc or http`},
		{"fix", Request{Workload: "tpcc", Fixed: []string{"nosuchform"}}, "nosuchform"},
		{"memory budget", Request{Workload: "tpcc", MemoryBudget: "lots"}, `--memory-budget "lots"`},
		{"zero budget", Request{Workload: "tpcc", MemoryBudget: "0"}, `--memory-budget "0"`},
		{"memory reserve", Request{Workload: "http", MemoryReserve: "lots"}, `--memory-reserve "lots"`},
		{"no server", Request{Workload: "tpcc"}, tpcc.ErrNoServer.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Search(context.Background(), tc.r)
			if res != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Search: %v, %v; want %q", res, err, tc.want)
			}
		})
	}
}

// TestResetPrepare: none says the scores drift and resets nothing,
// reload resets, datadir needs its directory, and an unknown mode is
// refused, each before the server is touched.
func TestResetPrepare(t *testing.T) {
	var lines []string
	progress := func(s string) { lines = append(lines, s) }
	ctx := context.Background()
	f, err := Reset{Mode: "none"}.prepare(ctx, mysqlvar.Server{}, nil, nil, progress, nil)
	if f != nil || err != nil || len(lines) != 1 || !strings.Contains(lines[0], "scores drift") {
		t.Errorf("none: %v %v %q", f != nil, err, lines)
	}
	if f, err := (Reset{Mode: "reload"}).prepare(ctx, mysqlvar.Server{}, nil, nil, progress, nil); f == nil || err != nil {
		t.Errorf("reload: %v %v", f != nil, err)
	}
	for _, tc := range []struct {
		r    Reset
		want string
	}{
		{Reset{Mode: "datadir"}, "--reset datadir needs --datadir"},
		{Reset{Mode: "copy"}, `--reset "copy": reload, datadir or none`},
	} {
		_, err := tc.r.prepare(ctx, mysqlvar.Server{}, nil, nil, progress, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.r, err, tc.want)
		}
	}
}
