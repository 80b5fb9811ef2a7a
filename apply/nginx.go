package apply

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/nginxconf"
)

// Nginx edits nginx's own configuration files (nginx.conf and what it
// includes) with the nginx changes of a change set, each directive put in
// the context it names (package nginxconf), validates with nginx -t and
// reloads. nginx cannot be asked for its running settings, so Plan reads
// what each directive is in the files now (to see drift), and Verify is a
// probe of the reloaded server (Probe) after Reload has seen the new
// workers.
type Nginx struct {
	// Main is nginx.conf.
	Main string
	// Test runs nginx -t on the files on disk.
	Test func(ctx context.Context) error
	// Reload makes the running nginx read them (nginx -s reload, or
	// systemctl reload nginx) and should wait for the new workers.
	Reload func(ctx context.Context) error
	// Probe checks the reloaded server answers (nil: none).
	Probe func(ctx context.Context) error
	// ReloadHint is how a person reloads it, for a failed rollback's
	// commands (default "nginx -t && nginx -s reload").
	ReloadHint string

	changes []changeset.Change
	cfg     *nginxconf.Config
	files   []File
}

// NewNginx loads the configuration under main and renders the nginx
// changes of cs into new file contents.
func NewNginx(main string, cs []changeset.Change) (*Nginx, error) {
	cs, err := only(changeset.Nginx, "nginx", cs)
	if err != nil {
		return nil, err
	}
	cfg, err := nginxconf.Load(main)
	if err != nil {
		return nil, err
	}
	n := &Nginx{Main: main, cfg: cfg}
	var edits []nginxconf.Edit
	for _, c := range cs {
		if c.Kind != changeset.Nginx {
			return nil, fmt.Errorf("nginx: a %s change (%s) is not an nginx directive", c.Kind, c.Name)
		}
		n.changes = append(n.changes, c)
		edits = append(edits, edit(c))
	}
	changed, err := cfg.Apply(edits)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(changed))
	for p := range changed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		n.files = append(n.files, File{Path: p, Data: changed[p], FromBase: true, Base: cfg.Content(p)})
	}
	return n, nil
}

func edit(c changeset.Change) nginxconf.Edit {
	return nginxconf.Edit{Context: c.Target, Name: c.Name, Args: c.To}
}

func (n *Nginx) Name() string                                { return "nginx" }
func (n *Nginx) Files() []File                               { return n.files }
func (n *Nginx) Wanted() State                               { return State{} }
func (n *Nginx) Snapshot(context.Context) (State, error)     { return State{}, nil }
func (n *Nginx) Validate(ctx context.Context) error          { return call(ctx, n.Test) }
func (n *Nginx) Activate(ctx context.Context, _ State) error { return call(ctx, n.Reload) }
func (n *Nginx) Verify(ctx context.Context, _ State) error   { return call(ctx, n.Probe) }

// Plan reads each directive as the files set it now: already the wanted
// value, or a value that is neither the advised-from one nor the wanted
// one (drift). A directive no block sets runs with nginx's default, which
// the advice named as it saw it: that is not drift.
func (n *Nginx) Plan(_ context.Context, _ State) ([]Step, error) {
	var steps []Step
	for _, c := range n.changes {
		s := Step{Key: c.Name + " in " + c.Target, From: c.From, To: c.To, How: HowReload, Command: n.reloadHint()}
		cur, found, err := n.cfg.Current(edit(c))
		switch {
		case err != nil:
			s.Problem = err.Error()
		case found:
			s.Running = strings.Join(cur, " ")
			if sameArgs(s.Running, c.To) {
				s.How, s.Command = HowNone, ""
				break
			}
			s.drift(sameArgs)
		default:
			s.Note = "not set: nginx's default applies now"
		}
		steps = append(steps, s)
	}
	return steps, nil
}

// sameArgs compares directive arguments as nginx reads them.
func sameArgs(a, b string) bool {
	wa, err1 := nginxconf.SplitArgs(a)
	wb, err2 := nginxconf.SplitArgs(b)
	if err1 != nil || err2 != nil {
		return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
	}
	return slices.Equal(wa, wb)
}

func (n *Nginx) reloadHint() string {
	if n.ReloadHint != "" {
		return n.ReloadHint
	}
	return "nginx -t && nginx -s reload"
}

// HandFix reloads nginx with its restored files.
func (n *Nginx) HandFix(string, string) string { return n.reloadHint() }
