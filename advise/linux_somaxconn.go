package advise

import (
	"fmt"
	"sort"

	"github.com/stacktune/stacktune/changeset"
)

// linux-somaxconn: the kernel caps every listen() backlog at
// net.core.somaxconn, silently: nginx's `listen ... backlog=N`, MySQL's
// back_log and memcached's -b get no more (the PHP + MySQL TIME_WAIT write-up raised somaxconn
// from 128 to 32768 with nginx's backlog). The SYN queue is capped by
// net.ipv4.tcp_max_syn_backlog as well.
var linuxSomaxconn = ruleFunc{"linux-somaxconn", LayerLinux, checkLinuxSomaxconn}

// backlogAsk is one service's requested listen backlog.
type backlogAsk struct {
	who     string
	backlog int64
	source  string
}

// backlogsAsked lists the backlogs the services ask for.
func backlogsAsked(c *Context) []backlogAsk {
	var out []backlogAsk
	if c.Nginx != nil {
		for _, l := range c.Nginx.Listens {
			if l.Unix || l.Backlog <= 0 {
				continue
			}
			src := "nginx default (511)"
			if !l.BacklogDefault {
				src = fmt.Sprintf("%s:%d", l.File, l.Line)
			}
			out = append(out, backlogAsk{fmt.Sprintf("nginx listen %s:%d", l.Address, l.Port), int64(l.Backlog), src})
		}
	}
	if c.mysqlReady() {
		if v, ok := c.Int("back_log"); ok && v > 0 {
			out = append(out, backlogAsk{"MySQL back_log", v, srcVariables})
		}
	}
	if c.Memcached != nil && !c.Memcached.Unix && c.Memcached.TCPBacklog > 0 {
		out = append(out, backlogAsk{"memcached -b", c.Memcached.TCPBacklog, "stats settings tcp_backlog"})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].backlog > out[j].backlog })
	return out
}

func checkLinuxSomaxconn(c *Context) []Finding {
	if c.Linux == nil {
		return nil
	}
	som, ok := c.SysctlInt("net.core.somaxconn")
	if !ok {
		return nil
	}
	asks := backlogsAsked(c)
	if len(asks) == 0 || asks[0].backlog <= som {
		return nil
	}
	want := asks[0].backlog
	f := Finding{
		ID:       "linux-somaxconn",
		Title:    fmt.Sprintf("%s asks for a backlog of %d; the kernel caps it at somaxconn %d", asks[0].who, want, som),
		Severity: Info,
		Evidence: []Evidence{ev("net.core.somaxconn", fmt.Sprint(som), "connections", sysctlSource("net.core.somaxconn"))},
		Change:   c.SysctlChange("net.core.somaxconn", fmt.Sprint(want), Increase),
		Effect:   "connections arriving in a burst wait in the accept queue the services asked for instead of being dropped (clients retry the SYN after 1 s, then 3 s)",
		Risk:     changeset.Risk{Note: "the queue only absorbs bursts: a service that cannot keep up needs more workers, not a longer queue"},
		Source:   "the PHP + MySQL TIME_WAIT write-up (somaxconn 128 → 32768 with nginx listen backlog); Linux listen(2) and ip-sysctl.txt",
	}
	for _, a := range asks {
		if a.backlog > som {
			f.Evidence = append(f.Evidence, ev(a.who+" backlog", fmt.Sprint(a.backlog), "connections", a.source))
		}
	}
	// A listener whose accept queue was not empty when read is evidence
	// that bursts happen.
	for _, l := range c.Linux.TCP.Listen {
		if l.AcceptQueue > 0 {
			f.Evidence = append(f.Evidence, ev(fmt.Sprintf("accept queue of %s:%d when read", l.Address, l.Port), fmt.Sprint(l.AcceptQueue), "connections", srcTCP))
			if int64(l.AcceptQueue) >= som/2 {
				f.Severity = Warning
			}
		}
	}
	if nd, ok := c.SysctlInt("net.core.netdev_max_backlog"); ok {
		// The PHP + MySQL TIME_WAIT write-up raised it with somaxconn (1000 → 8192), but it is the
		// per-CPU queue of received packets, unrelated to listen(): the
		// evidence for it is drops in /proc/net/softnet_stat, which the
		// snapshot does not have.
		f.Evidence = append(f.Evidence, ev("net.core.netdev_max_backlog", fmt.Sprint(nd), "packets per CPU", sysctlSource("net.core.netdev_max_backlog")))
		f.Risk.Note = joinNote(f.Risk.Note, "net.core.netdev_max_backlog (the PHP + MySQL TIME_WAIT write-up: 1000 → 8192) is the per-CPU queue of received packets, not of connections: raise it only if the second column of /proc/net/softnet_stat (drops) grows")
	}
	if syn, ok := c.SysctlInt("net.ipv4.tcp_max_syn_backlog"); ok && syn < want {
		f.Evidence = append(f.Evidence, ev("net.ipv4.tcp_max_syn_backlog", fmt.Sprint(syn), "connections", sysctlSource("net.ipv4.tcp_max_syn_backlog")))
		f.Also = append(f.Also, *c.SysctlChange("net.ipv4.tcp_max_syn_backlog", fmt.Sprint(want), Increase))
	}
	return []Finding{f}
}
