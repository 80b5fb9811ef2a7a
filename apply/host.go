package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/input"
)

// MaxFileBytes bounds a file apply edits (read before it is changed, to
// compute the change, back it up and check it was not edited meanwhile):
// far above a real configuration file.
const MaxFileBytes = 16 << 20

// readTarget reads a file apply edits: a regular file (a FIFO is refused
// without blocking) of at most MaxFileBytes; a missing file is an error
// matching fs.ErrNotExist.
func readTarget(path string) ([]byte, error) {
	b, err := input.ReadFile(path, MaxFileBytes)
	if errors.Is(err, input.ErrTooLarge) {
		return nil, fmt.Errorf("%w (apply.MaxFileBytes)", err)
	}
	return b, err
}

// settingsFile renders the changes cs into the settings file at path as
// it is now (format's Edit), as a File computed from that base.
func settingsFile(format changeset.Format, path string, cs []changeset.Change) (File, error) {
	old, err := readTarget(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return File{}, err
	}
	if err != nil {
		old = nil
	}
	data, err := format.Edit(old, dropInHeader, changeset.Lines(cs))
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	return File{Path: path, Data: data, FromBase: true, Base: old}, nil
}

// only keeps the changes of one kind, refusing others.
// only checks that every change is of kind and matches its grammar
// (changeset's Check): the second check, before anything is touched,
// of changes a target may have been built from without a Set.
func only(kind changeset.Kind, what string, cs []changeset.Change, more ...changeset.Kind) ([]changeset.Change, error) {
	for _, c := range cs {
		if c.Kind != kind && !slices.Contains(more, c.Kind) {
			return nil, fmt.Errorf("%s: a %s change (%s) is not a %s", what, c.Kind, c.Name, kind)
		}
		if err := c.Check(); err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w: %w", what, c.Kind, c.Name, changeset.ErrInvalid, err)
		}
	}
	return cs, nil
}

// wantedOf is the state changes ask for; the last of a repeated name
// wins.
func wantedOf(cs []changeset.Change, norm func(string) string) State {
	w := State{}
	for _, c := range cs {
		w[c.Name] = norm(c.To)
	}
	return w
}

// Sysctl is a sysctl.d file (host-wide): Activate writes the values to
// /proc/sys at once, as `sysctl -p FILE` would, and the file keeps them
// across reboots.
type Sysctl struct {
	Path string
	// ProcRoot is /proc/sys unless a test points it elsewhere.
	ProcRoot string

	changes []changeset.Change
	file    File
}

// NewSysctl builds the target of the sysctl changes cs: the sysctl.d
// file at path as it is now, with each setting replaced or added.
func NewSysctl(path string, cs []changeset.Change) (*Sysctl, error) {
	cs, err := only(changeset.Sysctl, "sysctl", cs)
	if err != nil {
		return nil, err
	}
	f, err := settingsFile(changeset.SysctlD, path, cs)
	if err != nil {
		return nil, err
	}
	return &Sysctl{Path: path, ProcRoot: "/proc/sys", changes: cs, file: f}, nil
}

func fields(v string) string { return strings.Join(strings.Fields(v), " ") }

func (s *Sysctl) Name() string   { return "sysctl" }
func (s *Sysctl) HostWide() bool { return true }
func (s *Sysctl) Files() []File {
	if s.file.Path == "" {
		return nil
	}
	return []File{s.file}
}
func (s *Sysctl) Wanted() State { return wantedOf(s.changes, fields) }

func (s *Sysctl) proc(key string) string {
	return filepath.Join(s.ProcRoot, strings.ReplaceAll(key, ".", "/"))
}

func (s *Sysctl) Snapshot(context.Context) (State, error) {
	out := State{}
	for k := range s.Wanted() {
		b, err := os.ReadFile(s.proc(k))
		if err != nil {
			return nil, fmt.Errorf("sysctl %s: %w", k, err)
		}
		out[k] = fields(string(b))
	}
	return out, nil
}

// Validate checks every key exists on this kernel.
func (s *Sysctl) Validate(context.Context) error {
	for k := range s.Wanted() {
		if _, err := os.Stat(s.proc(k)); err != nil {
			return fmt.Errorf("this kernel has no %s", k)
		}
	}
	return nil
}

func sameFields(a, b string) bool { return fields(a) == fields(b) }

// Plan: each value is written to /proc/sys at once.
func (s *Sysctl) Plan(_ context.Context, running State) ([]Step, error) {
	var steps []Step
	for _, c := range s.changes {
		st := Step{Key: c.Name, From: c.From, Running: running[c.Name], To: fields(c.To), How: HowSet, Command: s.HandFix(c.Name, c.To)}
		if _, err := os.Stat(s.proc(c.Name)); err != nil {
			st.Problem = "this kernel has no " + c.Name
		} else if sameFields(st.Running, st.To) {
			st.How, st.Command = HowNone, ""
		} else {
			st.drift(sameFields)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// Activate writes every value, going on past a failure.
func (s *Sysctl) Activate(_ context.Context, want State) error {
	var errs []error
	for _, k := range want.Keys() {
		if err := os.WriteFile(s.proc(k), []byte(want[k]+"\n"), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("sysctl %s = %s: %w", k, want[k], err))
		}
	}
	return errors.Join(errs...)
}

func (s *Sysctl) Verify(ctx context.Context, want State) error {
	got, err := s.Snapshot(ctx)
	if err != nil {
		return err
	}
	return compare("sysctl", want, got, func(_, a, b string) bool { return sameFields(a, b) })
}

// HandFix is the sysctl command that sets key.
func (s *Sysctl) HandFix(key, want string) string {
	if key == "" {
		return "sysctl --system"
	}
	return "sysctl -w " + key + "=" + shellQuote(fields(want))
}

// SystemdDropIn is a unit's drop-in (host-wide): Activate runs systemctl
// daemon-reload and restarts the unit; Verify reads the properties back
// with systemctl show.
type SystemdDropIn struct {
	Unit string
	Path string
	// Run runs a command; nil means exec.
	Run func(ctx context.Context, argv ...string) ([]byte, error)

	changes []changeset.Change
	file    File
}

// NewSystemdDropIn builds the target of the systemd changes cs for unit:
// the drop-in at path as it is now, with each setting replaced or added.
func NewSystemdDropIn(unit, path string, cs []changeset.Change) (*SystemdDropIn, error) {
	cs, err := only(changeset.Systemd, "systemd", cs)
	if err != nil {
		return nil, err
	}
	f, err := settingsFile(changeset.SystemdDropIn, path, cs)
	if err != nil {
		return nil, err
	}
	return &SystemdDropIn{Unit: unit, Path: path, changes: cs, file: f}, nil
}

func (d *SystemdDropIn) Name() string   { return "systemd " + d.Unit }
func (d *SystemdDropIn) HostWide() bool { return true }
func (d *SystemdDropIn) Files() []File {
	if d.file.Path == "" {
		return nil
	}
	return []File{d.file}
}
func (d *SystemdDropIn) Wanted() State {
	return wantedOf(d.changes, strings.TrimSpace)
}

func (d *SystemdDropIn) run(ctx context.Context, argv ...string) ([]byte, error) {
	if d.Run != nil {
		return d.Run(ctx, argv...)
	}
	return runCommand(ctx, argv, false)
}

func (d *SystemdDropIn) Snapshot(ctx context.Context) (State, error) {
	out := State{}
	for _, k := range d.Wanted().Keys() {
		b, err := d.run(ctx, "systemctl", "show", "--value", "-p", k, d.Unit)
		if err != nil {
			return nil, err
		}
		out[k] = strings.TrimSpace(string(b))
	}
	return out, nil
}

func (d *SystemdDropIn) Validate(ctx context.Context) error {
	_, err := d.run(ctx, "systemctl", "cat", d.Unit)
	return err
}

// Plan: each setting takes effect when the unit restarts.
func (d *SystemdDropIn) Plan(_ context.Context, running State) ([]Step, error) {
	var steps []Step
	for _, c := range d.changes {
		st := Step{Key: c.Name, From: c.From, Running: running[c.Name], To: c.To, How: HowRestart, Command: d.HandFix("", "")}
		if strings.EqualFold(st.Running, st.To) {
			st.How, st.Command = HowNone, ""
		} else {
			st.drift(strings.EqualFold)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// Activate reloads the unit files and restarts the unit (the drop-in on
// disk is already the wanted or the restored one).
func (d *SystemdDropIn) Activate(ctx context.Context, _ State) error {
	if _, err := d.run(ctx, "systemctl", "daemon-reload"); err != nil {
		return err
	}
	_, err := d.run(ctx, "systemctl", "restart", d.Unit)
	return err
}

func (d *SystemdDropIn) Verify(ctx context.Context, want State) error {
	got, err := d.Snapshot(ctx)
	if err != nil {
		return err
	}
	return compare(d.Name(), want, got, func(_, a, b string) bool { return strings.EqualFold(a, b) })
}

// HandFix reloads the units and restarts this one.
func (d *SystemdDropIn) HandFix(string, string) string {
	return "systemctl daemon-reload && systemctl restart " + shellQuote(d.Unit)
}
