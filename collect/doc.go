// Package collect gathers read-only evidence from every layer of a web stack
// into one Snapshot: MySQL/MariaDB (variables, status sampled twice for
// rates, InnoDB figures, data sizes), Linux (cores, memory, sysctls, process
// limits, TCP sockets by state and port), nginx (its configuration, parsed,
// with includes), memcached and Redis. One collector per file, each behind
// the Collector interface; a failing collector is recorded in the snapshot,
// never fatal. Snapshots are JSON so they can be audited on another machine.
package collect
