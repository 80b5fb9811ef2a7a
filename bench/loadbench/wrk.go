package main

import (
	"fmt"
	"strconv"
	"strings"
)

// wrkResult is what loadbench reads from wrk's output.
type wrkResult struct {
	requests int64
	errors   int64 // socket errors (connect, read, write, timeout) and non-2xx/3xx responses
	elapsed  float64
	rps      float64
	p50, p99 float64 // ms, from --latency
}

// parseWrk reads wrk --latency output:
//
//	  Latency Distribution
//	     50%    3.78ms
//	     99%   12.01ms
//	  435 requests in 1.00s, 2.26MB read
//	  Socket errors: connect 0, read 0, write 0, timeout 0
//	  Non-2xx or 3xx responses: 5
//	Requests/sec:    433.64
func parseWrk(out string) (wrkResult, error) {
	var w wrkResult
	var haveReqs, haveRPS bool
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		f := strings.Fields(line)
		switch {
		case len(f) >= 4 && f[1] == "requests" && f[2] == "in":
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return w, fmt.Errorf("request count in %q", line)
			}
			d, err := parseWrkDuration(strings.TrimSuffix(f[3], ","))
			if err != nil {
				return w, fmt.Errorf("duration in %q", line)
			}
			w.requests, w.elapsed, haveReqs = n, d/1000, true
		case strings.HasPrefix(line, "Requests/sec:") && len(f) == 2:
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return w, fmt.Errorf("rate in %q", line)
			}
			w.rps, haveRPS = v, true
		case strings.HasPrefix(line, "Socket errors:"):
			for _, part := range strings.Split(strings.TrimPrefix(line, "Socket errors:"), ",") {
				kv := strings.Fields(part)
				if len(kv) == 2 {
					n, _ := strconv.ParseInt(kv[1], 10, 64)
					w.errors += n
				}
			}
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:") && len(f) == 5:
			n, _ := strconv.ParseInt(f[4], 10, 64)
			w.errors += n
		case len(f) == 2 && (f[0] == "50%" || f[0] == "99%"):
			d, err := parseWrkDuration(f[1])
			if err != nil {
				return w, fmt.Errorf("latency in %q", line)
			}
			if f[0] == "50%" {
				w.p50 = d
			} else {
				w.p99 = d
			}
		}
	}
	if !haveReqs || !haveRPS {
		return w, fmt.Errorf("no \"N requests in\" or \"Requests/sec:\" line")
	}
	return w, nil
}

// parseWrkDuration parses wrk's "12.01ms", "850.00us", "1.20s", "2.00m"
// into milliseconds.
func parseWrkDuration(s string) (float64, error) {
	for _, u := range []struct {
		suffix string
		ms     float64
	}{{"us", 0.001}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, err
			}
			return f * u.ms, nil
		}
	}
	return 0, fmt.Errorf("unknown unit in %q", s)
}
