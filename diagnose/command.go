package diagnose

import (
	"context"
	"fmt"
	"time"

	"github.com/stacktune/stacktune/apply"
)

// CommandTimeout bounds a command given to Command.
const CommandTimeout = 5 * time.Minute

// Command turns a command line (`systemctl restart app`) into an
// Options.AppRestart: split as a POSIX shell splits words and quotes
// (apply.ParseCommandLine: no variables, globs, pipes or redirections) and
// run without a shell (apply.CommandCheck: a failure holds the end of its
// output), bounded by CommandTimeout.
func Command(line string) (func(ctx context.Context) error, error) {
	argv, err := apply.ParseCommandLine(line)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	run := apply.CommandCheck(argv...)
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, CommandTimeout)
		defer cancel()
		return run(ctx)
	}, nil
}
