package advise

import "fmt"

// Shared by the three durability rules (mysql-flush-log-at-trx-commit,
// mysql-sync-binlog, mysql-doublewrite): each change relaxes what a crash
// can lose, so it is made only with Options.AllowDurabilityLoss, never to
// a fixed setting, and always with its cost in words.

// durabilityMinRate is the flushes per second from which flushing at
// every commit is worth discussing.
const durabilityMinRate = 20.0

// fsyncRate is the redo log's fsyncs per second over the interval (the
// cost of innodb_flush_log_at_trx_commit=1), falling back on all InnoDB
// fsyncs.
func fsyncRate(c *Context) (string, float64, bool) {
	for _, s := range []string{"Innodb_os_log_fsyncs", "Innodb_data_fsyncs"} {
		if r, ok := c.Rate(s); ok {
			return s, r, true
		}
	}
	return "", 0, false
}

// commitEvidence is the commit and fsync rates.
func commitEvidence(c *Context) []Evidence {
	var out []Evidence
	if name, _, ok := fsyncRate(c); ok {
		out = append(out, c.deltaEv(name))
	}
	if _, ok := c.Rate("Handler_commit"); ok {
		out = append(out, c.deltaEv("Handler_commit"))
	}
	return out
}

// durabilityNotAllowed is the note of a finding that would relax
// durability without permission.
func durabilityNotAllowed(change string) string {
	return fmt.Sprintf("not changed: %s relaxes durability; stacktune proposes it only with --allow-durability-loss", change)
}

// fixedNote says a setting is fixed.
func fixedNote(name, v string) string {
	return fmt.Sprintf("%s is fixed at %s (--fix): stacktune leaves it as it is", name, v)
}

// proposeRelaxed gives a durability finding its outcome: informational with
// a note when the setting is fixed or the user did not allow durability
// loss, otherwise the change to value at severity sev (restart as the
// variable needs).
func proposeRelaxed(c *Context, f *Finding, name, value string, sev Severity) {
	switch fixed, isFixed := c.Fixed(name); {
	case isFixed:
		f.Severity = Info
		f.Risk.Note = fixedNote(name, fixed)
	case !c.Opt.AllowDurabilityLoss:
		f.Severity = Info
		f.Risk.Note = durabilityNotAllowed(name + " = " + value)
	default:
		f.Severity = sev
		f.Change = c.MySQLChange(name, value, Set)
		f.Risk.Restart = f.Risk.Restart || c.Restart(name)
	}
}
