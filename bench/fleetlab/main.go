// Command fleetlab starts a fleet of SSH hosts on this machine (each an
// sshd in its own network namespace: healthy web hosts, one with another
// ip_local_port_range, one with twice the TIME_WAIT, a db host, one
// unreachable, one whose key does not match known_hosts), prints the
// stacktune commands to run against it, and removes it all on Ctrl-C or
// after -for. It needs root. It is how README's fleet example was made:
//
//	go run ./bench/fleetlab -dir /tmp/lab &
//	bin/stacktune collect --hosts /tmp/lab/hosts.ini --known-hosts /tmp/lab/known_hosts -o fleet.json
//	bin/stacktune audit fleet.json
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/stacktune/stacktune/sandbox"
)

func main() {
	dir := flag.String("dir", "", "directory for hosts.ini, known_hosts and the key (default: a temporary one, removed at the end)")
	web := flag.Int("web", 5, "healthy web hosts (at least 3)")
	tw := flag.Int("time-wait", 200, "TIME_WAIT sockets on each healthy web host (twice on one); they last 60 s and are refilled every 50 s")
	hostVars := flag.String("host-vars", "", "variables added to every host line ({{DIR}} is the host's own directory)")
	keep := flag.Duration("for", 10*time.Minute, "stop after this long")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lab, err := sandbox.StartFleetLab(ctx, sandbox.FleetLabOptions{Dir: *dir, Web: *web, TimeWait: *tw, HostVars: *hostVars})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetlab:", err)
		os.Exit(1)
	}
	defer lab.Stop()
	fmt.Printf("fleet lab in %s:\n", lab.Dir())
	for _, h := range lab.Hosts {
		fault := h.Fault
		if fault == "" {
			fault = "healthy"
		}
		fmt.Printf("  %-6s %-4s %s:%d  %s\n", h.Name, h.Role, h.Addr, h.Port, fault)
	}
	fmt.Printf("\nstacktune collect --hosts %s --known-hosts %s -o fleet.json && stacktune audit fleet.json\n", lab.Inventory, lab.KnownHosts)
	t := time.NewTimer(*keep)
	tick := time.NewTicker(50 * time.Second)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			return
		case <-tick.C:
			if err := lab.FillTimeWait(ctx, *tw); err != nil {
				fmt.Fprintln(os.Stderr, "fleetlab:", err)
			}
		}
	}
}
