package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// envInfo says where and with what the numbers were measured.
type envInfo struct {
	date      string
	nproc     int
	cpuModel  string
	mariadb   string
	sysbench  string
	pt        string
	goVersion string
	commit    string
}

// collectEnv gathers the machine and tool versions. Nothing here is fatal:
// an unknown value is reported as "unknown".
func collectEnv(ctx context.Context, pt string, meta *logMeta) envInfo {
	e := envInfo{
		date:      time.Now().Format("2006-01-02"),
		nproc:     runtime.NumCPU(),
		cpuModel:  cpuModel(),
		pt:        toolVersion(ctx, pt, "--version"),
		goVersion: runtime.Version(),
		commit:    gitCommit(ctx),
		mariadb:   "unknown",
		sysbench:  "unknown",
	}
	if meta != nil {
		e.mariadb, e.sysbench = meta.MariaDB, meta.Sysbench
	}
	return e
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// toolVersion runs `bin args...` and returns the last word of its first
// line ("pt-query-digest 3.2.1" -> "3.2.1"), or "unknown".
func toolVersion(ctx context.Context, bin string, args ...string) string {
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	f := strings.Fields(line)
	if len(f) == 0 {
		return "unknown"
	}
	return f[len(f)-1]
}

// gitCommit returns the short commit of the working tree, with "+dirty"
// when it has uncommitted changes.
func gitCommit(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && len(strings.TrimSpace(string(st))) > 0 {
		commit += "+dirty"
	}
	return commit
}
