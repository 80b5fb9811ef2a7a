package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/internal/fastcgi"
	"github.com/stacktune/stacktune/phpfpmconf"
)

// PHPFPM edits PHP-FPM's pool files with the php-fpm-pool changes of a
// change set (each setting on its line in its pool, through package
// phpfpmconf), validates them with php-fpm -t and reloads the master
// (SIGUSR2: it re-reads every file and starts new workers).
//
// PHP-FPM cannot be asked for most of its running settings, so Verify
// reads back what it can: the files hold the wanted values, the pool's
// status page (over FastCGI on the pool's own socket) shows a master
// started after the reload, so the running settings are the files', and
// it runs the wanted process manager, with pm.max_children workers when
// the pool is static. A pool without a status page is verified by its
// files and the reload command's success, and Plan says so.
type PHPFPM struct {
	// Main is php-fpm.conf (its includes are the pool files).
	Main string
	// Test runs php-fpm -t on the files on disk.
	Test func(ctx context.Context) error
	// Reload makes the master read them (systemctl reload php8.2-fpm,
	// kill -USR2 of the master); it may return before the master has
	// (systemctl's reload of PHP-FPM does): Verify waits for it.
	Reload func(ctx context.Context) error
	// ReloadHint is how a person reloads it, for a failed rollback's
	// commands (default "php-fpm -t && systemctl reload php-fpm").
	ReloadHint string
	// Wait bounds how long Verify waits for the reloaded master; default
	// 10 s.
	Wait time.Duration

	changes   []changeset.Change
	cfg       *phpfpmconf.Config
	files     []File
	activated time.Time
	// before are the pools' worker PIDs just before Activate: a reloaded
	// master has none of them (it starts new workers).
	before map[string][]int64
}

// NewPHPFPM loads the configuration under main and renders the php-fpm
// changes of cs into new contents of the pool files.
func NewPHPFPM(main string, cs []changeset.Change) (*PHPFPM, error) {
	cs, err := only(changeset.PHPFPM, "php-fpm", cs)
	if err != nil {
		return nil, err
	}
	cfg, err := phpfpmconf.Load(main)
	if err != nil {
		return nil, err
	}
	p := &PHPFPM{Main: main, cfg: cfg, changes: cs}
	var edits []phpfpmconf.Edit
	for _, c := range cs {
		edits = append(edits, phpfpmEdit(c))
	}
	changed, err := cfg.Apply(edits)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(changed))
	for path := range changed {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		p.files = append(p.files, File{Path: path, Data: changed[path], FromBase: true, Base: cfg.Content(path)})
	}
	return p, nil
}

func phpfpmEdit(c changeset.Change) phpfpmconf.Edit {
	return phpfpmconf.Edit{Pool: changeset.PHPFPMPool(c.Target), Key: c.Name, Value: strings.TrimSpace(c.To)}
}

// phpfpmKey is a setting's key in a State: "POOL SETTING".
func phpfpmKey(pool, setting string) string { return pool + " " + setting }

func splitPHPFPMKey(k string) (pool, setting string, ok bool) {
	return strings.Cut(k, " ")
}

func (p *PHPFPM) Name() string  { return "php-fpm" }
func (p *PHPFPM) Files() []File { return p.files }

func (p *PHPFPM) Wanted() State {
	w := State{}
	for _, c := range p.changes {
		w[phpfpmKey(changeset.PHPFPMPool(c.Target), c.Name)] = strings.TrimSpace(c.To)
	}
	return w
}

// Snapshot reads each wanted setting as the files on disk set it (with
// PHP-FPM's default when they do not): before anything is written, what
// the running master loaded.
func (p *PHPFPM) Snapshot(context.Context) (State, error) {
	cfg, err := phpfpmconf.Load(p.Main)
	if err != nil {
		return nil, err
	}
	out := State{}
	for _, k := range p.Wanted().Keys() {
		pool, setting, _ := splitPHPFPMKey(k)
		pl := cfg.Pool(pool)
		if pl == nil {
			return nil, fmt.Errorf("php-fpm: no pool %s in %s", pool, p.Main)
		}
		v, _ := pl.Value(setting)
		out[k] = v
	}
	return out, nil
}

func (p *PHPFPM) Validate(ctx context.Context) error { return call(ctx, p.Test) }

// Plan reads each setting as the files set it now: already the wanted
// value, or neither the advised-from one nor the wanted one (drift).
func (p *PHPFPM) Plan(_ context.Context, running State) ([]Step, error) {
	var steps []Step
	for _, c := range p.changes {
		e := phpfpmEdit(c)
		s := Step{Key: phpfpmKey(e.Pool, e.Key), From: c.From, To: e.Value, How: HowReload, Command: p.reloadHint()}
		pl := p.cfg.Pool(e.Pool)
		switch {
		case pl == nil:
			s.Problem = fmt.Sprintf("php-fpm: no pool %s in %s", e.Pool, p.Main)
		default:
			s.Running, _ = pl.Value(e.Key)
			if _, set := pl.Settings[e.Key]; !set {
				s.Note = "not set in the pool: PHP-FPM's default applies now"
			}
			if path, _ := pl.Value("pm.status_path"); path == "" {
				s.Note = joinNotes(s.Note, "the pool has no status page (pm.status_path): the read-back is of the files and the reload")
			}
			if s.Running == s.To {
				s.How, s.Command = HowNone, ""
				break
			}
			s.drift(func(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) })
		}
		steps = append(steps, s)
	}
	return steps, nil
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// Activate reloads the master, which reads the files on disk (the wanted
// ones, or the restored ones on rollback).
func (p *PHPFPM) Activate(ctx context.Context, want State) error {
	p.activated = time.Now().Truncate(time.Second)
	p.before = map[string][]int64{}
	if cfg, err := phpfpmconf.Load(p.Main); err == nil {
		for _, k := range want.Keys() {
			pool, _, _ := splitPHPFPMKey(k)
			if pl := cfg.Pool(pool); pl != nil {
				if path, _ := pl.Value("pm.status_path"); path != "" {
					if st, err := phpfpmStatus(ctx, pl, path); err == nil {
						p.before[pool] = st.pids()
					}
				}
			}
		}
	}
	return call(ctx, p.Reload)
}

// Verify checks the files hold want and, for each pool with a status
// page, that its master started after Activate and runs the process
// manager (and, static, the number of workers) the files say; it waits
// up to Wait for a reload that is still under way.
func (p *PHPFPM) Verify(ctx context.Context, want State) error {
	wait := p.Wait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		err := p.verifyOnce(ctx, want)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (p *PHPFPM) verifyOnce(ctx context.Context, want State) error {
	cfg, err := phpfpmconf.Load(p.Main)
	if err != nil {
		return err
	}
	got := State{}
	pools := map[string]bool{}
	for _, k := range want.Keys() {
		pool, setting, _ := splitPHPFPMKey(k)
		pools[pool] = true
		if pl := cfg.Pool(pool); pl != nil {
			got[k], _ = pl.Value(setting)
		}
	}
	if err := compare("the php-fpm files", want, got, func(_, a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) }); err != nil {
		return err
	}
	names := make([]string, 0, len(pools))
	for n := range pools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		pl := cfg.Pool(name)
		path, _ := pl.Value("pm.status_path")
		if path == "" {
			continue
		}
		st, err := phpfpmStatus(ctx, pl, path)
		if err != nil {
			return fmt.Errorf("php-fpm pool %s: %w", name, err)
		}
		if !p.activated.IsZero() && st.StartTime < p.activated.Unix() {
			return fmt.Errorf("php-fpm pool %s: the master has not reloaded yet (started %s, reload at %s)", name,
				time.Unix(st.StartTime, 0).Format(time.TimeOnly), p.activated.Format(time.TimeOnly))
		}
		for _, pid := range st.pids() {
			if slices.Contains(p.before[name], pid) {
				return fmt.Errorf("php-fpm pool %s: worker %d from before the reload still runs: the master has not reloaded yet", name, pid)
			}
		}
		e := &MismatchError{What: "php-fpm pool " + name}
		pm, _ := pl.Value("pm")
		if pm != "" && !strings.EqualFold(pm, st.ProcessManager) {
			e.Mismatches = append(e.Mismatches, Mismatch{Key: phpfpmKey(name, "pm"), Got: st.ProcessManager, Want: pm})
		}
		if strings.EqualFold(pm, "static") {
			if n, ok := pl.Int("pm.max_children"); ok && st.TotalProcesses != n {
				e.Mismatches = append(e.Mismatches, Mismatch{Key: phpfpmKey(name, "pm.max_children"), Got: strconv.FormatInt(st.TotalProcesses, 10) + " workers running", Want: strconv.FormatInt(n, 10)})
			}
		}
		if len(e.Mismatches) > 0 {
			return e
		}
	}
	return nil
}

// phpfpmStatusReply is what Verify reads of a status page.
type phpfpmStatusReply struct {
	ProcessManager string `json:"process manager"`
	StartTime      int64  `json:"start time"`
	TotalProcesses int64  `json:"total processes"`
	Processes      []struct {
		PID int64 `json:"pid"`
	} `json:"processes"`
}

func (s *phpfpmStatusReply) pids() []int64 {
	var out []int64
	for _, p := range s.Processes {
		out = append(out, p.PID)
	}
	return out
}

// phpfpmStatus asks a pool for its status over FastCGI on its socket.
func phpfpmStatus(ctx context.Context, pl *phpfpmconf.Pool, path string) (*phpfpmStatusReply, error) {
	network, addr, ok := pl.Listen()
	if !ok {
		return nil, fmt.Errorf("no listen address")
	}
	resp, err := fastcgi.Get(ctx, network, addr, map[string]string{
		"SCRIPT_FILENAME": path, "SCRIPT_NAME": path, "REQUEST_URI": path + "?json&full", "QUERY_STRING": "json&full",
	}, fastcgi.Options{MaxBody: 8 << 20})
	if err != nil {
		return nil, fmt.Errorf("status page %s: %w", path, err)
	}
	if resp.Status != 200 {
		return nil, fmt.Errorf("status page %s: HTTP status %d", path, resp.Status)
	}
	var st phpfpmStatusReply
	if err := json.Unmarshal(resp.Body, &st); err != nil || st.ProcessManager == "" {
		return nil, fmt.Errorf("status page %s: not PHP-FPM's status (%v)", path, err)
	}
	return &st, nil
}

func (p *PHPFPM) reloadHint() string {
	if p.ReloadHint != "" {
		return p.ReloadHint
	}
	return "php-fpm -t && systemctl reload php-fpm"
}

// HandFix reloads PHP-FPM with its restored files.
func (p *PHPFPM) HandFix(string, string) string { return p.reloadHint() }
