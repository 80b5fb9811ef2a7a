package indexadv

import (
	"context"
	"database/sql"
	"strings"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/fingerprint"
)

// The statement history tables FillSamples reads, newest last.
var sqlHistory = []string{
	`SELECT SQL_TEXT, CURRENT_SCHEMA FROM performance_schema.events_statements_history_long WHERE SQL_TEXT IS NOT NULL`,
	`SELECT SQL_TEXT, CURRENT_SCHEMA FROM performance_schema.events_statements_history WHERE SQL_TEXT IS NOT NULL`,
}

// NeedsSample reports whether a class has no real sample: none, or a
// normalised digest text with placeholders or elided lists (MariaDB's
// performance_schema).
func NeedsSample(c digest.Class) bool {
	s := strings.TrimSpace(c.Sample)
	return s == "" || strings.Contains(s, "?") || strings.Contains(s, "(...)")
}

// FillSamples gives classes without a real sample one from
// performance_schema's statement history, matched by fingerprint. It
// returns how many it filled; missing or disabled history tables fill none
// (the classes are then skipped with their reason).
func FillSamples(ctx context.Context, db *sql.DB, classes []digest.Class) int {
	need := map[string]int{}
	for i, c := range classes {
		if NeedsSample(c) {
			need[c.ID] = i
		}
	}
	if len(need) == 0 {
		return 0
	}
	filled := 0
	for _, q := range sqlHistory {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			continue
		}
		for rows.Next() {
			var text string
			var schema sql.NullString
			if rows.Scan(&text, &schema) != nil {
				continue
			}
			id := fingerprint.ID(fingerprint.Fingerprint(text))
			i, ok := need[id]
			if !ok || strings.Contains(text, "?") {
				continue
			}
			classes[i].Sample = text
			if schema.String != "" && classes[i].SampleDB == "" {
				classes[i].SampleDB = schema.String
			}
			delete(need, id)
			filled++
		}
		rows.Close()
	}
	return filled
}
