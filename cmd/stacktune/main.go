// Command stacktune finds and fixes why a web stack (nginx, app, MySQL or
// MariaDB, memcached or Redis, Linux) is slow. This file is the only place
// that exits; the commands live in the other files and the work in the
// library packages.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd(os.Stdin, os.Stdout, os.Stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "stacktune:", err)
		stop()
		os.Exit(1)
	}
}
