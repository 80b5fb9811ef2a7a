package slowlog

import (
	"fmt"
	"os"
	"testing"
)

func TestDumpDebug(t *testing.T) {
	f := os.Getenv("DUMP")
	if f == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(f)
	var p Parser
	p.Parse(data, func(e *Event) {
		q := string(e.Query)
		if len(q) > 60 {
			q = q[:60]
		}
		fmt.Printf("@%d t=%s u=%q h=%q db=%q qt=%g lt=%g rs=%d re=%d ra=%d has=%b fl=%b/%b admin=%v q=%q\n", e.Offset, e.Time.Format("2006-01-02T15:04:05"), e.User, e.Host, e.DB, e.QueryTime, e.LockTime, e.RowsSent, e.RowsExamined, e.RowsAffected, e.Has, e.Flags, e.Known, e.Admin, q)
	})
	fmt.Printf("%+v\n", p.Stats)
}
