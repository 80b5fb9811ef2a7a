package advise

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// nginx-listen-backlog: a burst of connections waits in the listen
// socket's accept queue, `listen ... backlog=N` (511 by default, capped
// at net.core.somaxconn). A queue found more than half full when read is
// the evidence that bursts exceed it (the PHP + MySQL TIME_WAIT write-up: listen 80 backlog=32768
// with somaxconn 32768).
var nginxListenBacklog = ruleFunc{"nginx-listen-backlog", LayerNginx, checkNginxListenBacklog}

func checkNginxListenBacklog(c *Context) []Finding {
	if c.Nginx == nil || c.Linux == nil {
		return nil
	}
	som, _ := c.SysctlInt("net.core.somaxconn")
	queue := map[int]int{}
	for _, l := range c.Linux.TCP.Listen {
		queue[l.Port] = max(queue[l.Port], l.AcceptQueue)
	}
	var out []Finding
	done := map[string]bool{}
	for _, l := range c.Nginx.Listens {
		if l.Unix || l.Implicit || l.Port == 0 {
			continue
		}
		eff := int64(l.Backlog)
		if som > 0 && som < eff {
			eff = som
		}
		q := int64(queue[l.Port])
		overflows := 0.0
		if c.Linux.NetDeltas != nil {
			c.usesRates(LayerLinux)
			overflows = c.Linux.NetDeltas["TcpExt.ListenOverflows"]
		}
		// A queue more than half full when read, or the host's listen
		// queues overflowing over the interval while this one held
		// connections.
		if eff <= 0 || (q*2 < eff && (overflows <= 0 || q == 0)) {
			continue
		}
		key := place(l.File, l.Line)
		if done[key] {
			continue
		}
		done[key] = true
		value := min(65535, nextPow2(int64(l.Backlog)*8))
		args := listenArgs(c, l.File, l.Line)
		f := Finding{
			ID:       "nginx-listen-backlog",
			Title:    fmt.Sprintf("The accept queue of port %d held %d connections of %d", l.Port, q, eff),
			Severity: Warning,
			Evidence: []Evidence{ev(fmt.Sprintf("accept queue of port %d when read", l.Port), fmt.Sprint(q), "connections", srcTCP),
				ev("listen backlog", fmt.Sprint(l.Backlog), "connections", key),
				ev("net.core.somaxconn", fmt.Sprint(som), "connections", sysctlSource("net.core.somaxconn"))},
			Effect: "bursts of connections wait to be accepted instead of having their SYNs dropped and retried a second later",
			Source: "the PHP + MySQL TIME_WAIT write-up (listen 80 backlog=32768, somaxconn 32768); nginx docs (listen backlog)",
			Risk:   changeset.Risk{Restart: true, Note: "a changed backlog takes effect when nginx reopens the socket (restart, or a binary upgrade); a queue that stays full means the workers cannot keep up"},
		}
		if overflows > 0 {
			f.Evidence = append(f.Evidence, ev("TcpExt.ListenOverflows", num(overflows), "", fmt.Sprintf("/proc/net/netstat, delta over %s s (all listeners of the host)", num(c.Linux.IntervalSeconds))))
			if q*2 < eff {
				f.Title = fmt.Sprintf("Listen queues overflowed %s times over the interval; port %d's held %d connections when read", num(overflows), l.Port, q)
			}
		}
		if args != "" {
			f.Change = nginxChange(fmt.Sprintf("nginx %s (%s)", l.Context, key), "listen", args, withBacklog(args, value), Increase)
		}
		if som > 0 && som < value {
			ch := c.SysctlChange("net.core.somaxconn", fmt.Sprint(value), Increase)
			if f.Change == nil {
				f.Change = ch
			} else {
				f.Also = append(f.Also, *ch)
			}
		}
		out = append(out, f)
	}
	return out
}

// listenArgs returns the arguments of the listen directive at file:line.
func listenArgs(c *Context, file string, line int) string {
	for _, d := range c.Nginx.Directives {
		if d.Name() == "listen" && d.File() == file && d.Line() == line {
			return strings.Join(d.Args(), " ")
		}
	}
	return ""
}

// withBacklog sets backlog=n in listen arguments.
func withBacklog(args string, n int64) string {
	f := strings.Fields(args)
	for i, a := range f {
		if strings.HasPrefix(a, "backlog=") {
			f[i] = fmt.Sprintf("backlog=%d", n)
			return strings.Join(f, " ")
		}
	}
	return strings.Join(append(f, fmt.Sprintf("backlog=%d", n)), " ")
}
