package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/internal/atomicfile"
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
	root.AddCommand(newDigestCmd(), newHTTPCmd(), newBenchCmd(), newHistoryCmd(), newCollectCmd(), newAuditCmd(), newDemoCmd(), newPlanCmd(), newIndexesCmd(), newApplyCmd(), newRollbackCmd(), newDiagnoseCmd(), newTuneCmd(),
		newTPCCCmd(), newEndpointsCmd())
	return root
}

// writeReportFile renders a report into path, atomically and with its
// directory made, and says so on stderr as "stacktune CMD: report written
// to PATH"; the render runs first, so a failed one writes nothing.
func writeReportFile(path, cmd string, stderr io.Writer, render func(io.Writer) error) error {
	var b bytes.Buffer
	if err := render(&b); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "stacktune %s: report written to %s\n", cmd, path)
	return nil
}
