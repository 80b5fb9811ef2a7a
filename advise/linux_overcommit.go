package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// linux-overcommit: Redis forks to write its snapshot or rewrite its AOF;
// with vm.overcommit_memory=0 the kernel may refuse the fork of a large
// Redis (Redis logs "WARNING overcommit_memory is set to 0! Background
// save may fail") and with 2 it refuses more. Redis asks for 1 (the smartphone game backend
// listed vm.overcommit_memory among its sysctls). With strict accounting
// (2) and a MySQL server, a large allocation can fail outright.
var linuxOvercommit = ruleFunc{"linux-overcommit", LayerLinux, checkLinuxOvercommit}

func checkLinuxOvercommit(c *Context) []Finding {
	v, ok := c.SysctlInt("vm.overcommit_memory")
	if !ok {
		return nil
	}
	src := sysctlSource("vm.overcommit_memory")
	redis := c.Redis != nil && (c.Redis.AOF || c.Redis.RDB != nil && *c.Redis.RDB) && len(c.Processes("redis-server")) > 0
	switch {
	case redis && v != 1:
		return []Finding{{
			ID:       "linux-overcommit",
			Title:    fmt.Sprintf("vm.overcommit_memory = %d with a persisting Redis on the host", v),
			Severity: Warning,
			Evidence: []Evidence{ev("vm.overcommit_memory", fmt.Sprint(v), "", src),
				ev("Redis persistence", fmt.Sprintf("save %q, appendonly %v", c.Redis.Save, c.Redis.AOF), "", "CONFIG GET save, appendonly")},
			Change: c.SysctlChange("vm.overcommit_memory", "1", Set),
			Effect: "Redis's fork for BGSAVE or an AOF rewrite is not refused for the memory the child would only share copy-on-write",
			Risk:   changeset.Risk{Memory: "the kernel no longer refuses allocations up front; a real shortage ends with the OOM killer instead"},
			Source: "Redis administration docs (vm.overcommit_memory = 1); the smartphone game backend's write-up",
		}}
	case v == 2 && len(c.Processes(mysqlPatterns...)) > 0:
		return []Finding{{
			ID:       "linux-overcommit",
			Title:    "Strict memory accounting (vm.overcommit_memory = 2) on a database host",
			Severity: Info,
			Evidence: []Evidence{ev("vm.overcommit_memory", "2", "", src)},
			Effect:   "nothing to change if it is deliberate: allocations beyond the commit limit (swap + overcommit_ratio% of RAM) fail, so mysqld can get \"Out of memory\" errors well before the RAM is used; check CommitLimit and Committed_AS in /proc/meminfo",
			Source:   "Linux Documentation/mm/overcommit-accounting.rst; the smartphone game backend's write-up",
		}}
	}
	return nil
}
