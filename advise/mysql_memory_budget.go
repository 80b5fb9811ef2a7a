package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-memory-budget: buffer pool + other global buffers + per-connection
// buffers × max_connections + other services + the OS reserve must fit the
// RAM; if not, the buffer pool is decreased to what fits (the one large
// term that can shrink without refusing clients).
var mysqlMemoryBudget = ruleFunc{"mysql-memory-budget", LayerMySQL, checkMySQLMemoryBudget}

func checkMySQLMemoryBudget(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	b, ok := c.Budget()
	if !ok {
		c.NotSeen("mysql: the memory budget needs the RAM (linux layer) and innodb_buffer_pool_size")
		return nil
	}
	if b.Total() <= b.RAM {
		return nil
	}
	over := b.Total() - b.RAM
	f := Finding{
		ID:       "mysql-memory-budget",
		Title:    fmt.Sprintf("MySQL's worst case and the other services exceed the RAM by %s", fmtBytes(over)),
		Severity: Critical,
		Evidence: b.Evidence(),
		Source:   "the smartphone game backend's write-up (per-session buffers against max_connections and RAM); MySQL manual 'How MySQL Uses Memory'",
	}
	f.Evidence = append(f.Evidence, ev("total", fmt.Sprint(b.Total()), "bytes", b.Formula()))
	unit := poolUnit(c)
	room := roundDown(b.BufferPoolRoom(), unit)
	floor := max(128*mib, b.BufferPool/4)
	if room >= floor && room < b.BufferPool {
		f.Change = c.MySQLChange("innodb_buffer_pool_size", fmt.Sprint(room), Decrease)
		f.Effect = fmt.Sprintf("the worst case fits the RAM: the pool shrinks from %s to %s, so the kernel need not swap or kill mysqld (OOM) when every connection sorts and joins at once",
			fmtBytes(b.BufferPool), fmtBytes(room))
		f.Risk = changeset.Risk{Memory: fmt.Sprintf("-%s of RAM", fmtBytes(b.BufferPool-room)),
			Restart: c.Restart("innodb_buffer_pool_size"),
			Note:    "a smaller pool serves fewer reads from memory: lowering per-session buffers or max_connections (mysql-per-session-buffers, mysql-max-connections) frees memory without that cost"}
		return []Finding{f}
	}
	f.Effect = fmt.Sprintf("the buffer pool cannot shrink enough (it would fall below %s): lower the per-connection buffers or max_connections (mysql-per-session-buffers, mysql-max-connections), move services off the host, or add RAM", fmtBytes(floor))
	return []Finding{f}
}
