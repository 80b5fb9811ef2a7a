package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sysctl is a sysctl.d file (host-wide): Activate writes the values to
// /proc/sys at once, as `sysctl -p FILE` would, and the file keeps them
// across reboots.
type Sysctl struct {
	Path string
	Data []byte
	// ProcRoot is /proc/sys unless a test points it elsewhere.
	ProcRoot string

	settings []Setting
}

// NewSysctl parses a sysctl.d file ("key = value" lines).
func NewSysctl(path string, data []byte) (*Sysctl, error) {
	s := &Sysctl{Path: path, Data: data, ProcRoot: "/proc/sys"}
	err := scanSettings(data, func(n int, line string) error {
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimPrefix(strings.TrimSpace(k), "-")
		if !ok || k == "" || strings.ContainsAny(k, " \t/") {
			return fmt.Errorf("%s: line %d: %q is not key = value", path, n, line)
		}
		s.settings = append(s.settings, Setting{Key: k, Value: fields(v), Line: n})
		return nil
	})
	return s, err
}

func fields(v string) string { return strings.Join(strings.Fields(v), " ") }

func (s *Sysctl) Name() string   { return "sysctl" }
func (s *Sysctl) HostWide() bool { return true }
func (s *Sysctl) Files() []File  { return []File{{Path: s.Path, Data: s.Data}} }

func (s *Sysctl) Wanted() State { return wantedOf(s.settings) }

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
	for _, st := range s.settings {
		if _, err := os.Stat(s.proc(st.Key)); err != nil {
			return fmt.Errorf("%s line %d: this kernel has no %s", s.Path, st.Line, st.Key)
		}
	}
	return nil
}

func (s *Sysctl) Activate(_ context.Context, want State) error {
	for _, k := range want.Keys() {
		if err := os.WriteFile(s.proc(k), []byte(want[k]+"\n"), 0o644); err != nil {
			return fmt.Errorf("sysctl %s = %s: %w", k, want[k], err)
		}
	}
	return nil
}

func (s *Sysctl) Verify(ctx context.Context, want State) error {
	got, err := s.Snapshot(ctx)
	if err != nil {
		return err
	}
	return compare("sysctl", want, got, func(a, b string) bool { return fields(a) == fields(b) })
}

// SystemdDropIn is a unit's drop-in (host-wide): Activate runs systemctl
// daemon-reload and restarts the unit; Verify reads the properties back
// with systemctl show.
type SystemdDropIn struct {
	Unit string
	Path string
	Data []byte
	// Run runs a command; nil means exec.
	Run func(ctx context.Context, argv ...string) ([]byte, error)

	settings []Setting
}

// NewSystemdDropIn parses a drop-in's [Service] Key=Value lines.
func NewSystemdDropIn(unit, path string, data []byte) (*SystemdDropIn, error) {
	d := &SystemdDropIn{Unit: unit, Path: path, Data: data}
	err := scanSettings(data, func(n int, line string) error {
		if line[0] == '[' {
			return nil // [Service]
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("%s: line %d: %q is not Key=Value", path, n, line)
		}
		d.settings = append(d.settings, Setting{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v), Line: n})
		return nil
	})
	return d, err
}

func (d *SystemdDropIn) Name() string   { return "systemd " + d.Unit }
func (d *SystemdDropIn) HostWide() bool { return true }
func (d *SystemdDropIn) Files() []File  { return []File{{Path: d.Path, Data: d.Data}} }

func (d *SystemdDropIn) Wanted() State { return wantedOf(d.settings) }

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
	return compare(d.Name(), want, got, func(a, b string) bool { return strings.EqualFold(a, b) })
}

// compare lists the keys of want whose got value differs.
func compare(what string, want, got State, eq func(a, b string) bool) error {
	var bad []string
	for _, k := range want.Keys() {
		if !eq(want[k], got[k]) {
			bad = append(bad, fmt.Sprintf("%s is %q, wanted %q", k, got[k], want[k]))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s does not run with the new settings: %s", what, strings.Join(bad, "; "))
	}
	return nil
}
