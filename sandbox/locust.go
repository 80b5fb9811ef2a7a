package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LocustOptions configures RunLocust.
type LocustOptions struct {
	// File is the locustfile.
	File string
	// Host is the base URL the users load (--host).
	Host string
	// Users and SpawnRate are -u and -r (SpawnRate defaults to Users:
	// every user at once).
	Users, SpawnRate int
	// RunTime is -t, the whole run (required).
	RunTime time.Duration
	// Workers is the number of worker processes on loopback; 0 runs one
	// process without a master.
	Workers int
	// Dir receives the CSV files (Dir/locust_stats.csv...) and the
	// processes' logs. Empty means a new temporary directory, which the
	// caller removes (LocustRun.Dir).
	Dir string
	// Binary overrides the locust binary.
	Binary string
}

// LocustRun is a finished Locust run.
type LocustRun struct {
	// Dir holds the results and logs.
	Dir string
	// CSVPrefix is what --csv was given: CSVPrefix + "_stats.csv".
	CSVPrefix string
	// Elapsed is the master's wall time.
	Elapsed time.Duration
}

const locustPackage = "python3-locust"

// RunLocust runs a Locust test headless to its end: a master on a free
// loopback port with Workers workers connected to it (distributed mode),
// or a single process, and waits for the master to exit. It is bounded by
// ctx and by RunTime plus a minute; every process is killed on return.
func RunLocust(ctx context.Context, opts LocustOptions) (*LocustRun, error) {
	bin, err := lookBinary(opts.Binary, locustPackage, "locust")
	if err != nil {
		return nil, err
	}
	if opts.RunTime <= 0 || opts.Users < 1 || opts.File == "" {
		return nil, errors.New("sandbox: locust needs a file, users and a run time")
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp(tempRoot(), "st-locust-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	file, err := filepath.Abs(opts.File)
	if err != nil {
		return nil, err
	}
	run := &LocustRun{Dir: dir, CSVPrefix: filepath.Join(dir, "locust")}
	spawn := orDefault(opts.SpawnRate, opts.Users)
	common := []string{"-f", file, "--loglevel", "WARNING"}
	master := append(append([]string{}, common...), "--headless", "-u", strconv.Itoa(opts.Users), "-r", strconv.Itoa(spawn),
		"-t", fmt.Sprintf("%ds", int(opts.RunTime.Round(time.Second)/time.Second)), "--csv", run.CSVPrefix, "--host", opts.Host,
		"--stop-timeout", "5", "--exit-code-on-error", "0")
	var port int
	if opts.Workers > 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
		master = append(master, "--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", strconv.Itoa(port),
			"--expect-workers", strconv.Itoa(opts.Workers), "--expect-workers-max-wait", "30")
	}
	ctx, cancel := context.WithTimeout(ctx, opts.RunTime+time.Minute)
	defer cancel()
	start := time.Now()
	mp, err := startProcess(bin, master, dir, filepath.Join(dir, "master.log"))
	if err != nil {
		return nil, err
	}
	defer mp.kill(5 * time.Second)
	var workers []*process
	defer func() {
		for _, w := range workers {
			w.kill(5 * time.Second)
		}
	}()
	for i := 0; i < opts.Workers; i++ {
		args := append(append([]string{}, common...), "--worker", "--master-host", "127.0.0.1", "--master-port", strconv.Itoa(port))
		w, err := startProcess(bin, args, dir, filepath.Join(dir, fmt.Sprintf("worker%d.log", i+1)))
		if err != nil {
			return nil, err
		}
		workers = append(workers, w)
	}
	select {
	case <-mp.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("sandbox: locust did not finish: %w%s", ctx.Err(), logTails(dir))
	}
	run.Elapsed = time.Since(start)
	if mp.waitErr != nil {
		return nil, fmt.Errorf("sandbox: locust master: %w%s", mp.waitErr, logTails(dir))
	}
	if _, err := os.Stat(run.CSVPrefix + "_stats.csv"); err != nil {
		return nil, fmt.Errorf("sandbox: locust wrote no statistics: %w%s", err, logTails(dir))
	}
	return run, nil
}

// logTails is the end of every log in dir, for errors.
func logTails(dir string) string {
	var b strings.Builder
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		if lines := tailFile(l, 20); len(lines) > 0 {
			fmt.Fprintf(&b, "\n--- %s ---\n%s", l, strings.Join(lines, "\n"))
		}
	}
	return b.String()
}
