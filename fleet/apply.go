package fleet

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/inventory"
)

// ApplyOptions configure Apply.
type ApplyOptions struct {
	// Dialer reaches the hosts (default &SSHDialer{}).
	Dialer Dialer
	// Binary is how each host runs stacktune.
	Binary Binary
	// ChangeSet is the change set to apply: the directory `stacktune audit
	// --emit` wrote (copied whole: apply refuses views that differ from
	// changes.json) or a changes.json.
	ChangeSet string
	// ApplyArgs are flags of `stacktune apply` for every host, and
	// RollbackArgs those of `stacktune rollback`; each host's
	// stacktune_apply_args follow both.
	ApplyArgs, RollbackArgs []string
	// Label marks every host's transaction; the fleet's rollback undoes a
	// host's transaction only when it carries it. Default "fleet " and
	// the start time.
	Label string
	// Canary is the first batch's size (default 1), Batch the size of the
	// batches after it (default DefaultBatch).
	Canary, Batch int
	// Parallel bounds the hosts of a batch worked on at once (default
	// DefaultParallel).
	Parallel int
	// HostTimeout bounds one host's apply or rollback (default 10m).
	HostTimeout time.Duration
	// DryRun runs `stacktune apply --dry-run` on every host, batch after
	// batch, and stops nothing and rolls nothing back.
	DryRun bool
	// Progress, when set, is called as each host's apply or rollback ends
	// (one call at a time).
	Progress func(HostApply)
}

// DefaultBatch is the batch size after the canary.
const DefaultBatch = 5

// HostState is where a host stands in a fleet apply, as a stable code
// (docs/json.md; the hyphenated ones are older than the rule of
// snake_case codes and stay).
type HostState string

// Host states of a fleet apply.
const (
	HostApplied        HostState = "applied"         // its transaction is in place
	HostFailed         HostState = "failed"          // apply failed there (its own transaction rolled back)
	HostUnknown        HostState = "unknown"         // the connection was lost during its apply
	HostRolledBack     HostState = "rolled-back"     // applied, then rolled back by the fleet
	HostRollbackFailed HostState = "rollback-failed" // applied, and the fleet's rollback failed
	HostNotStarted     HostState = "not-started"     // the roll stopped before its batch
	HostDryRun         HostState = "dry-run"         // planned only
)

// Codes lists the host states.
func (HostState) Codes() []string {
	return []string{string(HostApplied), string(HostFailed), string(HostUnknown), string(HostRolledBack),
		string(HostRollbackFailed), string(HostNotStarted), string(HostDryRun)}
}

// HostApply is one host's part of a fleet apply.
type HostApply struct {
	Name  string    `json:"name"`
	Role  string    `json:"role"`
	Batch int       `json:"batch"`
	State HostState `json:"state"`
	// Stage and Error say what failed (the apply, or the rollback).
	Stage Stage  `json:"stage,omitempty"`
	Error string `json:"error,omitempty"`
	// Output is the end of what stacktune printed there.
	Output   string  `json:"output,omitempty"`
	ElapsedS float64 `json:"elapsed_s"`
	// HandFix is the command that finishes a rollback by hand.
	HandFix string `json:"hand_fix,omitempty"`
}

// ApplyReport is a fleet apply's outcome.
type ApplyReport struct {
	Label string `json:"label"`
	// Batches are the host names of each batch, in order.
	Batches [][]string  `json:"batches"`
	Hosts   []HostApply `json:"hosts"`
	// StoppedAt is the first host that failed ("" when none did); the
	// roll stopped after its batch and every host applied was rolled
	// back.
	StoppedAt string  `json:"stopped_at,omitempty"`
	ElapsedS  float64 `json:"elapsed_s"`
}

// OK reports whether every host applied (or was planned, in a dry run).
func (r *ApplyReport) OK() bool {
	for _, h := range r.Hosts {
		if h.State != HostApplied && h.State != HostDryRun {
			return false
		}
	}
	return true
}

// MaxChangeSet bounds the change set (all its files) copied to each host.
const MaxChangeSet = 64 << 20

// Apply applies one change set to every host, host by host through each
// host's own `stacktune apply` transaction: first the canary batch, then
// batches of Batch. When a host fails, the batch it is in finishes, no
// further batch starts, and every host where the change set was applied
// is rolled back (newest first) with `stacktune rollback`, which undoes
// only a transaction carrying this run's Label. A host whose rollback
// fails is reported with the command that finishes it by hand.
func Apply(ctx context.Context, hosts []inventory.Host, opt ApplyOptions) (*ApplyReport, error) {
	if len(hosts) == 0 {
		return nil, ErrNoHosts
	}
	payload, err := changeSetTar(opt.ChangeSet)
	if err != nil {
		return nil, err
	}
	canary, batch, par := cmpOr(opt.Canary, 1), cmpOr(opt.Batch, DefaultBatch), cmpOr(opt.Parallel, DefaultParallel)
	if canary < 1 || batch < 1 || par < 1 || par > MaxParallel {
		return nil, fmt.Errorf("canary %d, batch %d, parallel %d: each at least 1 (parallel at most %d)", canary, batch, par, MaxParallel)
	}
	d := opt.Dialer
	if d == nil {
		d = &SSHDialer{}
	}
	start := time.Now()
	label := opt.Label
	if label == "" {
		label = "fleet " + start.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	timeout := cmpOr(opt.HostTimeout, 10*time.Minute)
	rep := &ApplyReport{Label: label, Hosts: make([]HostApply, len(hosts))}
	for i, h := range hosts {
		rep.Hosts[i] = HostApply{Name: h.Name, Role: h.Role, State: HostNotStarted}
	}
	for i := 0; i < len(hosts); {
		n := batch
		if i == 0 {
			n = canary
		}
		n = min(n, len(hosts)-i)
		var names []string
		for j := i; j < i+n; j++ {
			rep.Hosts[j].Batch = len(rep.Batches) + 1
			names = append(names, hosts[j].Name)
		}
		rep.Batches = append(rep.Batches, names)
		var mu sync.Mutex
		var wg sync.WaitGroup
		sem := make(chan struct{}, par)
		for j := i; j < i+n; j++ {
			wg.Add(1)
			sem <- struct{}{} // hosts start in inventory order
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				r := applyHost(ctx, d, opt, hosts[j], label, payload, timeout)
				r.Batch = rep.Hosts[j].Batch
				mu.Lock()
				rep.Hosts[j] = r
				if opt.Progress != nil {
					opt.Progress(r)
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		i += n
		if opt.DryRun {
			continue
		}
		for j := i - n; j < i; j++ {
			if st := rep.Hosts[j].State; st == HostFailed || st == HostUnknown {
				rep.StoppedAt = rep.Hosts[j].Name
				break
			}
		}
		if rep.StoppedAt != "" || ctx.Err() != nil {
			break
		}
	}
	if rep.StoppedAt != "" || (ctx.Err() != nil && !opt.DryRun) {
		// Roll back what was applied, newest batch first. The
		// rollback gets its own time: ctx may be what stopped the roll.
		rctx := context.WithoutCancel(ctx)
		for j := len(hosts) - 1; j >= 0; j-- {
			h := &rep.Hosts[j]
			if h.State != HostApplied && h.State != HostUnknown {
				continue
			}
			rollbackHost(rctx, d, opt, hosts[j], label, timeout, h)
			if opt.Progress != nil {
				opt.Progress(*h)
			}
		}
	}
	rep.ElapsedS = time.Since(start).Seconds()
	return rep, ctx.Err()
}

// applyHost runs stacktune apply on one host with the change set.
func applyHost(ctx context.Context, d Dialer, opt ApplyOptions, h inventory.Host, label string, payload []byte, timeout time.Duration) HostApply {
	r := HostApply{Name: h.Name, Role: h.Role}
	t0 := time.Now()
	defer func() { r.ElapsedS = time.Since(t0).Seconds() }()
	args := append([]string{"apply", "--label", label}, opt.ApplyArgs...)
	if opt.DryRun {
		args = append(args, "--dry-run")
	}
	args, err := hostArgs(h, VarApplyArgs, args)
	if err != nil {
		r.State, r.Stage, r.Error = HostFailed, StageRun, err.Error()
		return r
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := runWithPayload(hctx, d, opt.Binary, h, args, payload)
	r.Output = lastLines(string(out), 12)
	switch {
	case err == nil && opt.DryRun:
		r.State = HostDryRun
	case err == nil:
		r.State = HostApplied
	default:
		r.Stage, r.Error = stageOf(err), errText(err)
		r.State = HostFailed
		var ee *ExitError
		// Lost after the command started: it may have applied.
		if r.Stage == StageRun && !errors.As(err, &ee) && !opt.DryRun {
			r.State = HostUnknown
		}
	}
	return r
}

// rollbackHost undoes this run's transaction on a host.
func rollbackHost(ctx context.Context, d Dialer, opt ApplyOptions, h inventory.Host, label string, timeout time.Duration, r *HostApply) {
	args, err := hostArgs(h, VarApplyArgs, append([]string{"rollback", "--expect-label", label}, opt.RollbackArgs...))
	hand := "stacktune " + quoteArgs(args)
	if err == nil {
		hctx, cancel := context.WithTimeout(ctx, timeout)
		var out []byte
		out, err = runStacktune(hctx, d, opt.Binary, h, args, nil)
		cancel()
		if s := lastLines(string(out), 12); s != "" {
			r.Output = s
		}
	}
	var ee *ExitError
	switch {
	case err == nil:
		r.State = HostRolledBack
	case r.State == HostUnknown && errors.As(err, &ee) && strings.Contains(ee.Stderr, "expect-label"):
		// Its own transaction never took or undid itself: nothing of
		// this run is in place there.
		r.State, r.Error = HostFailed, r.Error+"; nothing of this run was left in place there"
	default:
		r.State, r.Stage = HostRollbackFailed, stageOf(err)
		r.Error = "rollback: " + errText(err)
		r.HandFix = hand
	}
}

// runWithPayload runs stacktune with a tar of the change set on standard
// input, extracted on the host beside the copied binary.
func runWithPayload(ctx context.Context, d Dialer, b Binary, h inventory.Host, args []string, payload []byte) ([]byte, error) {
	c, err := d.Dial(ctx, h)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	remote := b.Remote
	if v := h.Vars[VarBinary]; v != "" {
		remote = v
	}
	in := io.Reader(bytes.NewReader(payload))
	if remote == "" {
		self := b.Self
		if self == "" {
			if self, err = os.Executable(); err != nil {
				return nil, &HostError{StageRun, fmt.Errorf("finding this stacktune to copy: %w", err)}
			}
		}
		rc, err := withBinary(payload, self)
		if err != nil {
			return nil, &HostError{StageRun, err}
		}
		defer rc.Close()
		in = rc
	}
	var out bytes.Buffer
	err = c.Run(ctx, payloadScript(remote, args), in, &limitWriter{w: &out, n: maxOutput}, nil)
	return out.Bytes(), err
}

// payloadScript extracts the tar on standard input into a private
// temporary directory and runs stacktune there with args and the change
// set's path last.
func payloadScript(remote string, args []string) string {
	bin := `"$d/x/stacktune"`
	check := fmt.Sprintf(`case "$(uname -s)/$(uname -m)" in
Linux/%s) ;;
*) echo "this host is $(uname -s) $(uname -m); the stacktune copied is built for another: install one there and name it with stacktune_binary or --remote-binary" >&2; exit %d;;
esac
`, unameArch(), exitArch)
	if remote != "" {
		bin, check = shellQuote(remote), ""
	}
	return fmt.Sprintf(`set -e
umask 077
d=$(mktemp -d "${TMPDIR:-/tmp}/stacktune.XXXXXX")
trap 'rm -rf "$d"' EXIT HUP INT TERM
%smkdir "$d/x"
tar -x -f - -C "$d/x" || { echo "could not unpack the change set (tar)" >&2; exit %d; }
%s %s "$d/x/changes"
`, check, exitShort, bin, quoteArgs(args))
}

// changeSetTar packs the change set (a directory or one changes.json)
// under changes/.
func changeSetTar(path string) ([]byte, error) {
	if path == "" {
		return nil, errors.New("no change set: give the directory of stacktune audit --emit or its changes.json")
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("change set: %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	total := int64(0)
	add := func(name string, p string) error {
		b, err := input.ReadFile(p, MaxChangeSet-total)
		if errors.Is(err, input.ErrTooLarge) {
			return fmt.Errorf("change set %s: more than %d bytes (fleet.MaxChangeSet)", path, MaxChangeSet)
		}
		if err != nil {
			return err
		}
		if total += int64(len(b)); total > MaxChangeSet {
			return fmt.Errorf("change set %s: more than %d bytes (fleet.MaxChangeSet)", path, MaxChangeSet)
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(b)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	}
	if !st.IsDir() {
		if err := tw.WriteHeader(&tar.Header{Name: "changes/", Mode: 0o700, Typeflag: tar.TypeDir, ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if err := add("changes/changes.json", path); err != nil {
			return nil, fmt.Errorf("change set: %w", err)
		}
	} else {
		err = filepath.WalkDir(path, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(path, p)
			name := filepath.ToSlash(filepath.Join("changes", rel))
			switch {
			case e.IsDir():
				return tw.WriteHeader(&tar.Header{Name: name + "/", Mode: 0o700, Typeflag: tar.TypeDir, ModTime: time.Unix(0, 0)})
			case e.Type().IsRegular():
				return add(name, p)
			}
			return fmt.Errorf("%s is not a regular file", p)
		})
		if err != nil {
			return nil, fmt.Errorf("change set: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// withBinary streams the tar t with the file at bin added as
// "stacktune" (mode 0700), read as it is sent rather than held in memory.
func withBinary(t []byte, bin string) (io.ReadCloser, error) {
	f, err := os.Open(bin)
	if err != nil {
		return nil, fmt.Errorf("reading this stacktune to copy: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		defer f.Close()
		tw := tar.NewWriter(pw)
		tr := tar.NewReader(bytes.NewReader(t))
		err := func() error {
			for {
				hdr, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				if err := tw.WriteHeader(hdr); err != nil {
					return err
				}
				if _, err := io.Copy(tw, tr); err != nil {
					return err
				}
			}
			if err := tw.WriteHeader(&tar.Header{Name: "stacktune", Mode: 0o700, Size: st.Size(), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
				return err
			}
			if _, err := io.Copy(tw, f); err != nil {
				return err
			}
			return tw.Close()
		}()
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// lastLines is the end of s, at most n lines.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
