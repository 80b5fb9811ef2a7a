package capacity

import (
	"math"
	"testing"
	"time"
)

// FuzzCompute feeds any flag values to Compute: it either refuses them
// with an error or returns figures that are finite, not negative and
// within int range (no "-9223370000000000000 servers").
func FuzzCompute(f *testing.F) {
	f.Add(12000.0, 40, 20, int64(50*time.Millisecond), 1000.0, 1.2, 0, 0, 4096, false)
	f.Add(1e8, 1, 1, int64(time.Millisecond), 1e-300, 1.0, 0, 0, 1, true)
	f.Add(935.0, 1, 10, int64(time.Second), 935.0, 100.0, 1000, 10, 1<<20, false)
	f.Fuzz(func(t *testing.T, rate float64, servers, workers int, rt int64, perServer, headroom float64, live, admin, buckets int, persistent bool) {
		o := DefaultOptions()
		o.Rate, o.Servers, o.Workers, o.ResponseTime = rate, servers, workers, time.Duration(rt)
		o.PerServerRate, o.Headroom, o.LiveSockets, o.AdminConnections, o.TWBuckets, o.Persistent = perServer, headroom, live, admin, buckets, persistent
		p, err := Compute(o)
		if err != nil {
			return
		}
		for _, r := range p.Results {
			if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) || r.Value < 0 || r.Value > math.MaxInt64/2 {
				t.Fatalf("%s = %v for %+v", r.ID, r.Value, o)
			}
		}
	})
}
