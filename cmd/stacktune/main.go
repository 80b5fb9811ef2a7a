// Command stacktune finds and fixes why a web stack (nginx, app, MySQL or
// MariaDB, memcached or Redis, Linux) is slow. This file is the only place
// that exits; the commands live in the other files and the work in the
// library packages.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// forcedExitGrace is how long a command may take to return after SIGINT
// or SIGTERM cancelled its context before stacktune exits without it: a
// command stuck outside a loop that watches its context (a read of a pipe
// nobody writes, say) must not make the signal useless.
const forcedExitGrace = 5 * time.Second

// noForcedExit is the annotation of a command that changes systems (apply,
// rollback, tune, demo, tpcc prepare): it is never cut short by the forced
// exit, nor by a second signal, because stopping it between a change and
// its rollback would leave a system half changed; it ends its transaction
// itself once its context is cancelled. The value is "" for always, or the
// name of a boolean flag that makes the command change systems (indexes
// --apply).
const noForcedExit = "stacktune/no-forced-exit"

func main() {
	root := newRootCmd(os.Stdin, os.Stdout, os.Stderr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	cmd, _, err := root.Find(os.Args[1:])
	if err != nil {
		cmd = root
	}
	go watchSignals(sigs, cancel, cmd, os.Stderr, func(code int) { os.Exit(code) })
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "stacktune:", err)
		os.Exit(1)
	}
}

// watchSignals cancels the command's context at the first signal. A
// command that has not returned forcedExitGrace later, or at a second
// signal, is ended by exit with 128 + the signal's number (130 for SIGINT,
// 143 for SIGTERM), saying so, unless it opted out (noForcedExit).
func watchSignals(sigs <-chan os.Signal, cancel func(), cmd *cobra.Command, stderr io.Writer, exit func(int)) {
	first := <-sigs
	cancel()
	code := 128 + signalNumber(first)
	name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	if optedOut(cmd) {
		msg := fmt.Sprintf("stacktune: %s changes systems and is not cut short after %s: it ends once its transaction is done or rolled back (SIGKILL would leave it half done)\n", name, signalName(first))
		timer := time.NewTimer(forcedExitGrace)
		for {
			select {
			case <-timer.C:
			case <-sigs:
			}
			fmt.Fprint(stderr, msg)
		}
	}
	timer := time.NewTimer(forcedExitGrace)
	select {
	case <-timer.C:
		fmt.Fprintf(stderr, "stacktune: %s did not stop within %v of %s: exiting now, with status %d\n", name, forcedExitGrace, signalName(first), code)
	case s := <-sigs:
		code = 128 + signalNumber(s)
		fmt.Fprintf(stderr, "stacktune: %s: a second signal (%s): exiting now, with status %d\n", name, signalName(s), code)
	}
	exit(code)
}

// optedOut reports whether cmd opted out of the forced exit, as it runs:
// the annotation's flag is read once the command has parsed its flags.
func optedOut(cmd *cobra.Command) bool {
	flag, ok := cmd.Annotations[noForcedExit]
	if !ok {
		return false
	}
	if flag == "" {
		return true
	}
	f := cmd.Flags().Lookup(flag)
	return f != nil && f.Value.String() == "true"
}

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

func signalNumber(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return int(n)
	}
	return int(syscall.SIGTERM)
}
