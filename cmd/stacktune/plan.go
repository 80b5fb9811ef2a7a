package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/capacity"
	"github.com/stacktune/stacktune/report"
)

// planOptions are the flags of `stacktune plan`.
type planOptions struct {
	plan      capacity.Options
	portRange string
	closer    string
	format    string
	fleet     string // a fleet snapshot to take servers, ranges and rates from
	role      string
}

func newPlanCmd() *cobra.Command {
	o := planOptions{plan: capacity.DefaultOptions()}
	d := o.plan
	cmd := &cobra.Command{
		Use:   "plan --rate R --servers N --workers W --response-time T [flags]",
		Short: "Capacity math: max_connections, open files, TIME_WAIT, ports and servers from rate and workers",
		Long: `plan works out the capacity settings of a web stack (web servers with a worker
pool, one MySQL server, memcached/Redis) from the target request rate, the
number of web servers and workers, and the mean response time: concurrent
requests by Little's law, MySQL max_connections, open_files_limit and the
mysqld LimitNOFILE, thread_cache_size, TIME_WAIT sockets and the
tcp_max_tw_buckets that holds them, the ephemeral port range, memcached -c and,
given a measured per-server rate, the number of web servers needed. Each figure
comes with its formula, the numbers it used and the setting to apply.

With --fleet FLEET.json (stacktune collect --hosts) the number of web servers,
their ip_local_port_range and tcp_max_tw_buckets and, unless --per-server-rate is
given, the rate each carries now (its TIME_WAIT sockets to MySQL over 60 s) come
from the fleet, and the MySQL server's max_connections and memcached's -c stand
beside the figures to set.

--rate is the total over all web servers. TIME_WAIT is 60 s in Linux
(TCP_TIMEWAIT_LEN); tcp_fin_timeout does not change it.`,
		Example: `  # the PHP + MySQL TIME_WAIT write-up: 100 Apache servers × 255 workers at 900 req/s each, PHP without persistent connections
  stacktune plan --rate 90000 --servers 100 --workers 255 --response-time 10ms --live-sockets 1024
  stacktune plan --rate 12000 --servers 40 --workers 20 --response-time 50ms --per-server-rate 1000 --headroom 1.2
  stacktune plan --rate 5000 --servers 10 --workers 50 --response-time 30ms --persistent --format json
  # the smartphone game backend: 50 PHP-FPM children on 8 cores, 40 ms of CPU in a 100 ms request: decrease to 20
  stacktune plan --rate 800 --servers 1 --workers 50 --response-time 100ms --cores 8 --cpu-per-request 40ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.fleet != "" {
				return runFleetPlan(cmd, o, cmd.OutOrStdout())
			}
			if o.plan.Servers == 0 {
				return errors.New(`required flag "servers" not set (or give --fleet)`)
			}
			return runPlan(o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.Float64Var(&o.plan.Rate, "rate", 0, "target requests per second over all web servers (the peak)")
	f.IntVar(&o.plan.Servers, "servers", 0, "number of web servers")
	f.IntVar(&o.plan.Workers, "workers", 0, "workers per web server (PHP-FPM pm.max_children, Apache MaxRequestWorkers)")
	f.DurationVar(&o.plan.ResponseTime, "response-time", 0, "mean response time (e.g. 50ms)")
	f.BoolVar(&o.plan.Persistent, "persistent", false, "app → MySQL connections are persistent (default: one per request, as non-persistent PHP)")
	f.StringVar(&o.closer, "closer", string(d.Closer), `side that closes a per-request connection first and holds its TIME_WAIT: "web" or "db"`)
	f.IntVar(&o.plan.OtherFiles, "other-files", d.OtherFiles, "files MySQL needs besides connections (0: max(5000 - 151, 10 + 2 × --table-open-cache), the TIME_WAIT write-up's 4849)")
	f.IntVar(&o.plan.TableOpenCache, "table-open-cache", 0, "the server's table_open_cache (two files per table; 0: unknown)")
	f.Float64Var(&o.plan.PerServerRate, "per-server-rate", 0, "measured requests per second one web server sustains (0 = not measured)")
	f.IntVar(&o.plan.CacheClientsPerWorker, "cache-clients", d.CacheClientsPerWorker, "memcached/Redis connections per worker (0 = no cache)")
	f.DurationVar(&o.plan.TimeWait, "time-wait", d.TimeWait, "TIME_WAIT duration (60s, fixed in Linux)")
	f.StringVar(&o.portRange, "port-range", d.PortRange.String(), "current net.ipv4.ip_local_port_range on the web servers")
	f.IntVar(&o.plan.LiveSockets, "live-sockets", 0, fmt.Sprintf("live sockets per web server besides TIME_WAIT (0 = %d per worker)", capacity.LiveSocketsPerWorker))
	f.IntVar(&o.plan.AdminConnections, "admin-connections", 0, "MySQL connections to add for monitoring and people")
	f.IntVar(&o.plan.TWBuckets, "tw-buckets", d.TWBuckets, "current net.ipv4.tcp_max_tw_buckets")
	f.IntVar(&o.plan.Cores, "cores", 0, "CPUs of one web server (with --cpu-per-request: size workers to the cores, and say decrease)")
	f.DurationVar(&o.plan.CPUPerRequest, "cpu-per-request", 0, "CPU time one request uses on a web server (e.g. 20ms: the app's CPU seconds / requests, from a load test or stacktune audit's app-workers)")
	f.Float64Var(&o.plan.Headroom, "headroom", d.Headroom, "multiply the rate by this margin (e.g. 1.2)")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.CapacityFormats, ", "))
	f.StringVar(&o.fleet, "fleet", "", "a fleet snapshot (collect --hosts): servers, port range, tcp_max_tw_buckets and the rate per server measured there, the DB side's running limits beside the plan")
	f.StringVar(&o.role, "role", "", `with --fleet: the web servers' role (default "web", else the largest)`)
	for _, name := range []string{"rate", "workers", "response-time"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

// inputs checks the format and turns the text flags into the plan's
// options (plan and plan --fleet).
func (o planOptions) inputs() (capacity.Options, error) {
	if err := report.CheckFormat(o.format, report.CapacityFormats...); err != nil {
		return o.plan, err
	}
	pr, err := capacity.ParsePortRange(o.portRange)
	if err != nil {
		return o.plan, err
	}
	o.plan.PortRange = pr
	o.plan.Closer = capacity.Closer(o.closer)
	return o.plan, nil
}

func runPlan(o planOptions, stdout io.Writer) error {
	in, err := o.inputs()
	if err != nil {
		return err
	}
	p, err := capacity.Compute(in)
	if err != nil {
		return err
	}
	if err := report.Capacity(stdout, p, o.format); err != nil {
		return fmt.Errorf("writing the plan: %w", err)
	}
	return nil
}
