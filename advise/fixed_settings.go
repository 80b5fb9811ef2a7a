package advise

import (
	"fmt"
	"sort"

	"github.com/stacktune/stacktune/mysqlvar"
)

// fixed-settings: settings the user fixed (Options.Fixed, --fix
// innodb_doublewrite=1) are never changed by any rule; this rule checks
// they are in force, since a contest or a policy that fixes them (seed
// 002 fixed innodb_doublewrite=1 and innodb_flush_log_at_trx_commit=1)
// is broken when the running value differs.
var fixedSettings = ruleFunc{"fixed-settings", "", checkFixedSettings}

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
			Source:   "seed 002 (a contest fixed innodb_doublewrite=1 and innodb_flush_log_at_trx_commit=1); --fix",
			Effect:   "the setting is what the rules you accepted require",
		}
		switch {
		case c.mysqlReady() && c.VarName(name) != "":
			vn := c.VarName(name)
			cur, _ := c.Var(vn)
			if mysqlvar.Equal(cur, want) {
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
