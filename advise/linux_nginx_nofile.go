package advise

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// linux-nginx-nofile: without worker_rlimit_nofile, nginx's workers keep
// the file limit systemd gave the service (LimitNOFILE), often 1024 soft;
// each connection needs a descriptor (two when proxied).
var linuxNginxNofile = ruleFunc{"linux-nginx-nofile", LayerLinux, checkLinuxNginxNofile}

func checkLinuxNginxNofile(c *Context) []Finding {
	if c.Nginx == nil || c.Linux == nil || c.Nginx.WorkerRlimitNofile > 0 || c.Nginx.WorkerConnections <= 0 {
		return nil
	}
	procs := c.nginxProcesses()
	need := int64(c.Nginx.WorkerConnections*2 + 1024)
	var low int64 = -1
	var seen []string
	for _, p := range procs {
		l, ok := p.Limits["nofile"]
		if !ok || l.Soft < 0 {
			continue
		}
		if low < 0 || l.Soft < low {
			low = l.Soft
		}
		seen = append(seen, fmt.Sprintf("nginx[%d] soft %d", p.PID, l.Soft))
	}
	if low < 0 || low >= need {
		return nil
	}
	return []Finding{{
		ID:       "linux-nginx-nofile",
		Title:    fmt.Sprintf("nginx workers may open %d files; worker_connections %d needs %d", low, c.Nginx.WorkerConnections, need),
		Severity: Warning,
		Evidence: []Evidence{ev("nginx nofile limit", strings.Join(seen, "; "), "files", "/proc/PID/limits (Max open files)"), c.nginxEv("worker_connections")},
		Change:   &changeset.Change{Kind: changeset.Systemd, Target: "nginx.service", Name: "LimitNOFILE", From: fmt.Sprint(low), To: fmt.Sprint(need), Direction: Increase},
		Effect:   "workers do not fail accept() with EMFILE (\"Too many open files\") before worker_connections is reached",
		Risk:     changeset.Risk{Restart: true, Note: "or set worker_rlimit_nofile in nginx.conf, which a reload applies"},
		Source:   "the PHP + MySQL TIME_WAIT write-up (LimitNOFILE for the web server, via systemctl edit); nginx docs (worker_rlimit_nofile)",
	}}
}
