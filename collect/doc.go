// Package collect gathers read-only evidence from every layer of a web stack
// into one Snapshot: MySQL/MariaDB (variables, status sampled twice for
// rates, InnoDB figures, data sizes), Linux (cores, memory, sysctls, process
// limits, TCP sockets by state and port), nginx (its configuration, parsed,
// with includes), memcached and Redis. One collector per file, each behind
// the Collector interface; a failing collector is recorded in the snapshot,
// never fatal. Snapshots are JSON so they can be audited on another machine.
//
// The nginx collector asks package nginxconf, the one owner of nginx
// configurations, for everything about the configuration: its tree of
// directives (Nginx.Directives is nginxconf's Listing: its Directive
// type, the entries of types {} left out, written to JSON and read back
// as a tree), the values nginx applies in a block, with nginx's
// inheritance rules (nginxconf's Effective, Value and Overrides), a
// listen directive's address and parameters (ParseListen) and a
// log_format's text (Config.LogFormat, the lookup the access-log profiler
// uses too). collect keeps no directive type, tree, listen parser,
// log_format lookup or inheritance rule of its own: the other Nginx types
// are the snapshot's plain data, and nginx.go derives the figures the
// rules read from nginxconf's answers.
//
// # The registry
//
// Every collector registers itself (register, from an init function in its
// file) with a Registration: its name, the snapshot layer it fills, its
// place in a run, what it needs from the caller (NeedMySQL: an opened
// server), its own flags, which flag asks for it or turns it off, and New,
// which starts it from a Config. Everything else comes from that table:
//
//   - `stacktune collect` and `stacktune audit` define one flag per
//     registered Flag (--memcached, --nginx-conf, --no-linux, --proc-root,
//     --interval...) and the --dsn flags when a collector needs MySQL, turn
//     them into a Config and call Take; their "nothing to collect" message
//     lists the flags that ask for a collector.
//   - The demo calls Take with a Config it fills by hand (the same names).
//   - Take starts what a Config asks for in Registration.Order, records a
//     collector that cannot start (its server could not be opened, a
//     malformed setting, New failed) as a CollectorError, and runs the rest
//     (Run). Run's Partial flag asks the snapshot for the collector's layer
//     (Snapshot.Has) by its registered name.
//
// # Measuring over the interval
//
// Rates come from two readings, never from totals since start. The MySQL
// collector reads SHOW GLOBAL STATUS twice, --interval apart. A collector
// whose counters must cover the same window implements Starter: Run calls
// every Start before the first Collect, and the collector's Collect takes
// the second reading (waiting for what is left of the interval when no
// collector before it waited). The Linux collector reads the host's CPU
// (/proc/stat), each process's CPU (/proc/PID/stat) and the TCP counters
// (/proc/net/snmp, netstat) that way, so the snapshot can say which
// service used how many cores during the MySQL collector's interval.
//
// # A new collector is one file
//
// To add a collector for, say, HAProxy, write collect/haproxy.go (and its
// test, collect/haproxy_test.go) holding:
//
//  1. Its layer type, e.g. HAProxy, with JSON tags.
//  2. The collector: a type with Name() returning "haproxy" and
//     Collect(ctx, s), which only reads, stores its layer with
//     s.SetLayer("haproxy", layer) (even a partial one), and returns an
//     error for what it could not read; and a constructor NewHAProxy.
//  3. Its registration, from an init function in the same file.
//
// The registration of step 3:
//
//	func init() {
//		register(Registration{
//			Name: "haproxy", Layer: "haproxy", Order: 70,
//			Flags: []Flag{{Name: "haproxy-stats", Kind: FlagString,
//				Usage: "HAProxy stats socket to read"}},
//			AskedBy: "haproxy-stats",
//			New: func(cfg Config) (Collector, error) {
//				return NewHAProxy(cfg.Value("haproxy-stats")), nil
//			},
//		})
//	}
//
// That is all: --haproxy-stats appears in `stacktune collect` and
// `stacktune audit` (and in their "nothing to collect" message), the demo
// can set it in its Config, its failures are recorded, and its layer is the
// top-level "haproxy" key of the snapshot JSON, kept through Load even by a
// stacktune that does not know it. TestRegistry checks the new entry with the
// others (names, layers and flag names unique, AskedBy and DisabledBy
// naming flags of the right kind, defaults of their kind) and that the
// existing flags keep their names and defaults. Rules in advise read the layer with
// LayerOf[HAProxy](s, "haproxy") (as they read the PHP-FPM layer,
// collect/phpfpm.go, with LayerOf[PHPFPM](s, "php_fpm")); a layer that many rules read may instead
// get a typed field in Snapshot with the same json name (as MySQL, Linux,
// nginx, memcached and Redis have), which changes nothing on disk, and its
// collector then sets that field instead of calling SetLayer.
//
// A collector that needs a connection the caller must open (as MySQL needs
// a server opened from the --dsn flags) declares a Need; a new kind of Need
// is the one case that also touches the CLI (cmd/stacktune/collect.go,
// where the connection is opened) and Config.
package collect
