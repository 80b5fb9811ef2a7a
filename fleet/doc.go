// Package fleet is stacktune beyond one machine: it collects a snapshot on
// every host of an inventory (package inventory: an Ansible INI file, its
// groups being roles) over SSH, audits the fleet by role, plans capacity
// from what the fleet measured, and applies one change set host by host.
//
// # Reaching hosts
//
// SSHDialer connects with golang.org/x/crypto/ssh. Host keys are checked
// against known_hosts (never skipped): a host whose key is not listed is
// refused with the key's fingerprint and how to add it after checking it,
// and a host whose key changed is refused naming the known_hosts line.
// Keys come from the host's ansible_ssh_private_key_file, the caller's
// identities or ~/.ssh/id_*, and ssh-agent; a passphrase-protected key is
// said to belong in the agent. Nothing is installed: Binary copies this
// stacktune over the session's standard input into a private temporary
// directory (checking the host's architecture and the copy's size) and
// removes it when the command ends, or runs one already there
// (stacktune_binary, --remote-binary). A failure is a HostError with its
// Stage (connect, host-key, login, run, read), so a report can say where
// each host stopped.
//
// # Collect, audit, plan
//
// Collect runs `stacktune collect` on every host, at most Parallel at once
// (DefaultParallel 20), each bounded by HostTimeout, and keeps each host's
// collect.Snapshot (the same type a single host saves) or its stage and
// reason; one host's failure never stops the others. Snapshot is the
// merged result, saved as JSON with a "fleet_version" key (IsFleet tells
// it from a host's snapshot).
//
// Audit runs advise.Audit on each host and merges the findings of a role
// by id and the settings they change, with the hosts each applies to; it
// compares the hosts of a role (at least MinHosts answering) for outliers:
// a setting (sysctls, process file limits, cores and memory, MySQL
// variables but those that differ by nature, nginx and memcached settings)
// whose value differs from the one more than half of the role's hosts
// share, and a rate (TIME_WAIT and ESTABLISHED sockets, TIME_WAIT toward
// each port, the load average, MySQL status rates) at least twice or at
// most half the role's median, and apart from it by a floor.
//
// PlanFleet fills package capacity's inputs from the fleet (servers, the
// port range and tcp_max_tw_buckets most hosts run, the rate each carries
// now from its TIME_WAIT toward MySQL) and sets the DB side's running
// max_connections and memcached -c beside the figures to set.
//
// # Apply
//
// Apply copies the change set (the directory `audit --emit` wrote, whole,
// so apply's own check of its views holds) with stacktune in one tar
// stream and runs `stacktune apply --label LABEL` on each host: its own
// locked, journaled transaction (package apply) does the work and rolls
// back its own failure. The fleet layer only orchestrates: a canary batch,
// then batches; at the first failure the batch finishes, no further batch
// starts, and every host where the change set is in place is rolled back,
// newest first, by `stacktune rollback --expect-label LABEL`, which undoes
// a transaction only if it is this run's. A host whose connection was lost
// during its apply is rolled back the same way (if its transaction did not
// take, the label check refuses and nothing is touched). A rollback that
// fails is reported with the command that finishes it.
//
// Concurrency: Collect and Apply may be called from any goroutine; their
// Progress callbacks are called one at a time.
package fleet
