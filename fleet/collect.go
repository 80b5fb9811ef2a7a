package fleet

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/inventory"
)

// SchemaVersion is the version of the fleet snapshot's JSON layout.
const SchemaVersion = 1

// Snapshot is a fleet's collection: one collect.Snapshot per host that
// answered, and why for each that did not. Its JSON is told from a single
// host's snapshot by its "fleet_version" key.
type Snapshot struct {
	Version   int       `json:"fleet_version"`
	Taken     time.Time `json:"taken"`
	Inventory string    `json:"inventory"`
	// ElapsedS is how long the whole collection took.
	ElapsedS float64 `json:"elapsed_s"`
	// Parallel is how many hosts were worked on at once.
	Parallel int `json:"parallel"`
	// Hosts are in inventory order.
	Hosts []Host `json:"hosts"`
}

// Host is one host's outcome.
type Host struct {
	Name    string   `json:"name"`
	Address string   `json:"address"`
	Port    int      `json:"port,omitempty"`
	Role    string   `json:"role"`
	Groups  []string `json:"groups,omitempty"`
	// Stage and Error say why the host has no snapshot.
	Stage    Stage             `json:"stage,omitempty"`
	Error    string            `json:"error,omitempty"`
	ElapsedS float64           `json:"elapsed_s"`
	Snapshot *collect.Snapshot `json:"snapshot,omitempty"`
}

// OK reports whether the host answered with a snapshot.
func (h Host) OK() bool { return h.Snapshot != nil }

// Failed returns the hosts without a snapshot.
func (s *Snapshot) Failed() []Host {
	var out []Host
	for _, h := range s.Hosts {
		if !h.OK() {
			out = append(out, h)
		}
	}
	return out
}

// Roles returns the roles in order of first appearance.
func (s *Snapshot) Roles() []string {
	var out []string
	seen := map[string]bool{}
	for _, h := range s.Hosts {
		if !seen[h.Role] {
			seen[h.Role] = true
			out = append(out, h.Role)
		}
	}
	return out
}

// CollectOptions configures Collect.
type CollectOptions struct {
	// Dialer reaches the hosts (default &SSHDialer{}).
	Dialer Dialer
	// Binary is how each host runs stacktune.
	Binary Binary
	// Args are the flags of `stacktune collect` for every host; each
	// host's stacktune_collect_args follow them.
	Args []string
	// Parallel is how many hosts are worked on at once (default
	// DefaultParallel).
	Parallel int
	// HostTimeout bounds one host's whole collection (default 5m).
	HostTimeout time.Duration
	// Progress, when set, is called as each host finishes (from several
	// goroutines, one call at a time).
	Progress func(done, total int, h Host)
}

// DefaultParallel is how many hosts Collect and Apply work on at once by
// default.
const DefaultParallel = 20

// MaxParallel bounds Parallel.
const MaxParallel = 1000

// ErrNoHosts is returned when there is no host to work on.
var ErrNoHosts = errors.New("no hosts")

// Collect runs `stacktune collect` on every host, at most Parallel at a
// time, and merges their snapshots in inventory order. A host that cannot
// be reached or whose collection fails is recorded with its stage and
// reason; the others go on. Its own error is only for the caller's
// mistakes (no hosts, a bad option) and ctx.
func Collect(ctx context.Context, hosts []inventory.Host, opt CollectOptions) (*Snapshot, error) {
	if len(hosts) == 0 {
		return nil, ErrNoHosts
	}
	par := cmpOr(opt.Parallel, DefaultParallel)
	if par < 1 || par > MaxParallel {
		return nil, fmt.Errorf("parallel %d: between 1 and %d", par, MaxParallel)
	}
	d := opt.Dialer
	if d == nil {
		d = &SSHDialer{}
	}
	timeout := cmpOr(opt.HostTimeout, 5*time.Minute)
	start := time.Now()
	fs := &Snapshot{Version: SchemaVersion, Taken: start.UTC(), Parallel: par, Hosts: make([]Host, len(hosts))}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i, h := range hosts {
		fs.Hosts[i] = Host{Name: h.Name, Address: h.Address, Port: h.Port, Role: h.Role, Groups: h.Groups}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				fs.Hosts[i].Stage, fs.Hosts[i].Error = StageConnect, "not started: "+ctx.Err().Error()
				return
			}
			defer func() { <-sem }()
			t0 := time.Now()
			hctx, cancel := context.WithTimeout(ctx, timeout)
			snap, err := collectHost(hctx, d, opt.Binary, h, opt.Args)
			cancel()
			r := &fs.Hosts[i]
			r.ElapsedS = time.Since(t0).Seconds()
			if err != nil {
				r.Stage, r.Error = stageOf(err), errText(err)
				if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
					r.Error = fmt.Sprintf("no answer within %v (the host timeout)", timeout)
				}
			} else {
				r.Snapshot = snap
			}
			if opt.Progress != nil {
				mu.Lock()
				done++
				opt.Progress(done, len(hosts), *r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fs.ElapsedS = time.Since(start).Seconds()
	return fs, ctx.Err()
}

func errText(err error) string {
	var he *HostError
	if errors.As(err, &he) {
		return he.Err.Error()
	}
	return err.Error()
}

func collectHost(ctx context.Context, d Dialer, b Binary, h inventory.Host, common []string) (*collect.Snapshot, error) {
	args, err := hostArgs(h, VarCollectArgs, append([]string{"collect"}, common...))
	if err != nil {
		return nil, &HostError{StageRun, err}
	}
	out, err := runStacktune(ctx, d, b, h, args, nil)
	if err != nil {
		return nil, err
	}
	return ReadHostSnapshot(out)
}

// ReadHostSnapshot reads one host's snapshot as `stacktune collect`
// printed it.
func ReadHostSnapshot(b []byte) (*collect.Snapshot, error) {
	var s collect.Snapshot
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		return nil, &HostError{StageRead, fmt.Errorf("its output is not a snapshot (%d bytes): %w", len(b), err)}
	}
	if s.Version == 0 || s.Version > collect.SchemaVersion {
		return nil, &HostError{StageRead, fmt.Errorf("snapshot version %d, this stacktune reads up to %d: use the same stacktune on every host", s.Version, collect.SchemaVersion)}
	}
	if dec.More() {
		return nil, &HostError{StageRead, errors.New("more output after the snapshot")}
	}
	return &s, nil
}

// MaxSnapshotFile bounds a fleet snapshot read from disk (each host's
// snapshot is bounded by what a host may send, 64 MiB).
const MaxSnapshotFile = 1 << 30

// IsFleet reports whether the JSON file at path is a fleet snapshot (it
// reads only the start of a regular file; anything else is not one).
func IsFleet(path string) bool {
	f, _, err := input.OpenFile(path)
	if err != nil {
		return false
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, 1<<20))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	t, err := dec.Token()
	return err == nil && t == "fleet_version"
}

// Load reads a fleet snapshot saved as JSON: a regular file (a FIFO is
// refused without blocking) of at most MaxSnapshotFile bytes, decoded as
// it is read rather than read whole first.
func Load(path string) (*Snapshot, error) {
	f, fi, err := input.OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the fleet snapshot: %w", err)
	}
	defer f.Close()
	if fi.Size() > MaxSnapshotFile {
		return nil, fmt.Errorf("reading the fleet snapshot: %w (fleet.MaxSnapshotFile)", &input.TooLargeError{Path: path, Limit: MaxSnapshotFile})
	}
	var s Snapshot
	dec := json.NewDecoder(bufio.NewReader(io.LimitReader(f, MaxSnapshotFile)))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s is not a fleet snapshot: %w", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s is not a fleet snapshot: data after its JSON value", path)
	}
	if s.Version == 0 || s.Version > SchemaVersion {
		return nil, fmt.Errorf("%s: fleet snapshot version %d, this stacktune reads up to %d", path, s.Version, SchemaVersion)
	}
	for _, h := range s.Hosts {
		if h.Snapshot != nil && (h.Snapshot.Version == 0 || h.Snapshot.Version > collect.SchemaVersion) {
			return nil, fmt.Errorf("%s: host %s: snapshot version %d, this stacktune reads up to %d", path, h.Name, h.Snapshot.Version, collect.SchemaVersion)
		}
	}
	return &s, nil
}
