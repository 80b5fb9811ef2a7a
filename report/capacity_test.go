package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/capacity"
	"github.com/stacktune/stacktune/internal/golden"
)

// timeWaitPlan is the TIME_WAIT write-up's host: 100 web servers × 255 Apache workers at
// 900 req/s each, 10.289 ms per request, 1024 live sockets.
func timeWaitPlan() capacity.Options {
	o := capacity.DefaultOptions()
	o.Rate = 90000
	o.Servers = 100
	o.Workers = 255
	o.ResponseTime = 10289 * time.Microsecond
	o.LiveSockets = 1024
	return o
}

// TestWrite renders the TIME_WAIT write-up's plan, with its measured 935 req/s per server,
// in every format and compares with reviewed golden files.
func TestWrite(t *testing.T) {
	o := timeWaitPlan()
	o.PerServerRate = 935
	p, err := capacity.Compute(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range CapacityFormats {
		t.Run(f, func(t *testing.T) {
			var b bytes.Buffer
			if err := Capacity(&b, p, f); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "plan-timewait."+f), b.Bytes())
		})
	}
	if err := Capacity(&bytes.Buffer{}, p, "yaml"); err == nil || !strings.Contains(err.Error(), `unknown format "yaml"`) {
		t.Errorf("unknown format: %v", err)
	}
}

// TestJSONShape checks the JSON contract: inputs, and results with id,
// title, value, unit, formula, setting {kind, name, value} and notes.
func TestJSONShape(t *testing.T) {
	p, err := capacity.Compute(timeWaitPlan())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Capacity(&b, p, "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Inputs  map[string]any `json:"inputs"`
		Results []struct {
			ID      string   `json:"id"`
			Title   string   `json:"title"`
			Value   *float64 `json:"value"`
			Unit    string   `json:"unit"`
			Formula string   `json:"formula"`
			Setting *struct {
				Kind, Name, Value string
			} `json:"setting"`
			Notes []string `json:"notes"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rate", "servers", "workers", "response_time_s", "persistent", "other_files", "per_server_rate",
		"cache_clients_per_worker", "time_wait_s", "port_range", "headroom", "live_sockets", "closer", "tw_buckets"} {
		if _, ok := doc.Inputs[k]; !ok {
			t.Errorf("inputs lack %q", k)
		}
	}
	kinds := map[string]bool{}
	for _, r := range doc.Results {
		if r.ID == "" || r.Title == "" || r.Value == nil || r.Unit == "" || r.Formula == "" {
			t.Errorf("incomplete result %+v", r)
		}
		if r.Setting != nil {
			kinds[r.Setting.Kind] = true
			if r.Setting.Name == "" || r.Setting.Value == "" {
				t.Errorf("%s: incomplete setting %+v", r.ID, r.Setting)
			}
		}
	}
	for _, k := range []string{capacity.KindSysctl, capacity.KindMySQLVariable, capacity.KindSystemd, capacity.KindMemcachedFlag} {
		if !kinds[k] {
			t.Errorf("no setting of kind %s", k)
		}
	}
	if len(doc.Results) != len(p.Results) {
		t.Errorf("%d results in JSON, %d in the plan", len(doc.Results), len(p.Results))
	}
}
