package httpprof

import (
	"math"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/histogram"
)

// stats accumulates one endpoint's requests.
type stats struct {
	count  int64
	status [6]int64 // 1xx..5xx, then unknown
	// closed counts nginx's 499 (the client closed the connection, as a
	// bench run's last requests do): not a 4xx, not the server's error.
	closed int64
	bytes  int64
	// static counts requests for static files (by extension) and their
	// time: a learned /static/:name still knows it serves .js files.
	static, staticUs int64

	// Times are summed in integer microseconds, exact whatever the order.
	timed         int64 // requests with a request time
	timeUs        int64
	timeMin       float64
	timeMax       float64
	h             histogram.Histogram
	upstreamTimed int64
	upstreamUs    int64
	upstreamMax   float64
	upstreamHist  histogram.Histogram
}

func newStats() *stats { return &stats{timeMin: math.Inf(1)} }

func micros(sec float64) int64 { return int64(math.Round(sec * 1e6)) }

func (s *stats) add(r *accesslog.Record, static bool) {
	s.count++
	if static {
		s.static++
		if r.Has&accesslog.HasRequestTime != 0 {
			s.staticUs += micros(r.RequestTime)
		}
	}
	switch {
	case r.Has&accesslog.HasStatus != 0 && r.Status == StatusClientClosed:
		s.closed++
	case r.Has&accesslog.HasStatus != 0 && r.Status >= 100 && r.Status < 600:
		s.status[r.Status/100-1]++
	default:
		s.status[5]++
	}
	s.bytes += r.BodyBytes
	if r.Has&accesslog.HasRequestTime != 0 {
		t := r.RequestTime
		s.timed++
		s.timeUs += micros(t)
		s.timeMin = math.Min(s.timeMin, t)
		s.timeMax = math.Max(s.timeMax, t)
		s.h.Add(t)
	}
	if r.Has&accesslog.HasUpstreamTime != 0 {
		s.upstreamTimed++
		s.upstreamUs += micros(r.UpstreamTime)
		s.upstreamMax = math.Max(s.upstreamMax, r.UpstreamTime)
		s.upstreamHist.Add(r.UpstreamTime)
	}
}

func (s *stats) merge(o *stats) {
	s.count += o.count
	s.static += o.static
	s.staticUs += o.staticUs
	for i := range s.status {
		s.status[i] += o.status[i]
	}
	s.closed += o.closed
	s.bytes += o.bytes
	s.timed += o.timed
	s.timeUs += o.timeUs
	s.timeMin = math.Min(s.timeMin, o.timeMin)
	s.timeMax = math.Max(s.timeMax, o.timeMax)
	s.h.Merge(&o.h)
	s.upstreamTimed += o.upstreamTimed
	s.upstreamUs += o.upstreamUs
	s.upstreamMax = math.Max(s.upstreamMax, o.upstreamMax)
	s.upstreamHist.Merge(&o.upstreamHist)
}

// endpoint renders the stats as a report row (Share is set by the report).
func (s *stats) endpoint(method, path string) Endpoint {
	e := Endpoint{
		Method:     method,
		Path:       path,
		Count:      s.count,
		BytesTotal: s.bytes,
		Status: StatusCounts{
			S1xx: s.status[0], S2xx: s.status[1], S3xx: s.status[2], S4xx: s.status[3], S5xx: s.status[4],
			ClientClosed: s.closed, Other: s.status[5],
		},
		Static:          s.static*2 > s.count,
		StaticRequests:  s.static,
		StaticTimeTotal: float64(s.staticUs) / 1e6,
	}
	if s.count > 0 {
		e.BytesAvg = float64(s.bytes) / float64(s.count)
	}
	if s.timed > 0 {
		e.Timed = s.timed
		e.TimeTotal = float64(s.timeUs) / 1e6
		e.TimeAvg = e.TimeTotal / float64(s.timed)
		e.TimeMin = s.timeMin
		e.TimeMax = s.timeMax
		e.TimeP50 = s.h.Quantile(0.50, s.timeMin, s.timeMax)
		e.TimeP90 = s.h.Quantile(0.90, s.timeMin, s.timeMax)
		e.TimeP95 = s.h.Quantile(0.95, s.timeMin, s.timeMax)
		e.TimeP99 = s.h.Quantile(0.99, s.timeMin, s.timeMax)
	}
	if s.upstreamTimed > 0 {
		total := float64(s.upstreamUs) / 1e6
		e.Upstream = &UpstreamTimes{
			Count: s.upstreamTimed,
			Total: total,
			Avg:   total / float64(s.upstreamTimed),
			P99:   s.upstreamHist.Quantile(0.99, 0, s.upstreamMax),
			Max:   s.upstreamMax,
		}
	}
	return e
}
