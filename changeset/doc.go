// Package changeset is the one contract between whoever advises a change
// (the audit's rules, the index advisor, the demo's steps, later the knob
// search and the fleet audit) and package apply, which makes it.
//
// A Change is one setting, typed: a MySQL variable or startup option, a
// sysctl, an nginx directive in its context, a systemd unit's limit, a
// memcached flag, a Redis setting, a PHP-FPM pool setting (validated by
// package phpfpmconf, which owns that format), a mount option, an index,
// or an application change.
// Each carries the value it was advised from (what the snapshot saw), the
// value to set, how it takes effect (Activation: at once, on a reload,
// on a restart, by a person), the finding it comes from and its risk.
// Producers build a Set in memory and hand it over; apply checks every
// change's From against the running system before it touches anything
// (a value that moved since the advice is drift, and refused).
//
// # On disk
//
// This package alone owns the layout of a change set on disk, what
// `stacktune audit --emit DIR` writes and `stacktune apply DIR` reads
// (Write, Read):
//
//	changes.json                  the Set itself: what apply reads
//	mysql/99-stacktune.cnf        the MySQL changes as a my.cnf drop-in
//	sysctl/99-stacktune.conf      the sysctls as a sysctl.d file
//	nginx/stacktune.conf          the nginx directives, each under its context
//	systemd/UNIT.d/stacktune.conf each unit's limits as a systemd drop-in
//	memcached/options             memcached's command-line options
//	redis/stacktune.conf          Redis settings
//	php-fpm/stacktune.conf        PHP-FPM pool settings, each under its pool's [name]
//	fstab/stacktune               mount options, each after its mount point
//
// The files other than changes.json are views of it, rendered for people
// (and for installing by hand): every setting under a comment naming its
// finding. Write writes them all or none, each atomically. Read refuses a
// directory whose views no longer match changes.json (edited by hand, or
// left over from an older emit), so what a person reviewed is what apply
// does.
//
// # Grammars
//
// Every kind has a grammar (grammar.go, one registry entry per kind):
// what its target, name and value may be, narrow on purpose, since a
// change file is input a person may edit or an attacker may write.
// Validate (from Decode and Read) checks it when a set is read; Check is
// the same check for one change, which package apply makes again before
// anything is touched. Index DDL is built from ParseKeyParts' parsed
// columns, never from the text of a To; setting files are written only
// as lines that read back as the one setting they hold.
//
// The settings-file format (Format: MyCnf, SysctlD, SystemdDropIn) is
// also how apply edits the live drop-ins: Format.Edit replaces a setting
// in place with its comment block, appends new ones, and keeps every
// other byte.
package changeset
