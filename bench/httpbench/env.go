package main

import (
	"context"
	"os/exec"
	"runtime"
	"strings"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// envInfo says where and with what the numbers were measured.
type envInfo struct {
	date      string
	nproc     int
	cpuModel  string
	goaccess  string
	awks      []string // "mawk 1.3.4", in the order of the rows
	goVersion string
	commit    string
}

// collectEnv gathers the machine and tool versions. Nothing here is fatal:
// an unknown value is reported as "unknown".
func collectEnv(ctx context.Context, tl tools) envInfo {
	e := envInfo{
		date:      measure.Today(),
		nproc:     measure.NumCPU(),
		cpuModel:  measure.CPUModel(),
		goaccess:  "not run",
		goVersion: runtime.Version(),
		commit:    measure.GitCommit(ctx),
	}
	if tl.goaccess != "" {
		e.goaccess = versionOf(ctx, tl.goaccess, "--version")
	}
	for _, a := range tl.awks {
		arg := "--version"
		if a.name == "mawk" {
			arg = "-Wversion"
		}
		e.awks = append(e.awks, a.name+" "+versionOf(ctx, a.path, arg))
	}
	return e
}

// versionOf runs `bin arg` and returns the first word of the first line
// of its output that starts with a digit ("GoAccess - 1.7." -> "1.7",
// "GNU Awk 5.2.1, API 3.2" -> "5.2.1"), or "unknown".
func versionOf(ctx context.Context, bin, arg string) string {
	out, _ := exec.CommandContext(ctx, bin, arg).CombinedOutput()
	return firstVersion(string(out))
}

func firstVersion(out string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	for _, w := range strings.Fields(line) {
		if w[0] >= '0' && w[0] <= '9' {
			return strings.TrimRight(w, ".,;")
		}
	}
	return "unknown"
}
