package advise

import (
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/mysqlvar"
)

// mysql-doublewrite: InnoDB writes each page twice (doublewrite buffer,
// then in place) so a page torn by a crash mid-write can be repaired.
// Turning it off halves page writes but is safe only where the storage
// writes a page atomically (the 2015 tpcc-mysql contest's ioDrive; ZFS). The 2015 tpcc-mysql contest
// fixed innodb_doublewrite=1.
var mysqlDoublewrite = ruleFunc{"mysql-doublewrite", LayerMySQL, checkMySQLDoublewrite}

// doublewriteMinRate is the pages per second written through the
// doublewrite buffer from which it is worth discussing.
const doublewriteMinRate = 100.0

const lossNoDoublewrite = "without the doublewrite buffer a page half-written when the OS crashes or the power fails cannot be repaired: InnoDB finds it corrupt at restart and the table (or the server) must be restored from a backup; safe only where the storage writes 16 KiB pages atomically"

func checkMySQLDoublewrite(c *Context) []Finding {
	const name = "innodb_doublewrite"
	if !c.mysqlReady() || !c.Has(name) {
		return nil
	}
	v, _ := c.Var(name)
	_, isFixed := c.Fixed(name)
	f := Finding{
		ID:       "mysql-doublewrite",
		Layer:    LayerMySQL,
		Evidence: []Evidence{c.varEv(name, "")},
		Source:   "the 2015 tpcc-mysql contest write-up (doublewrite fixed at 1 by the contest; atomic writes on ioDrive); MySQL manual 'Doublewrite Buffer'",
	}
	on := mysqlvar.Equal(v, "ON") || strings.EqualFold(v, "DETECT_AND_RECOVER")
	if !on {
		if isFixed {
			return nil
		}
		f.Title = fmt.Sprintf("The doublewrite buffer is off: %s = %s", name, v)
		f.Severity = Info
		f.Risk.Durability = lossNoDoublewrite
		f.Effect = "stated so the trade-off is known: turn it on unless the storage guarantees atomic page writes"
		return []Finding{f}
	}
	status := "Innodb_dblwr_pages_written"
	r, ok := c.Rate(status)
	if !ok || r < doublewriteMinRate {
		return nil
	}
	f.Evidence = append(f.Evidence, c.deltaEv(status))
	if _, ok := c.Rate("Innodb_dblwr_writes"); ok {
		f.Evidence = append(f.Evidence, c.deltaEv("Innodb_dblwr_writes"))
	}
	f.Title = fmt.Sprintf("Every page is written twice: %s pages/s through the doublewrite buffer", num(r))
	f.Effect = "page writes halve; worth it only for write-bound servers on storage with atomic writes"
	f.Risk.Durability = lossNoDoublewrite
	f.Risk.Restart = true
	proposeRelaxed(c, &f, name, "OFF", Info)
	return []Finding{f}
}
