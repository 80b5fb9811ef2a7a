package main

import (
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/stacktune/stacktune/bench/internal/measure"
	"github.com/stacktune/stacktune/sandbox"
)

// sysbench workload shape: small enough to prepare in seconds, the shape
// of the reference log (sysbench's bundled oltp_read_write.lua).
const (
	sbTables    = 4
	sbTableSize = 10000
	sbDatabase  = "sbtest"
	pollEvery   = 100 * time.Millisecond
	stopGrace   = 10 * time.Second
)

// logMeta describes how a cached log was made; it is stored beside the log
// as <log>.meta.json.
type logMeta struct {
	MariaDB     string    `json:"mariadb"`
	Sysbench    string    `json:"sysbench"`
	Workload    string    `json:"workload"`
	Threads     int       `json:"threads"`
	Tables      int       `json:"tables"`
	TableSize   int       `json:"table_size"`
	GeneratedAt time.Time `json:"generated_at"`
	GenSeconds  float64   `json:"gen_seconds"`
	Bytes       int64     `json:"bytes"`
}

// logInfo is the slow log under test.
type logInfo struct {
	path   string
	gzPath string // "" unless --gzip
	bytes  int64
	meta   *logMeta // nil for a --log given by the user without metadata
}

// prepareLog returns the slow log to benchmark: --log, or the cached
// generated log of --size-mb, generating it if needed.
func prepareLog(ctx context.Context, cfg config, stderr io.Writer) (logInfo, error) {
	var lg logInfo
	if cfg.logPath != "" {
		lg.path = cfg.logPath
	} else {
		if err := os.MkdirAll(cfg.cacheDir, 0o755); err != nil {
			return lg, fmt.Errorf("creating the cache directory: %w", err)
		}
		lg.path = filepath.Join(cfg.cacheDir, fmt.Sprintf("oltp_read_write-%dMiB.log", cfg.sizeMiB))
		if _, err := os.Stat(lg.path); errors.Is(err, os.ErrNotExist) {
			if err := generate(ctx, cfg, lg.path, stderr); err != nil {
				return lg, err
			}
		} else if err != nil {
			return lg, fmt.Errorf("checking the cached log: %w", err)
		} else {
			fmt.Fprintf(stderr, "digestbench: reusing %s\n", lg.path)
		}
	}
	st, err := os.Stat(lg.path)
	if err != nil {
		return lg, fmt.Errorf("slow log: %w", err)
	}
	lg.bytes = st.Size()
	lg.meta = readMeta(lg.path)
	if cfg.gzip {
		lg.gzPath = lg.path + ".gz"
		if err := ensureGzip(lg.path, lg.gzPath, stderr); err != nil {
			return lg, err
		}
	}
	return lg, nil
}

// readMeta reads the log's metadata, or returns nil if there is none.
func readMeta(log string) *logMeta {
	var m logMeta
	if !measure.ReadMeta(log, &m) {
		return nil
	}
	return &m
}

// generate fills a throwaway MariaDB's slow log with sysbench
// oltp_read_write until it reaches --size-mb, and copies it to dst.
func generate(ctx context.Context, cfg config, dst string, stderr io.Writer) error {
	sb, err := measure.LookTool("sysbench", "sysbench")
	if err != nil {
		return err
	}
	target := int64(cfg.sizeMiB) << 20
	fmt.Fprintf(stderr, "digestbench: generating a %d MiB slow log (sysbench oltp_read_write, %d threads)\n", cfg.sizeMiB, cfg.threads)
	start := time.Now()
	srv, err := sandbox.StartMariaDB(ctx, sandbox.MariaDBOptions{Options: map[string]string{
		"slow_query_log":  "OFF", // on only for `sysbench run`
		"long_query_time": "0",
		// The log is the product, not the data: skip the per-commit fsync.
		"innodb_flush_log_at_trx_commit": "2",
		"innodb_buffer_pool_size":        "256M",
	}})
	if err != nil {
		return fmt.Errorf("starting MariaDB: %w", err)
	}
	defer srv.Stop()
	sbLog := dst + ".sysbench.txt"
	g := generator{srv: srv, sysbench: sb, threads: cfg.threads, out: sbLog}
	if err := g.prepare(ctx); err != nil {
		return err
	}
	if err := g.fill(ctx, target, cfg.genTime); err != nil {
		return err
	}
	if err := measure.CopyFile(srv.SlowLogPath(), dst); err != nil {
		return err
	}
	st, err := os.Stat(dst)
	if err != nil {
		return fmt.Errorf("generated log: %w", err)
	}
	meta := logMeta{
		MariaDB:     strings.TrimSuffix(srv.Version(), "-log"),
		Sysbench:    measure.ToolVersion(ctx, sb, "--version"),
		Workload:    "oltp_read_write",
		Threads:     cfg.threads,
		Tables:      sbTables,
		TableSize:   sbTableSize,
		GeneratedAt: time.Now().UTC().Truncate(time.Second),
		GenSeconds:  time.Since(start).Seconds(),
		Bytes:       st.Size(),
	}
	if err := measure.WriteMeta(dst, meta); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "digestbench: wrote %s (%.1f MiB) in %s\n", dst, measure.MiB(st.Size()), time.Since(start).Round(time.Second))
	return srv.Stop()
}

// generator drives sysbench against one sandboxed server.
type generator struct {
	srv      *sandbox.MariaDB
	sysbench string
	threads  int
	out      string // sysbench's output, appended
}

func (g generator) args(extra ...string) []string {
	a := []string{
		"oltp_read_write",
		"--db-driver=mysql",
		"--mysql-socket=" + g.srv.Socket(),
		"--mysql-user=root",
		"--mysql-db=" + sbDatabase,
		fmt.Sprintf("--tables=%d", sbTables),
		fmt.Sprintf("--table-size=%d", sbTableSize),
		fmt.Sprintf("--threads=%d", g.threads),
	}
	return append(a, extra...)
}

// prepare creates and loads the sysbench tables while the slow log is off.
func (g generator) prepare(ctx context.Context) error {
	if _, err := g.srv.DB().ExecContext(ctx, "CREATE DATABASE "+sbDatabase); err != nil {
		return fmt.Errorf("creating database %s: %w", sbDatabase, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	out, err := os.OpenFile(g.out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("sysbench output: %w", err)
	}
	defer out.Close()
	cmd := exec.CommandContext(ctx, g.sysbench, g.args("prepare")...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("sysbench prepare: %w (output in %s)", err, g.out)
	}
	return nil
}

// fill turns the slow log on, runs sysbench until the log holds target
// bytes (or limit passes, which is an error), then turns the log off. The
// SET GLOBALs go through a connection opened while the log was off, so its
// session never logs: only sysbench's connections, opened after the SET
// GLOBAL slow_query_log=ON, write to the log.
func (g generator) fill(ctx context.Context, target int64, limit time.Duration) error {
	conn, err := g.srv.DB().Conn(ctx)
	if err != nil {
		return fmt.Errorf("connecting to MariaDB: %w", err)
	}
	defer conn.Close()
	if err := setSlowLog(ctx, conn, "ON"); err != nil {
		return err
	}
	runErr := g.runUntil(ctx, target, limit)
	if err := setSlowLog(ctx, conn, "OFF"); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

func setSlowLog(ctx context.Context, conn *sql.Conn, v string) error {
	if _, err := conn.ExecContext(ctx, "SET GLOBAL slow_query_log = "+v); err != nil {
		return fmt.Errorf("SET GLOBAL slow_query_log = %s: %w", v, err)
	}
	return nil
}

// runUntil runs `sysbench run --time=limit` and stops it (SIGINT, then
// SIGKILL) as soon as the slow log reaches target bytes.
func (g generator) runUntil(ctx context.Context, target int64, limit time.Duration) error {
	out, err := os.OpenFile(g.out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("sysbench output: %w", err)
	}
	defer out.Close()
	secs := int(limit.Seconds())
	cmd := exec.Command(g.sysbench, g.args("--events=0", fmt.Sprintf("--time=%d", secs), "--rand-seed=1", "run")...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting sysbench run: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			size, _ := fileSize(g.srv.SlowLogPath())
			return fmt.Errorf("sysbench run ended (%v) with the slow log at %.1f of %.0f MiB: raise --gen-time (output in %s)",
				err, measure.MiB(size), measure.MiB(target), g.out)
		case <-ctx.Done():
			stopProcess(cmd, done)
			return fmt.Errorf("generating the slow log: %w", ctx.Err())
		case <-tick.C:
			size, err := fileSize(g.srv.SlowLogPath())
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				stopProcess(cmd, done)
				return fmt.Errorf("watching the slow log: %w", err)
			}
			if size >= target {
				stopProcess(cmd, done)
				return nil
			}
		}
	}
}

// stopProcess interrupts a started command and waits for it, killing it
// after stopGrace.
func stopProcess(cmd *exec.Cmd, done <-chan error) {
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(stopGrace):
		_ = cmd.Process.Kill()
		<-done
	}
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// ensureGzip writes a gzip copy of src to dst unless dst exists.
func ensureGzip(src, dst string, stderr io.Writer) error {
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	fmt.Fprintf(stderr, "digestbench: writing %s\n", dst)
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("opening the slow log: %w", err)
	}
	defer in.Close()
	return measure.WriteAtomic(dst, func(w io.Writer) error {
		zw := gzip.NewWriter(w)
		if _, err := io.Copy(zw, in); err != nil {
			return err
		}
		return zw.Close()
	})
}

// stageLog copies the log (and its gzip copy) into a new directory under
// dir, for timed runs that must not depend on the page cache. cleanup
// removes the copies.
func stageLog(lg logInfo, dir string) (staged logInfo, cleanup func(), err error) {
	staged = lg
	cleanup, err = measure.Stage(dir, "digestbench-", &staged.path, &staged.gzPath)
	if err != nil {
		return lg, nil, err
	}
	return staged, cleanup, nil
}
