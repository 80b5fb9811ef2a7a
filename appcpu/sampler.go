package appcpu

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// SamplerOptions say which sampler to use and on what.
type SamplerOptions struct {
	// PProfURL is a Go app's /debug/pprof/profile handler: then PProf.
	PProfURL string
	// PIDs are the app's processes; else the processes listening on
	// Listen, else on Target's host and port (the trace run's URL), are
	// found through /proc. Their children are sampled too (php-fpm's
	// workers).
	PIDs   []int
	Listen string
	Target string
	// Freq is perf's sampling frequency (default DefaultFreq).
	Freq int
}

// frontServers are the processes that sit in front of an app: found on
// the target's port, they are not the app.
var frontServers = []string{"nginx", "haproxy", "envoy", "caddy", "apache2", "httpd", "varnishd", "traefik"}

// NewSampler returns the sampler the options ask for, and a line saying
// what it samples.
func NewSampler(o SamplerOptions) (Sampler, string, error) {
	if o.PProfURL != "" {
		if len(o.PIDs) > 0 || o.Listen != "" {
			return nil, "", errors.New("give either the app's pprof handler or its processes, not both")
		}
		return &PProf{URL: o.PProfURL}, "Go's profiler at " + o.PProfURL + ", one profile a second", nil
	}
	pids, from := o.PIDs, "given"
	if len(pids) == 0 {
		addr := o.Listen
		if addr == "" {
			u, err := url.Parse(o.Target)
			if err != nil || u.Host == "" {
				return nil, "", errors.New("no app to sample: give its processes (--app-pid), its address (--app-listen) or its pprof handler (--pprof)")
			}
			addr = u.Host
			if u.Port() == "" {
				port := "80"
				if u.Scheme == "https" {
					port = "443"
				}
				addr = net.JoinHostPort(u.Hostname(), port)
			}
		}
		found, err := ListenerPIDs(addr)
		if err != nil {
			return nil, "", err
		}
		for _, p := range found {
			c := Comm(p)
			for _, f := range frontServers {
				if c == f || strings.HasPrefix(c, f+":") {
					return nil, "", fmt.Errorf("the process listening on %s is %s (pid %d), a server in front of the app: give the app's own address (--app-listen: php-fpm's socket, the app server's port) or its processes (--app-pid)", addr, c, p)
				}
			}
		}
		pids, from = found, "listening on "+addr
	}
	all := WithChildren(pids)
	names := make([]string, 0, len(all))
	for i, p := range all {
		if i == 8 {
			names = append(names, fmt.Sprintf("and %d more", len(all)-8))
			break
		}
		names = append(names, fmt.Sprintf("%d (%s)", p, Comm(p)))
	}
	return NewPerf(PerfOptions{PIDs: all, Freq: o.Freq}), fmt.Sprintf("perf on the app's processes %s, %s, and their children", strings.Join(names, ", "), from), nil
}
