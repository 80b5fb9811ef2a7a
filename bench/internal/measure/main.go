package measure

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Main is the main function of a benchmark command called name: it parses
// os.Args[1:] with parse (exit code 0 for --help, 2 for a bad flag), then
// calls run with a context cancelled by SIGINT or SIGTERM, says on stderr
// how long that took, and returns 1 if run failed, else 0. Errors are
// printed on stderr prefixed with "name: ".
func Main[C any](name string, parse func(args []string, stderr io.Writer) (C, error), run func(ctx context.Context, cfg C, stdout, stderr io.Writer) error) int {
	cfg, err := parse(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	err = run(ctx, cfg, os.Stdout, os.Stderr)
	fmt.Fprintf(os.Stderr, "%s: finished in %s\n", name, time.Since(start).Round(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	return 0
}
