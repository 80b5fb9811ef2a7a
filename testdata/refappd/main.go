// Command refappd runs the reference app (refstack/refapp) as a process
// of its own, for the tests that profile it (a profiler must see the
// app's CPU apart from the test's): its config is the JSON of
// refapp.Config in $REFAPPD_CONFIG; it prints its base URL on the first
// line of its output and serves until SIGTERM or SIGINT.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/stacktune/stacktune/refstack/refapp"
)

func main() {
	var cfg refapp.Config
	if err := json.Unmarshal([]byte(os.Getenv("REFAPPD_CONFIG")), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "refappd: REFAPPD_CONFIG:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s, err := refapp.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "refappd:", err)
		os.Exit(2)
	}
	fmt.Println(s.URL())
	<-ctx.Done()
	s.Close()
}
