package demo

import (
	"context"
	"path/filepath"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/tune"
)

// steps are the demo's steps in loop order: tune's steps of a user's
// stack (no host-wide one: the demo never changes this machine's
// settings) with the reference app's own between them. The app's steps
// are code changes a developer would make; the reference app has each
// behind a setting (refapp.Config), so the loop applies and measures them
// like a server setting, through the app target.
func (l *loop) steps() []tune.Step {
	return []tune.Step{
		tune.MyCnf,
		{Label: "unix sockets", Plan: l.planSockets},
		tune.Nginx,
		tune.Indexes,
		{Label: "cache", Plan: l.planCache},
		{Label: "N+1 queries", Plan: l.planNPlusOne},
	}
}

func findings(fs []*advise.Finding) []tune.Finding {
	out := make([]tune.Finding, 0, len(fs))
	for _, f := range fs {
		out = append(out, tune.AuditFinding(f))
	}
	return out
}

// planSockets: the app reaches MySQL and memcached through their unix
// sockets and listens on one itself, nginx's upstream points at it.
func (l *loop) planSockets(_ context.Context, p *tune.Pick) (*tune.Work, error) {
	ids := map[string]bool{"mysql-unix-socket": true, "memcached-unix-socket": true, "nginx-unix-upstream": true}
	fs := p.Findings(func(f *advise.Finding) bool { return ids[f.ID] })
	w := &tune.Work{Findings: findings(fs)}
	st := l.st
	cfg := st.appCfg
	var nginx *apply.Nginx
	var mc *memcachedTarget
	for _, f := range fs {
		switch f.ID {
		case "mysql-unix-socket":
			cfg.DSN = st.db.DSN(appDB)
			w.Notes = append(w.Notes, "app: DSN over the server's unix socket "+st.db.Socket())
		case "memcached-unix-socket":
			opt := st.mcOpt
			opt.Socket = true
			mc = &memcachedTarget{s: st, opt: opt}
			cfg.Memcached = filepath.Join(st.mc.Dir(), "memcached.sock")
			w.Notes = append(w.Notes, "memcached: restarted with -s "+cfg.Memcached+" (the demo's socket path, not the finding's /var/run one)")
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
			w.Notes = append(w.Notes, "app: listens on "+sock+"; nginx: upstream app { server unix:"+sock+"; }")
		}
	}
	// Order matters: memcached and MySQL's socket first, then the app
	// on its socket, then nginx pointing at it. Rollback runs backwards.
	if mc != nil {
		w.Targets = append(w.Targets, mc)
	}
	if cfg != st.appCfg {
		w.Targets = append(w.Targets, newAppTarget(st, cfg))
	}
	if nginx != nil {
		w.Targets = append(w.Targets, nginx)
	}
	return w, nil
}

// planCache: the cache client's fix (multi-get, set on a miss, TTL),
// behind the reference app's cache_batch setting.
func (l *loop) planCache(_ context.Context, p *tune.Pick) (*tune.Work, error) {
	fs := p.Findings(func(f *advise.Finding) bool { return f.ID == "memcached-write-on-read" })
	w := &tune.Work{Findings: findings(fs)}
	if len(fs) == 0 {
		return w, nil
	}
	cfg := l.st.appCfg
	cfg.CacheBatch = true
	w.Targets = []apply.Target{newAppTarget(l.st, cfg)}
	w.Notes = append(w.Notes, "app: cache_batch on (the reference app's version of the code change: one multi-get per page, set only on a miss, TTL 1 h)")
	return w, nil
}

// planNPlusOne: the N+1 patterns the diagnosis found whose code fix the
// reference app has behind a setting (refapp.Fixes, matched by the
// fingerprint of the statement each fix removes); the others are left
// to the loop's "not applied" list.
func (l *loop) planNPlusOne(_ context.Context, p *tune.Pick) (*tune.Work, error) {
	w := &tune.Work{Findings: []tune.Finding{}}
	cfg := l.st.appCfg
	// Matched on the merged view: the app's tags at the end of a
	// statement change pt-query-digest's fingerprint by a space.
	fixes := map[string]refapp.Fix{}
	for _, fix := range refapp.Fixes {
		fixes[fingerprint.Merged(fingerprint.Fingerprint(fix.Query))] = fix
	}
	fixOf := func(n *nplusone.Pattern) (refapp.Fix, bool) {
		fix, ok := fixes[fingerprint.Merged(n.Fingerprint)]
		return fix, ok
	}
	ns, fs := p.NPlusOne(func(n *nplusone.Pattern) bool { _, ok := fixOf(n); return ok })
	for i, n := range ns {
		fix, _ := fixOf(&n)
		w.Findings = append(w.Findings, fs[i])
		fix.Set(&cfg)
		w.Notes = append(w.Notes, fix.Note)
	}
	if cfg != l.st.appCfg {
		w.Targets = []apply.Target{newAppTarget(l.st, cfg)}
	} else if len(p.D.NPlusOne) > 0 {
		w.Why = "the N+1 patterns found have no fix in the reference app (listed under not applied)"
	}
	return w, nil
}
