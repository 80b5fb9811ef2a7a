package advise

import (
	"fmt"
	"sort"

	"github.com/stacktune/stacktune/mysqlvar"
)

// fixed-settings: settings the user fixed (Options.Fixed, --fix
// innodb_doublewrite=1) are never changed by any rule; this rule checks
// they are in force, since a contest or a policy that fixes them (the 2015
// tpcc-mysql contest fixed innodb_doublewrite=1 and innodb_flush_log_at_trx_commit=1)
// is broken when the running value differs.
var fixedSettings = ruleFunc{"fixed-settings", "", checkFixedSettings}

// serverHolds is the value the server holds when variable name is set to
// v, after its own rounding (a block size) or clamping (a range), from
// the rules it published (collect's VariableRules); note says what it
// does, "" when it keeps v as is. matches compares a running value with
// it (within 1% where the rules are not exact: MySQL does not publish
// its block sizes).
func (c *Context) serverHolds(name, v string) (held, note string, matches func(string) bool) {
	r, ok := c.My.VariableRules[name]
	if !ok {
		return v, "", func(cur string) bool { return mysqlvar.Equal(cur, v) }
	}
	m := r.Meta(name)
	held, note, err := m.Expect(v)
	if err != nil {
		// Out of range: the server sets the bound instead.
		held, note = v, err.Error()
		if n, ok := mysqlvar.ParseInt(v); ok {
			if m.Min != nil && m.Min.IsInt() && m.Min.Num().IsInt64() && n < m.Min.Num().Int64() {
				held = m.Min.Num().String()
			}
			if m.Max != nil && m.Max.IsInt() && m.Max.Num().IsInt64() && n > m.Max.Num().Int64() {
				held = m.Max.Num().String()
			}
		}
	}
	return held, note, func(cur string) bool { return m.Matches(held, cur) }
}

func checkFixedSettings(c *Context) []Finding {
	names := make([]string, 0, len(c.Opt.Fixed))
	for k := range c.Opt.Fixed {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Finding
	for _, raw := range names {
		want := c.Opt.Fixed[raw]
		name := mysqlvar.Norm(raw)
		f := Finding{
			ID:       "fixed-settings",
			Severity: Critical,
			Source:   "the 2015 tpcc-mysql contest write-up (a contest fixed innodb_doublewrite=1 and innodb_flush_log_at_trx_commit=1); --fix",
			Effect:   "the setting is what the rules you accepted require",
		}
		switch {
		case c.mysqlReady() && c.VarName(name) != "":
			vn := c.VarName(name)
			cur, _ := c.Var(vn)
			held, note, matches := c.serverHolds(vn, want)
			if matches(cur) {
				if note == "" {
					continue
				}
				// In force, as the server holds it: say how, since the
				// value the user fixed is not what the server runs with.
				f.Layer, f.Severity = LayerMySQL, Info
				f.Title = fmt.Sprintf("Fixed setting %s = %s is in force as the server holds it: %s", vn, want, held)
				f.Evidence = []Evidence{c.varEv(vn, ""), ev("fixed value", want, "", "--fix"), ev("what the server does to it", note, "", "information_schema.SYSTEM_VARIABLES (range, block size)")}
				f.Effect = "nothing to change: the server stores " + held + " for " + want + "; fix the value it holds to avoid the surprise"
				out = append(out, f)
				continue
			}
			f.Layer = LayerMySQL
			f.Title = fmt.Sprintf("Fixed setting %s = %s is not in force (running: %s)", vn, want, cur)
			f.Evidence = []Evidence{c.varEv(vn, ""), ev("fixed value", want, "", "--fix")}
			f.Change = c.MySQLChange(vn, want, Set)
			f.Risk.Restart = c.Restart(vn)
		case c.Linux != nil && c.Linux.Sysctls[raw] != "":
			cur := c.Linux.Sysctls[raw]
			if mysqlvar.Equal(cur, want) {
				continue
			}
			f.Layer = LayerLinux
			f.Title = fmt.Sprintf("Fixed setting %s = %s is not in force (running: %s)", raw, want, cur)
			f.Evidence = []Evidence{ev(raw, cur, "", sysctlSource(raw)), ev("fixed value", want, "", "--fix")}
			f.Change = c.SysctlChange(raw, want, Set)
		default:
			c.NotSeen(fmt.Sprintf("fixed setting %s: not found in the snapshot, so whether it is in force was not checked (no rule changes it)", raw))
			continue
		}
		out = append(out, f)
	}
	return out
}
