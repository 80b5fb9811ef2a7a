package advise

import "fmt"

// nginx-worker-rlimit-nofile: a worker needs a descriptor per connection
// (two per proxied request) plus its files; worker_rlimit_nofile sets the
// workers' limit and must cover worker_connections, or nginx warns
// "worker_connections exceed open file resource limit" and fails at the
// peak. Without the directive the workers inherit the service's
// LimitNOFILE (linux-nginx-nofile).
var nginxWorkerRlimitNofile = ruleFunc{"nginx-worker-rlimit-nofile", LayerNginx, checkNginxWorkerRlimitNofile}

func checkNginxWorkerRlimitNofile(c *Context) []Finding {
	if c.Nginx == nil {
		return nil
	}
	n := c.Nginx
	if n.WorkerRlimitNofile <= 0 || n.WorkerConnections <= 0 {
		return nil
	}
	need := n.WorkerConnections*2 + 1024
	if n.WorkerRlimitNofile >= need {
		return nil
	}
	s, src := c.nginxSetting("worker_rlimit_nofile")
	return []Finding{{
		ID:       "nginx-worker-rlimit-nofile",
		Title:    fmt.Sprintf("worker_rlimit_nofile %d is below 2 × worker_connections %d", n.WorkerRlimitNofile, n.WorkerConnections),
		Severity: Warning,
		Evidence: []Evidence{ev("worker_rlimit_nofile", s.Value, "files", src), c.nginxEv("worker_connections")},
		Change:   nginxChange(nginxMain, "worker_rlimit_nofile", s.Value, fmt.Sprint(need), Increase),
		Effect:   "a worker can hold all its connections (a client and an upstream connection each) and still open files",
		Source:   "nginx docs (worker_rlimit_nofile, worker_connections); the PHP + MySQL TIME_WAIT write-up (file limits for the web server)",
	}}
}
