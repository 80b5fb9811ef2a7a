package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/stacktune/stacktune/fleet"

	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/loadgen"
)

// ledgerMeta is what a command knows of its runs for the history's
// ledger: the load's hash (the scenario file's bytes, or the URL as shown,
// with the connections and rate), and the app's commit (of appDir, else
// of the current directory).
func ledgerMeta(command, scenarioPath, url string, load loadgen.Options, appDir string) history.Meta {
	m := history.Meta{Command: command}
	src := []byte(loadgen.MaskURL(url))
	if scenarioPath != "" {
		if b, err := input.ReadFile(scenarioPath, 64<<20); err == nil {
			src = b
		}
	}
	m.ScenarioHash = history.ScenarioHash(src, fmt.Sprintf("c=%d rate=%g", load.Connections, load.Rate))
	if appDir == "" {
		appDir, _ = os.Getwd()
	}
	if appDir != "" {
		m.AppCommit = history.GitCommit(appDir)
	}
	return m
}

// fleetRun is a collection from every host of an inventory running beside
// a bench.
type fleetRun struct {
	done chan struct{}
	fs   *fleet.Snapshot
	err  error
}

// startFleetRun starts `stacktune collect` on every host of o, each
// reading its counters over interval (the bench's length).
func startFleetRun(ctx context.Context, o fleetFlags, interval time.Duration) (*fleetRun, error) {
	hosts, err := o.Hosts()
	if err != nil {
		return nil, err
	}
	r := &fleetRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.fs, r.err = fleet.Collect(ctx, hosts, fleet.CollectOptions{Dialer: o.Dialer(), Binary: o.Binary(),
			Args: []string{"--interval=" + max(interval, time.Second).String()}, Parallel: o.Parallel, HostTimeout: o.HostTimeout + interval})
		if r.fs != nil {
			r.fs.Inventory = o.Inventory
		}
	}()
	return r, nil
}

func (r *fleetRun) wait() (*fleet.Snapshot, error) {
	<-r.done
	return r.fs, r.err
}
