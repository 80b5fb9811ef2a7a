package knobsearch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDatadirReset: the server is stopped around every copy and waited
// for after its start; the data directory comes back to the snapshot.
func TestDatadirReset(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "mysql")
	os.MkdirAll(filepath.Join(dir, "tpcc"), 0o750)
	os.WriteFile(filepath.Join(dir, "tpcc", "stock.ibd"), []byte("stock v1"), 0o640)
	running := true
	var calls []string
	pings := 0
	d := &Datadir{Dir: dir, Snapshot: filepath.Join(root, "snap"),
		Stop: func(context.Context) error { calls = append(calls, "stop"); running = false; return nil },
		Start: func(context.Context) error {
			calls = append(calls, "start")
			running = true
			pings = 0
			return nil
		},
		Ping: func(context.Context) error {
			pings++
			if !running || pings < 3 {
				return errors.New("not yet")
			}
			return nil
		},
		StartTimeout: 10 * time.Second,
	}
	if _, err := d.Take(context.Background()); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "tpcc", "stock.ibd"), []byte("stock v2, after a run"), 0o640)
	os.WriteFile(filepath.Join(dir, "ib_logfile1"), []byte("new"), 0o640)
	if err := d.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "tpcc", "stock.ibd"))
	if string(data) != "stock v1" {
		t.Errorf("after the restore: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "ib_logfile1")); err == nil {
		t.Error("a file created after the snapshot survived the restore")
	}
	if want := "stop start stop start"; join(calls) != want || !running {
		t.Errorf("calls %q, want %q", join(calls), want)
	}
	if _, err := d.Take(context.Background()); err == nil {
		t.Error("a second snapshot over the first was accepted")
	}
	for name, bad := range map[string]*Datadir{
		"relative": {Dir: "mysql", Snapshot: "/x", Stop: d.Stop, Start: d.Start, Ping: d.Ping},
		"root":     {Dir: "/", Snapshot: "/x", Stop: d.Stop, Start: d.Start, Ping: d.Ping},
		"no stop":  {Dir: dir, Snapshot: "/x", Start: d.Start, Ping: d.Ping},
	} {
		if err := bad.Restore(context.Background()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
