package diagnose

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/stacktune/stacktune/apply"
)

// CommandTimeout bounds a command given to Command.
const CommandTimeout = 5 * time.Minute

// commandOutputMax is how much of a failed command's output its error
// quotes.
const commandOutputMax = 2048

// Command turns a command line (`systemctl restart app`) into an
// Options.AppRestart: split as a POSIX shell splits words and quotes
// (apply.ParseCommandLine: no variables, globs, pipes or redirections) and
// run without a shell, bounded by CommandTimeout. A command that fails
// returns an error with the end of its output.
func Command(line string) (func(ctx context.Context) error, error) {
	argv, err := apply.ParseCommandLine(line)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, CommandTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(out.String())
			if len(msg) > commandOutputMax {
				msg = "…" + msg[len(msg)-commandOutputMax:]
			}
			if msg != "" {
				return fmt.Errorf("%s: %w: %s", line, err, msg)
			}
			return fmt.Errorf("%s: %w", line, err)
		}
		return nil
	}, nil
}
