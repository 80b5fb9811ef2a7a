package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// CommandCheck returns a Check, Restart or Reload function running a
// command (argv, no shell): it fails on a non-zero exit, with the
// command's last lines of output in the error.
func CommandCheck(argv ...string) func(ctx context.Context) error {
	return command(argv, false)
}

// CommandCheckStrict is CommandCheck for checks that report some errors
// only in their output: besides a non-zero exit, any line holding
// "[ERROR]", starting with "error:" or naming an "unknown option" fails
// it. mariadbd --help --verbose is one: a bad value for some InnoDB
// variables makes it print "[ERROR] ... Disabling plugin" and exit 0. The
// error holds those lines (or the last lines of the output).
func CommandCheckStrict(argv ...string) func(ctx context.Context) error {
	return command(argv, true)
}

func command(argv []string, strict bool) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := runCommand(ctx, argv, strict)
		return err
	}
}

// runCommand runs argv (no shell) and returns its standard output. It
// fails on a non-zero exit or, when strict, on an error line in the
// output (see CommandCheckStrict); the error names the command and holds
// the error lines, or the last lines of the output.
func runCommand(ctx context.Context, argv []string, strict bool) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var bad []string
	if strict {
		for _, out := range [][]byte{stderr.Bytes(), stdout.Bytes()} {
			for _, l := range strings.Split(string(out), "\n") {
				l = strings.TrimSpace(l)
				if strings.Contains(l, "[ERROR]") || strings.HasPrefix(strings.ToLower(l), "error:") || strings.Contains(l, "unknown option") {
					bad = append(bad, l)
				}
			}
		}
	}
	if runErr == nil && len(bad) == 0 {
		return stdout.Bytes(), nil
	}
	if runErr == nil {
		runErr = errors.New("errors reported")
	}
	msg := strings.Join(bad, " | ")
	if msg == "" {
		out := stderr.Bytes()
		if len(bytes.TrimSpace(out)) == 0 {
			out = stdout.Bytes()
		}
		msg = lastLines(out, 8)
	}
	return stdout.Bytes(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), runErr, msg)
}

// lastLines keeps the last n non-empty lines of a command's output, or
// only its error lines when it has some.
func lastLines(b []byte, n int) string {
	var ls, errs []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			ls = append(ls, l)
			if strings.Contains(l, "ERROR") || strings.Contains(l, "emerg") {
				errs = append(errs, l)
			}
		}
	}
	if len(errs) > 0 {
		ls = errs // the lines that say what is wrong, not the warnings around them
	}
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " | ")
}
