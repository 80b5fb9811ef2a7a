// Package apply changes a running system's configuration as one
// transaction that can always be undone: the files that `stacktune audit
// --emit` writes (my.cnf drop-in, nginx snippet, sysctl.d, systemd
// drop-ins) and the DDL that `stacktune indexes` proves.
//
// # Targets
//
// A Target is one service: the files it needs written (already rendered,
// see File), its running state before the change (Snapshot), a check of
// the files on disk before anything uses them (Validate: nginx -t, the
// server's own option check), the step that makes the running service use
// them (Activate: SET GLOBAL where a variable is dynamic, a restart where
// it is not, nginx reload, sysctl, systemctl) and a read-back that proves
// the running values are the wanted ones (Verify). Host-wide targets
// (sysctl, systemd) only run when Options.HostWide is set; without it
// their files are left for the user and reported as skipped.
//
// # The transaction
//
// Run first recovers any transaction a killed run left half-done, then:
//
//  1. snapshots every target's running state;
//  2. writes a journal (state "writing") with a backup copy of every file
//     it will replace and the snapshots, synced to disk before any file
//     changes;
//  3. writes each file atomically (temporary file, fsync, rename);
//  4. validates every target, then activates and verifies each;
//  5. marks the journal "applied".
//
// Any failure in 3-4 rolls back: the backups are put back (files that did
// not exist are removed), every target activated so far is activated
// again with its snapshot as the wanted state, in the transaction's order
// (a later target's old settings may depend on an earlier one's: nginx's
// old upstream on the app's old port), then all are verified, and the
// journal is marked "rolled-back" (or "rollback-failed", with the reason,
// when even that fails). Rollback undoes the last applied transaction the
// same way. A run killed between 2 and 5 leaves a journal in "writing" or
// "activating": every file is whole (old or new, never a mix inside one
// file), and the next Run, Rollback or Recover restores all of them to
// the old content before doing anything else, so the set of files is
// never a mix either.
//
// The journal lives in Options.StateDir: one directory per transaction
// (backups and journal.json). It holds no secrets: a target describes
// itself with its kind and non-secret parameters; a DSN with a password
// is never written (dbconn.Mask).
package apply
