package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/internal/refapp"
)

// A step is one group of findings applied together and measured: it
// takes its findings from the diagnosis and turns them into apply
// targets. A new step goes in steps, in the order the loop runs them.
type step struct {
	label string
	plan  func(ctx context.Context, l *loop, d *diagnosis) (*stepWork, error)
}

// stepWork is what a step applies.
type stepWork struct {
	findings []StepFinding
	targets  []apply.Target
	notes    []string // said in the report next to what changed
	why      string   // why there is nothing to apply
}

var steps = []step{
	{"my.cnf", planMyCnf},
	{"unix sockets", planSockets},
	{"nginx", planNginx},
	{"indexes", planIndexes},
	{"cache", planCache},
	{"N+1 queries", planNPlusOne},
}

// changesOf are the changes of findings of the given kinds, each
// carrying its finding. They are also written, as the change set's
// directory, under the loop's emit/LABEL-*, for the record: apply gets
// them in memory.
func changesOf(l *loop, d *diagnosis, label string, fs []*advise.Finding, kinds ...changeset.Kind) ([]changeset.Change, error) {
	r := &advise.Result{Host: d.audit.Host, Taken: d.audit.Taken, Server: d.audit.Server}
	for _, f := range fs {
		r.Findings = append(r.Findings, *f)
	}
	set := r.ChangeSet()
	// A directory per call: a second audit's files never mix with the
	// first's.
	root := filepath.Join(l.dir, "emit")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(root, strings.ReplaceAll(label, " ", "-")+"-")
	if err != nil {
		return nil, err
	}
	if _, err := changeset.Write(dir, set); err != nil {
		return nil, err
	}
	return set.Of(kinds...), nil
}

func findings(fs []*advise.Finding) []StepFinding {
	out := make([]StepFinding, 0, len(fs))
	for _, f := range fs {
		out = append(out, stepFinding(f))
	}
	return out
}

// planMyCnf: every finding with a my.cnf change, as one drop-in in the
// server's conf.d (SET GLOBAL where dynamic, a restart where not).
func planMyCnf(_ context.Context, l *loop, d *diagnosis) (*stepWork, error) {
	fs := d.take(func(f *advise.Finding) bool {
		return hasKind(f, changeset.MySQLVariable, changeset.MySQLOption) && !hasKind(f, changeset.Sysctl, changeset.Systemd) && !advise.Observability(f.ID)
	})
	p := &stepWork{findings: findings(fs)}
	if len(fs) == 0 {
		return p, nil
	}
	cs, err := changesOf(l, d, "my.cnf", fs, changeset.MySQLVariable, changeset.MySQLOption)
	if err != nil {
		return nil, err
	}
	srv := l.st.db
	m, err := apply.NewMySQL(srv.DB(), filepath.Join(srv.ConfDir(), "99-stacktune.cnf"), cs)
	if err != nil {
		return nil, err
	}
	m.Check, m.Restart = srv.CheckConfig, srv.Restart
	p.targets = []apply.Target{m}
	return p, nil
}

// planSockets: the app reaches MySQL and memcached through their unix
// sockets and listens on one itself, nginx's upstream points at it.
func planSockets(_ context.Context, l *loop, d *diagnosis) (*stepWork, error) {
	ids := map[string]bool{"mysql-unix-socket": true, "memcached-unix-socket": true, "nginx-unix-upstream": true}
	fs := d.take(func(f *advise.Finding) bool { return ids[f.ID] })
	p := &stepWork{findings: findings(fs)}
	st := l.st
	cfg := st.appCfg
	var nginx *apply.Nginx
	var mc *memcachedTarget
	for _, f := range fs {
		switch f.ID {
		case "mysql-unix-socket":
			cfg.DSN = st.db.DSN(appDB)
			p.notes = append(p.notes, "app: DSN over the server's unix socket "+st.db.Socket())
		case "memcached-unix-socket":
			opt := st.mcOpt
			opt.Socket = true
			mc = &memcachedTarget{s: st, opt: opt}
			cfg.Memcached = filepath.Join(st.mc.Dir(), "memcached.sock")
			p.notes = append(p.notes, "memcached: restarted with -s "+cfg.Memcached+" (the demo's socket path, not the finding's /var/run one)")
		case "nginx-unix-upstream":
			sock := filepath.Join(filepath.Dir(st.appConfig), "app.sock")
			cfg.Listen = "unix:" + sock
			var err error
			nginx, err = apply.NewNginx(st.nginx.ConfigPath(), []changeset.Change{{Kind: changeset.Nginx, Target: "nginx upstream app {}", Name: "server",
				To: "unix:" + sock, Activation: changeset.Reload, Finding: f.ID, Title: f.Title}})
			if err != nil {
				return nil, err
			}
			nginx.Test, nginx.Reload, nginx.Probe = st.nginx.Test, st.nginx.Reload, st.probeNginx
			p.notes = append(p.notes, "app: listens on "+sock+"; nginx: upstream app { server unix:"+sock+"; }")
		}
	}
	// Order matters: memcached and MySQL's socket first, then the app
	// on its socket, then nginx pointing at it. Rollback runs backwards.
	if mc != nil {
		p.targets = append(p.targets, mc)
	}
	if cfg != st.appCfg {
		p.targets = append(p.targets, &appTarget{s: st, cfg: cfg})
	}
	if nginx != nil {
		p.targets = append(p.targets, nginx)
	}
	return p, nil
}

// planNginx: every nginx directive the audit proposes, put in its
// context in nginx.conf, validated with nginx -t and reloaded.
func planNginx(_ context.Context, l *loop, d *diagnosis) (*stepWork, error) {
	fs := d.take(func(f *advise.Finding) bool { return hasKind(f, changeset.Nginx) })
	p := &stepWork{findings: findings(fs)}
	if len(fs) == 0 {
		return p, nil
	}
	cs, err := changesOf(l, d, "nginx", fs, changeset.Nginx)
	if err != nil {
		return nil, err
	}
	n, err := apply.NewNginx(l.st.nginx.ConfigPath(), cs)
	if err != nil {
		return nil, err
	}
	n.Test, n.Reload, n.Probe = l.st.nginx.Test, l.st.nginx.Reload, l.st.probeNginx
	p.targets = []apply.Target{n}
	return p, nil
}

// planIndexes: the indexes `stacktune indexes` proved on a copy.
func planIndexes(_ context.Context, l *loop, d *diagnosis) (*stepWork, error) {
	p := &stepWork{}
	if d.indexes == nil || d.indexes.Changes == nil || len(d.indexes.Changes.Changes) == 0 {
		p.why = "no index was proven to help"
		return p, nil
	}
	for _, pr := range d.indexes.Proposals {
		sf := StepFinding{ID: "index", Title: fmt.Sprintf("%s (%s)", pr.Table, strings.Join(pr.Columns, ", ")), Change: pr.DDL,
			Evidence: []string{
				fmt.Sprintf("rows examined (EXPLAIN on a copy): %d → %d", pr.RowsBefore, pr.RowsAfter),
				fmt.Sprintf("median time on the copy: %.2f ms → %.2f ms", pr.TimeBeforeMS, pr.TimeAfterMS),
				fmt.Sprintf("index size %d bytes", pr.IndexBytes),
			}, Source: "stacktune indexes (proven on a throwaway copy)"}
		sf.Evidence = append(sf.Evidence, pr.Reasons...)
		p.findings = append(p.findings, sf)
	}
	ix, err := apply.NewIndexes(l.st.appDB, appDB, d.indexes.Changes.Changes)
	if err != nil {
		return nil, err
	}
	p.targets = []apply.Target{ix}
	return p, nil
}

// planNPlusOne: the N+1 query patterns the index advice reported whose
// code fix the reference app has behind a setting (refapp.Fixes, matched
// by the fingerprint of the statement each fix removes).
func planNPlusOne(_ context.Context, l *loop, d *diagnosis) (*stepWork, error) {
	p := &stepWork{}
	cfg := l.st.appCfg
	for i, q := range d.nPlusOne {
		for _, fix := range refapp.Fixes {
			if q.Fingerprint != fingerprint.Fingerprint(fix.Query) || d.usedQuery[i] {
				continue
			}
			d.usedQuery[i] = true
			p.findings = append(p.findings, nPlusOneFinding(q))
			fix.Set(&cfg)
			p.notes = append(p.notes, fix.Note)
		}
	}
	if cfg != l.st.appCfg {
		p.targets = []apply.Target{&appTarget{s: l.st, cfg: cfg}}
	} else if len(d.nPlusOne) > 0 {
		p.why = "the N+1 patterns found have no fix in the reference app (listed under not applied)"
	}
	return p, nil
}

// planCache: the cache client's fix (multi-get, set on a miss, TTL),
// behind the reference app's cache_batch setting.
func planCache(_ context.Context, l *loop, d *diagnosis) (*stepWork, error) {
	fs := d.take(func(f *advise.Finding) bool { return f.ID == "memcached-write-on-read" })
	p := &stepWork{findings: findings(fs)}
	if len(fs) == 0 {
		return p, nil
	}
	cfg := l.st.appCfg
	cfg.CacheBatch = true
	p.targets = []apply.Target{&appTarget{s: l.st, cfg: cfg}}
	p.notes = append(p.notes, "app: cache_batch on (the reference app's version of the code change: one multi-get per page, set only on a miss, TTL 1 h)")
	return p, nil
}
