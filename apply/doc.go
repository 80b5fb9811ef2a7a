// Package apply makes the changes of a change set (package changeset:
// what `stacktune audit` and `stacktune indexes` advise, what the demo's
// steps hand over in memory) on a running system, as one transaction
// that is planned whole before anything is touched and can always be
// undone.
//
// # Targets
//
// A Target is one service. Its core is small: the state it should reach
// (Wanted), a read of the running values (Snapshot), the step that makes
// the running service use its files and reach a state (Activate: SET
// GLOBAL where a variable is dynamic, a restart where it is not, nginx
// reload, /proc/sys, systemctl), and a read-back that proves it (Verify,
// which says which keys differ with a *MismatchError). What a target can
// do besides is an optional ability, found by type assertion: files to
// write (FileWriter), a check of them on disk before anything uses them
// (Validator: nginx -t, the server's own option check), host-wide reach
// (HostWider), a plan (Planner), a way back that differs from the way
// forward (Restorer), and the command a person runs to put a setting back
// (HandFixer). FromChangeSet builds the targets of a change set: a my.cnf
// drop-in (MySQL), nginx.conf and its includes (Nginx), indexes
// (Indexes), a sysctl.d file (Sysctl) and systemd drop-ins
// (SystemdDropIn); the drop-ins are edited in place, setting by setting,
// so a second transaction adds to the first instead of replacing it.
//
// # The transaction
//
// Run takes the state directory's lock (one transaction at a time: a
// second Run, Rollback or Recover says who holds it), finishes any
// transaction a killed run or a failed rollback left, then:
//
//  1. snapshots every target's running state;
//  2. plans: every target that can plan checks each change against the
//     running service (the variable exists, SET GLOBAL can change it or a
//     restart can be done, the server keeps the value rather than
//     clamping it, the rules between variables hold) and compares the
//     running value with the one the change was advised from. A value
//     that moved since the advice is drift. Any problem refuses the whole
//     transaction (a *RefusedError) before anything changes; drift is
//     applied only with Options.ForceDrift;
//  3. writes a journal (state "writing") with a backup copy of every file
//     it will replace and the snapshots, synced to disk before any file
//     changes; a file whose new content was computed from what it held
//     (File.FromBase) must still hold that;
//  4. writes each file atomically (temporary file, fsync, rename), after
//     checking it is still what was backed up;
//  5. validates every target, then activates and verifies each;
//  6. marks the journal "applied".
//
// Any failure in 3-6 rolls back: the backups are put back (files that did
// not exist are removed), every target activated so far is brought back
// to its snapshot (Restore where a target has one, else Activate) in the
// transaction's order (a later target's old settings may depend on an
// earlier one's: nginx's old upstream on the app's old port), then all
// are verified. A rollback goes on past every failure: what it could not
// put back is returned as Leftovers (in a *RollbackError), each with the
// command that restores it by hand, and kept in the journal (state
// "rollback-failed"); the next Run, Rollback or Recover tries that
// rollback again first, and closes it once everything verifies. Rollback
// undoes the last applied transaction the same way. A run killed between
// 3 and 6 leaves a journal in "writing" or "activating": every file is
// whole (old or new, never a mix inside one file), and the next Run,
// Rollback or Recover restores all of them to the old content before
// doing anything else, so the set of files is never a mix either.
//
// # Commands and probes
//
// The commands a target runs (a check, a restart, a reload) are argv,
// never a shell: CommandCheck and CommandCheckStrict run one, and
// ParseCommandLine splits a command line a person wrote (a flag's value)
// into argv as a POSIX shell splits words and quotes, interpreting
// nothing else. HTTPProbe is the check that a URL answers (below 500)
// after nginx reloads.
//
// The journal lives in Options.StateDir: one directory per transaction
// (backups and journal.json), and the lock file. It holds no secrets: a
// target describes itself with its kind and non-secret parameters; a DSN
// with a password is never written (dbconn.Mask).
package apply
