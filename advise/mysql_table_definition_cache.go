package advise

import (
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// mysql-table-definition-cache: Opened_table_definitions growing over the
// interval with the definition cache full means table definitions
// (.frm or the data dictionary) are read again and again (the smartphone game backend).
var mysqlTableDefinitionCache = ruleFunc{"mysql-table-definition-cache", LayerMySQL, checkMySQLTableDefinitionCache}

func checkMySQLTableDefinitionCache(c *Context) []Finding {
	if !c.mysqlReady() {
		return nil
	}
	rate, ok := c.Rate("Opened_table_definitions")
	if !ok || rate < openedMinRate {
		return nil
	}
	size, ok := c.Int("table_definition_cache")
	if !ok || size <= 0 {
		return nil
	}
	open, _ := c.Gauge("Open_table_definitions")
	if open < cacheFull*float64(size) {
		return nil
	}
	var tables int64
	for _, s := range c.My.Data.Schemas {
		tables += s.Tables
	}
	value := max(roundUp(size*2, 100), roundUp(tables+400, 100))
	f := Finding{
		ID:       "mysql-table-definition-cache",
		Title:    fmt.Sprintf("Table definitions are read %s times per second with the cache full (%s of %d)", num(rate), num(open), size),
		Severity: Info,
		Evidence: []Evidence{c.deltaEv("Opened_table_definitions"), ev("Open_table_definitions", num(open), "definitions", srcGauge),
			c.varEv("table_definition_cache", "definitions"), ev("user tables", fmt.Sprint(tables), "tables", srcTables)},
		Change: c.MySQLChange("table_definition_cache", fmt.Sprint(value), Increase),
		Effect: "every table's definition stays cached (the user tables plus room for the system schemas)",
		Risk:   changeset.Risk{Restart: c.Restart("table_definition_cache"), Memory: "a few KiB per definition"},
		Source: "the smartphone game backend's write-up (table_definition_cache); MySQL manual (table_definition_cache)",
	}
	if rate >= 10 {
		f.Severity = Warning
	}
	return []Finding{f}
}
