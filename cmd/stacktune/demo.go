package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/demo"
	"github.com/stacktune/stacktune/report"
)

func newDemoCmd() *cobra.Command {
	var o demo.DigestOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the main job on the embedded default: throwaway MariaDB, built-in workload, digests",
		Long: `demo starts a throwaway MariaDB (its own data dir, socket and port; nothing
already running is touched) with the slow log at long_query_time=0 and
performance_schema on, loads a small social-network data set, drives the
built-in workload against it for --duration, then prints the digest of the slow
log and of performance_schema over the same run. Everything it started is
removed when it ends.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Progress = cmd.ErrOrStderr()
			_, err := demo.DigestDemo(cmd.Context(), cmd.OutOrStdout(), o)
			return err
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.Duration, "duration", 5*time.Second, "how long the workload runs (at most 10m)")
	f.IntVar(&o.Connections, "connections", 4, "workload connections")
	f.IntVar(&o.Limit, "limit", 5, "classes shown per digest")
	f.StringVar(&o.Format, "format", report.Text, "output format: "+strings.Join(report.DigestFormats, ", "))
	return cmd
}
