package main

import (
	"io"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "stacktune",
		Short: "Find and fix why a web stack is slow, and prove the fix with a benchmark",
		Long: `stacktune measures a web stack (nginx, app, MySQL/MariaDB, memcached/Redis,
Linux), finds where the time goes, and says what to change, with the evidence.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newDigestCmd(), newHTTPCmd(), newBenchCmd(), newHistoryCmd(), newCollectCmd(), newAuditCmd(), newDemoCmd(), newPlanCmd(), newIndexesCmd(), newApplyCmd(), newRollbackCmd(), newDiagnoseCmd(), newTuneCmd(), newABCmd(), newSearchCmd(),
		newTPCCCmd(), newEndpointsCmd(), newServeCmd())
	return root
}
