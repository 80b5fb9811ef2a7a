package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// linux-tw-buckets: past net.ipv4.tcp_max_tw_buckets the kernel destroys
// new TIME_WAIT sockets at once and logs "time wait bucket table
// overflow", dropping TCP's protection against stray old segments. Raise
// it, never lower it (the PHP + MySQL TIME_WAIT write-up: 4096 → 65536; ip-sysctl.txt).
var linuxTWBuckets = ruleFunc{"linux-tw-buckets", LayerLinux, checkLinuxTWBuckets}

// twBucketsNear is the share of the buckets in use that is worth a raise.
const twBucketsNear = 0.8

func checkLinuxTWBuckets(c *Context) []Finding {
	if c.Linux == nil {
		return nil
	}
	b, ok := c.SysctlInt("net.ipv4.tcp_max_tw_buckets")
	tw := int64(c.Linux.TCP.TimeWait.Count)
	if !ok || b <= 0 || float64(tw) < twBucketsNear*float64(b) {
		return nil
	}
	value := max(b, nextPow2(tw*2))
	f := Finding{
		ID:       "linux-tw-buckets",
		Title:    fmt.Sprintf("%d TIME_WAIT sockets against tcp_max_tw_buckets %d", tw, b),
		Severity: Warning,
		Evidence: []Evidence{ev("TIME_WAIT sockets", fmt.Sprint(tw), "sockets", srcTCP),
			ev("net.ipv4.tcp_max_tw_buckets", fmt.Sprint(b), "sockets", sysctlSource("net.ipv4.tcp_max_tw_buckets"))},
		Change: c.SysctlChange("net.ipv4.tcp_max_tw_buckets", fmt.Sprint(value), Increase),
		Effect: "TIME_WAIT sockets keep their 60 s instead of being destroyed early with \"time wait bucket table overflow\" in the kernel log",
		Risk:   changeset.Risk{Memory: "a TIME_WAIT socket takes a few hundred bytes of kernel memory"},
		Source: "the PHP + MySQL TIME_WAIT write-up (4096 → 65536); Linux ip-sysctl.txt (tcp_max_tw_buckets: do not lower it); stacktune plan time-wait-web",
	}
	if tw >= b {
		f.Severity = Critical
	}
	return []Finding{f}
}
