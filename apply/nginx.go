package apply

import (
	"context"
	"sort"

	"github.com/stacktune/stacktune/nginxconf"
)

// Nginx edits nginx's own configuration files (nginx.conf and what it
// includes) with the directives of an emitted snippet, each put in the
// context it names (package nginxconf), validates with nginx -t and
// reloads. nginx cannot be asked for its running settings, so Verify is a
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

	files []File
}

// NewNginx loads the configuration under main and renders the edits of
// snippet (as advise.Emit writes it) into new file contents.
func NewNginx(main string, snippet []byte) (*Nginx, error) {
	edits, err := nginxconf.ParseSnippet(snippet)
	if err != nil {
		return nil, err
	}
	return NewNginxEdits(main, edits)
}

// NewNginxEdits is NewNginx with the edits given.
func NewNginxEdits(main string, edits []nginxconf.Edit) (*Nginx, error) {
	cfg, err := nginxconf.Load(main)
	if err != nil {
		return nil, err
	}
	changed, err := cfg.Apply(edits)
	if err != nil {
		return nil, err
	}
	n := &Nginx{Main: main}
	paths := make([]string, 0, len(changed))
	for p := range changed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		n.files = append(n.files, File{Path: p, Data: changed[p]})
	}
	return n, nil
}

func (n *Nginx) Name() string                                { return "nginx" }
func (n *Nginx) HostWide() bool                              { return false }
func (n *Nginx) Files() []File                               { return n.files }
func (n *Nginx) Wanted() State                               { return State{} }
func (n *Nginx) Snapshot(context.Context) (State, error)     { return State{}, nil }
func (n *Nginx) Validate(ctx context.Context) error          { return call(ctx, n.Test) }
func (n *Nginx) Activate(ctx context.Context, _ State) error { return call(ctx, n.Reload) }
func (n *Nginx) Verify(ctx context.Context, _ State) error   { return call(ctx, n.Probe) }

func call(ctx context.Context, f func(context.Context) error) error {
	if f == nil {
		return nil
	}
	return f(ctx)
}
