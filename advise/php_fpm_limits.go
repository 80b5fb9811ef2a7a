package advise

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/phpfpmconf"
)

// php-fpm-limits: a PHP-FPM pool that never recycles its workers
// (pm.max_requests = 0, the default) keeps whatever a leaky extension or
// a large request left in their memory, and one with no
// request_terminate_timeout (0, the default) lets a stuck request (a
// remote call without a timeout) hold its worker for good. The smartphone game backend set
// pm.max_requests 2000 and request_terminate_timeout 30.
var phpfpmLimits = ruleFunc{"php-fpm-limits", LayerApp, checkPHPFPMLimits}

const (
	phpfpmMaxRequests      = "2000"
	phpfpmTerminateTimeout = "30s"
)

func checkPHPFPMLimits(c *Context) []Finding {
	if c.PHPFPM == nil {
		return nil
	}
	var out []Finding
	for _, p := range c.PHPFPM.Pools {
		target := changeset.PHPFPMTarget(p.Name)
		where := place(p.File, p.Line)
		src := func(k string) string {
			if _, set := p.Settings[k]; set {
				return where
			}
			return where + " (not set: PHP-FPM's default)"
		}
		if v, _ := p.Value("pm.max_requests"); strings.TrimSpace(v) == "0" {
			f := Finding{
				ID: "php-fpm-limits", Layer: LayerApp, Severity: Info,
				Title:    fmt.Sprintf("Pool %s never recycles its workers (pm.max_requests = 0)", p.Name),
				Evidence: []Evidence{ev("pm.max_requests of pool "+p.Name, v, "requests", src("pm.max_requests"))},
				Change:   &changeset.Change{Kind: changeset.PHPFPM, Target: target, Name: "pm.max_requests", From: v, To: phpfpmMaxRequests, Direction: Set},
				Effect:   "each worker is replaced after 2000 requests, so memory a leak or a large request left behind is given back",
				Risk:     changeset.Risk{Note: "a worker's restart costs a fork and a cold opcache-free start of its state: negligible at 2000 requests"},
				Source:   "the smartphone game backend's write-up (pm.max_requests 2000); php-fpm.conf(5)",
			}
			if st := p.Status; st != nil {
				var most, mem int64
				for _, pr := range st.Processes {
					most, mem = max(most, pr.Requests), max(mem, pr.LastRequestMemory)
				}
				if most > 0 {
					f.Evidence = append(f.Evidence, ev("most requests served by one worker", fmt.Sprint(most), "requests", "PHP-FPM full status"),
						ev("largest last-request memory", fmtBytes(mem), "", "PHP-FPM full status"))
				}
			}
			out = append(out, f)
		}
		if v, _ := p.Value("request_terminate_timeout"); isZeroTime(v) {
			f := Finding{
				ID: "php-fpm-limits", Layer: LayerApp, Severity: Info,
				Title:    fmt.Sprintf("Pool %s lets a request run for ever (request_terminate_timeout = 0)", p.Name),
				Evidence: []Evidence{ev("request_terminate_timeout of pool "+p.Name, v, "", src("request_terminate_timeout"))},
				Change:   &changeset.Change{Kind: changeset.PHPFPM, Target: target, Name: "request_terminate_timeout", From: v, To: phpfpmTerminateTimeout, Direction: Set},
				Effect:   "a request stuck on a call without a timeout is killed after 30 s instead of holding its worker until the pool runs out (max_execution_time does not count time spent waiting)",
				Risk:     changeset.Risk{Note: "a page that legitimately runs longer than 30 s (an export, an upload) is cut off: give it its own pool with a longer timeout"},
				Source:   "the smartphone game backend's write-up (request_terminate_timeout 30); php-fpm.conf(5)",
			}
			if p.Interval != nil {
				if d, ok := p.Interval.Deltas["slow_requests"]; ok && d > 0 {
					f.Evidence = append(f.Evidence, ev("slow requests", num(d), "requests", fmt.Sprintf("PHP-FPM status, delta over %s s", num(p.Interval.Seconds))))
				}
			}
			out = append(out, f)
		}
	}
	return out
}

// isZeroTime reports whether a PHP-FPM time value is 0 (no limit).
func isZeroTime(v string) bool {
	d, ok := phpfpmconf.ParseSeconds(v)
	return ok && d == 0
}
