package advise

import "fmt"

// nginx-worker-processes: nginx serves with one event loop per worker;
// more workers than cores only add context switches (a decrease), fewer
// leave cores idle under load. auto matches the cores.
var nginxWorkerProcesses = ruleFunc{"nginx-worker-processes", LayerNginx, checkNginxWorkerProcesses}

func checkNginxWorkerProcesses(c *Context) []Finding {
	if c.Nginx == nil {
		return nil
	}
	cores := c.Cores()
	s, src := c.nginxSetting("worker_processes")
	w := c.Nginx.Workers
	if cores <= 0 || w <= 0 || s.Value == "auto" || w == cores {
		return nil
	}
	f := Finding{
		ID:       "nginx-worker-processes",
		Evidence: []Evidence{ev("worker_processes", s.Value, "workers", src), ev("CPUs", fmt.Sprint(cores), "cores", srcCPUs)},
		Source:   "nginx docs (worker_processes: one per core, auto); the smartphone game backend's write-up (more workers is not more throughput)",
	}
	if w > cores {
		f.Title = fmt.Sprintf("%d nginx workers on %d cores", w, cores)
		f.Severity = Warning
		f.Change = nginxChange(nginxMain, "worker_processes", s.Value, "auto", Decrease)
		f.Effect = "one event loop per core: the extra workers only compete for the same cores and add context switches"
	} else {
		f.Title = fmt.Sprintf("%d nginx worker(s) on %d cores", w, cores)
		f.Severity = Info
		f.Change = nginxChange(nginxMain, "worker_processes", s.Value, "auto", Increase)
		f.Effect = "every core can run an event loop when nginx is busy (TLS, gzip, many connections)"
	}
	f.Risk.Restart = false
	f.Risk.Note = "a reload (nginx -s reload) starts the new workers"
	return []Finding{f}
}
