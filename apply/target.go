package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// State is a target's settings by name: the running values a Snapshot
// reads, or the values Activate should reach.
type State map[string]string

// Keys are the setting names, sorted.
func (s State) Keys() []string { return slices.Sorted(maps.Keys(s)) }

// File is one file a target needs written.
type File struct {
	Path string // absolute
	Data []byte
	Perm os.FileMode // 0 means 0644
	// FromBase says Data was computed from Base, the file's content when
	// the target read it (nil: the file did not exist). The transaction
	// refuses to write Data over anything else: a file edited by someone
	// between the reading and the writing would lose that edit.
	FromBase bool
	Base     []byte
}

// Target is one service whose settings change: the core every target
// has. What a target can do besides is an optional ability, found by type
// assertion: Files (FileWriter), Validate (Validator), HostWide
// (HostWider), Plan (Planner), Restore (Restorer), HandFix (HandFixer).
type Target interface {
	// Name identifies the target in the journal and in messages
	// ("mysql", "nginx", "ddl", "sysctl", "systemd nginx.service").
	Name() string
	// Wanted is the state Activate should reach with the new files.
	Wanted() State
	// Snapshot reads the running values of the Wanted keys.
	Snapshot(ctx context.Context) (State, error)
	// Activate makes the running service use the files on disk and reach
	// want (Wanted when applying, the snapshot when rolling back).
	Activate(ctx context.Context, want State) error
	// Verify reads the running values back and fails unless they are
	// want; a *MismatchError says which keys differ.
	Verify(ctx context.Context, want State) error
}

// FileWriter is a target with files to write, already rendered.
type FileWriter interface {
	Files() []File
}

// Explainer is a target that says where its files go and why (the
// server read that directory, found from its command line), for
// people: Run and DryRun report it beside the files.
type Explainer interface {
	Where() string
}

// whereOf is a target's Where, or "".
func whereOf(t Target) string {
	if e, ok := t.(Explainer); ok {
		return e.Where()
	}
	return ""
}

// Validator checks the files on disk before anything uses them (nginx
// -t, the server's own option check).
type Validator interface {
	Validate(ctx context.Context) error
}

// HostWider is a target that changes the whole host (kernel settings,
// service units) when HostWide says so; such a target runs only with
// Options.HostWide.
type HostWider interface {
	HostWide() bool
}

// Planner checks, before anything is touched, that each change can be
// carried out on the running service: it gets the running state and
// returns one Step per setting, with a Problem where the change cannot be
// made (a variable the server lacks, a value it would clamp, a restart
// that nobody can do) and Drift where the running value is neither the
// one the advice was made from nor the wanted one.
type Planner interface {
	Plan(ctx context.Context, running State) ([]Step, error)
}

// Restorer is a target whose way back differs from its way forward (a
// server that refuses a SET GLOBAL of its old value can still get it back
// from its restored files with a restart). A rollback calls Restore
// instead of Activate.
type Restorer interface {
	Restore(ctx context.Context, before State) error
}

// HandFixer says how a person puts one setting back by hand, for a
// rollback that could not ("SET GLOBAL max_connections = 151"); key ""
// asks for the target as a whole ("nginx -t && nginx -s reload").
type HandFixer interface {
	HandFix(key, want string) string
}

func filesOf(t Target) []File {
	if fw, ok := t.(FileWriter); ok {
		return fw.Files()
	}
	return nil
}

func isHostWide(t Target) bool {
	hw, ok := t.(HostWider)
	return ok && hw.HostWide()
}

func validate(ctx context.Context, t Target) error {
	if v, ok := t.(Validator); ok {
		return v.Validate(ctx)
	}
	return nil
}

func handFix(t Target, key, want string) string {
	if h, ok := t.(HandFixer); ok {
		return h.HandFix(key, want)
	}
	return ""
}

// How is how a step takes effect, as a stable code (docs/json.md);
// report says it in words.
type How string

// The ways a step takes effect.
const (
	HowSet     How = "set"      // at once (SET GLOBAL, a sysctl, a DDL statement)
	HowRestart How = "restart"  // when the service restarts
	HowReload  How = "reload"   // when the service reloads
	HowNone    How = "in_force" // the wanted value is in force already
)

// Codes lists the ways.
func (How) Codes() []string {
	return []string{string(HowSet), string(HowRestart), string(HowReload), string(HowNone)}
}

// Step is one setting of a plan.
type Step struct {
	Target string `json:"target"`
	Key    string `json:"key"`
	// From is the value the change was advised from ("" when not
	// known), Running the value now, To the wanted one.
	From    string `json:"from,omitempty"`
	Running string `json:"running"`
	To      string `json:"to"`
	// Expect is what the service will show after the change when it
	// differs from To (a size the server rounds to its block size).
	Expect string `json:"expect,omitempty"`
	// How is how it takes effect (HowSet, HowRestart, HowReload,
	// HowNone), with the statement or command where there is one.
	How     How    `json:"how"`
	Command string `json:"command,omitempty"`
	Note    string `json:"note,omitempty"`
	// Problem says why the change cannot be made as planned; Drift marks
	// a running value that moved since the advice (also a Problem,
	// unless Options.ForceDrift).
	Problem string `json:"problem,omitempty"`
	Drift   bool   `json:"drift,omitempty"`
}

// drift fills a step's drift: the running value is neither the advised
// From nor the wanted To (eq compares values of this kind).
func (s *Step) drift(eq func(a, b string) bool) {
	if s.From == "" || eq(s.Running, s.From) || eq(s.Running, s.To) {
		return
	}
	s.Drift = true
	s.Problem = fmt.Sprintf("%s: advised from %s, running %s; re-run the audit, or --force-drift", s.Key, orNone(s.From), orNone(s.Running))
}

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// Mismatch is one setting a read-back found wrong.
type Mismatch struct {
	Key, Got, Want string
}

// MismatchError is Verify's error when running values differ from the
// wanted ones.
type MismatchError struct {
	What       string // "the server", "sysctl"
	Mismatches []Mismatch
}

func (e *MismatchError) Error() string {
	var bad []string
	for _, m := range e.Mismatches {
		bad = append(bad, fmt.Sprintf("%s is %q, wanted %q", m.Key, m.Got, m.Want))
	}
	return fmt.Sprintf("%s does not run with the wanted settings: %s", e.What, strings.Join(bad, "; "))
}

// compare fails with a *MismatchError for the keys of want whose got
// value differs.
func compare(what string, want, got State, eq func(key, want, got string) bool) error {
	e := &MismatchError{What: what}
	for _, k := range want.Keys() {
		if !eq(k, want[k], got[k]) {
			e.Mismatches = append(e.Mismatches, Mismatch{Key: k, Got: got[k], Want: want[k]})
		}
	}
	if len(e.Mismatches) > 0 {
		return e
	}
	return nil
}

// Leftover is what a rollback could not put back, with the command that
// does it by hand.
type Leftover struct {
	Target string `json:"target"`
	// Key is the setting, or the file for a file that could not be
	// restored; "" for the target as a whole.
	Key  string `json:"key,omitempty"`
	Now  string `json:"now,omitempty"`
	Want string `json:"want,omitempty"`
	// Fix is the command (or action) that puts it back by hand.
	Fix string `json:"fix,omitempty"`
	// Why is what failed.
	Why string `json:"why,omitempty"`
}

func (l Leftover) String() string {
	var b strings.Builder
	b.WriteString(l.Target)
	if l.Key != "" {
		b.WriteString(" " + l.Key)
	}
	if l.Now != "" || l.Want != "" {
		fmt.Fprintf(&b, " is %s, was %s", orNone(l.Now), orNone(l.Want))
	}
	if l.Why != "" {
		b.WriteString(" (" + l.Why + ")")
	}
	if l.Fix != "" {
		b.WriteString(": " + l.Fix)
	}
	return b.String()
}

// RefusedError is Run's error when the plan found changes that cannot be
// carried out: nothing was changed.
type RefusedError struct {
	Problems []string
}

func (e *RefusedError) Error() string {
	return "apply: refused, nothing was changed: " + strings.Join(e.Problems, "; ")
}

// ErrRefused matches a *RefusedError with errors.Is.
var ErrRefused = errors.New("apply: refused")

func (e *RefusedError) Is(target error) bool { return target == ErrRefused }
