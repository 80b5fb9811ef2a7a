package main

import (
	"context"
	"runtime"

	"github.com/stacktune/stacktune/bench/internal/measure"
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
		date:      measure.Today(),
		nproc:     measure.NumCPU(),
		cpuModel:  measure.CPUModel(),
		pt:        measure.ToolVersion(ctx, pt, "--version"),
		goVersion: runtime.Version(),
		commit:    measure.GitCommit(ctx),
		mariadb:   "unknown",
		sysbench:  "unknown",
	}
	if meta != nil {
		e.mariadb, e.sysbench = meta.MariaDB, meta.Sysbench
	}
	return e
}
