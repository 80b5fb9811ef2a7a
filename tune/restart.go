package tune

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/stacktune/stacktune/abtest"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/changeset"
)

// restartCheck restarts what the kept steps changed (the server, when a
// step changed its settings and a restart command is known; the app,
// when its restart command is known), measures one cold run, warms the
// buffer pool and measures one warm run, then checks that every kept
// value is still in force: a change that holds only at run time would be
// lost at the next reboot.
func (t *tuner) restartCheck(ctx context.Context) (*RestartCheck, error) {
	rc := &RestartCheck{Restarted: []string{}, Held: []string{}}
	if t.keptServerSettings() && t.opt.Services.MySQLRestart != nil {
		t.say("restart check: restarting the server")
		if err := t.opt.Services.MySQLRestart(ctx); err != nil {
			return rc, fmt.Errorf("restarting the server: %w", err)
		}
		t.warmedAt = t.restarts // warmed below, after the cold run
		rc.Restarted = append(rc.Restarted, "mysql")
	}
	if t.opt.AppRestart != nil {
		t.say("restart check: restarting the app (%s)", orText(t.opt.AppRestartName, "its restart command"))
		if err := t.opt.AppRestart(ctx); err != nil {
			return rc, fmt.Errorf("restarting the app: %w", err)
		}
		rc.Restarted = append(rc.Restarted, "app")
	}
	var err error
	if rc.ColdScore, err = t.measure("", "after restart, cold")(ctx, abtest.B); err != nil {
		return rc, err
	}
	if t.opt.Services.DB != nil {
		if rc.Warmed, err = warmBufferPool(ctx, t.opt.Services.DB, t.opt.Services.Schema); err != nil {
			return rc, err
		}
	}
	if rc.WarmScore, err = t.measure("", "after restart, warm")(ctx, abtest.B); err != nil {
		return rc, err
	}
	// Each setting is checked against the last kept step that set it: a
	// later step (the second round's my.cnf) may have changed a value an
	// earlier one set.
	wanted := make([][]apply.State, len(t.kept))
	seen := map[string]bool{}
	for i := len(t.kept) - 1; i >= 0; i-- {
		for _, tg := range t.kept[i].targets {
			want := apply.State{}
			for k, v := range tg.Wanted() {
				if key := tg.Name() + "\x00" + k; !seen[key] {
					seen[key] = true
					want[k] = v
				}
			}
			wanted[i] = append(wanted[i], want)
		}
	}
	for i, k := range t.kept {
		var lost []string
		for j, tg := range k.targets {
			if want := wanted[i][j]; len(want) > 0 {
				if err := tg.Verify(ctx, want); err != nil {
					lost = append(lost, err.Error())
				}
			}
		}
		if len(lost) > 0 {
			if rc.Lost == nil {
				rc.Lost = map[string]string{}
			}
			rc.Lost[k.label] = strings.Join(lost, "; ")
			continue
		}
		rc.Held = append(rc.Held, k.label)
	}
	t.say("restart check: restarted %s; cold %.0f, warm %.0f; still in force: %s", orText(strings.Join(rc.Restarted, " and "), "nothing"),
		rc.ColdScore, rc.WarmScore, orText(strings.Join(rc.Held, ", "), "none"))
	for _, label := range slices.Sorted(maps.Keys(rc.Lost)) {
		t.say("restart check: LOST %s: %s", label, rc.Lost[label])
	}
	return rc, nil
}

// keptServerSettings tells whether a kept step changed the server's
// settings (a my.cnf drop-in the restart must read back).
func (t *tuner) keptServerSettings() bool {
	for _, k := range t.kept {
		for _, tg := range k.targets {
			if _, ok := tg.(*apply.MySQL); ok {
				return true
			}
		}
	}
	return false
}

// warmBufferPool reads every index of the schema's tables once, so the
// runs after a restart measure the settings, not a cold buffer pool
// (the 2015 tpcc-mysql contest entry warmed with count(*) per table). It returns what it read.
func warmBufferPool(ctx context.Context, db apply.DB, schema string) ([]string, error) {
	if schema == "" {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, sqlIndexesOf, schema)
	if err != nil {
		return nil, fmt.Errorf("listing the indexes to warm: %w", err)
	}
	type ix struct{ table, name string }
	var ixs []ix
	for rows.Next() {
		var i ix
		if err := rows.Scan(&i.table, &i.name); err != nil {
			rows.Close()
			return nil, err
		}
		ixs = append(ixs, i)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing the indexes to warm: %w", err)
	}
	var out []string
	for _, i := range ixs {
		q := fmt.Sprintf("SELECT COUNT(*) FROM %s FORCE INDEX (%s)", changeset.QuoteTable(schema+"."+i.table), changeset.QuoteIdent(i.name))
		var n int64
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return out, fmt.Errorf("warming %s.%s: %w", i.table, i.name, err)
		}
		out = append(out, i.table+"."+i.name)
	}
	return out, nil
}

// sqlIndexesOf lists a schema's indexes (tables with their own storage).
const sqlIndexesOf = `SELECT DISTINCT TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, INDEX_NAME`

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
