package scratch

import (
	"testing"

	"github.com/stacktune/stacktune/internal/sandbox"
	"github.com/stacktune/stacktune/internal/sandbox/sandboxtest"
)

func TestScratch(t *testing.T) {
	m := sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{})
	db := m.DB()
	for _, q := range []string{"SET GLOBAL tmp_table_size=1024", "SET GLOBAL max_heap_table_size=1000", "SET GLOBAL sort_buffer_size=1000", "SET GLOBAL innodb_io_capacity=150"} {
		if _, err := db.Exec(q); err != nil {
			t.Log(q, err)
		}
	}
	rows, _ := db.Query("SELECT VARIABLE_NAME, GLOBAL_VALUE, NUMERIC_MIN_VALUE, NUMERIC_BLOCK_SIZE FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME IN ('TMP_TABLE_SIZE','MAX_HEAP_TABLE_SIZE','SORT_BUFFER_SIZE','INNODB_IO_CAPACITY')")
	for rows.Next() {
		var a, b, c, d string
		rows.Scan(&a, &b, &c, &d)
		t.Log(a, b, c, d)
	}
	rows, _ = db.Query("SHOW WARNINGS")
	_ = rows
}
