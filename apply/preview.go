package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// Preview is one file a transaction would write, for a dry run.
type Preview struct {
	Target  string `json:"target"`
	Path    string `json:"path"`
	Exists  bool   `json:"exists"`
	Old     []byte `json:"-"`
	New     []byte `json:"-"`
	Diff    string `json:"diff"`
	Skipped bool   `json:"skipped,omitempty"` // host-wide, not run
	// Where says why the file goes there (an Explainer's).
	Where string `json:"where,omitempty"`
}

// Plan is what a transaction would do, for a dry run: every file with
// its diff, every setting's step, and the problems that would refuse it.
type Plan struct {
	Files    []Preview `json:"files"`
	Steps    []Step    `json:"steps"`
	Problems []string  `json:"problems,omitempty"`
	// Unread says, per target, why its running values could not be read.
	Unread map[string]string `json:"unread,omitempty"`
}

// DryRun returns what Run would do with targets: the files with a
// unified diff of each against the file on disk, and the plan (each
// setting checked against the running service, as Run checks it before
// anything changes). It changes nothing.
func DryRun(ctx context.Context, targets []Target, opt Options) (*Plan, error) {
	if err := checkFiles(targets); err != nil {
		return nil, err
	}
	out := &Plan{Files: []Preview{}, Steps: []Step{}}
	var run []Target
	for _, t := range targets {
		if !isHostWide(t) || opt.HostWide {
			run = append(run, t)
		}
		for _, f := range filesOf(t) {
			p := Preview{Target: t.Name(), Path: f.Path, New: f.Data, Skipped: isHostWide(t) && !opt.HostWide, Where: whereOf(t)}
			old, err := readTarget(f.Path)
			switch {
			case err == nil:
				p.Exists, p.Old = true, old
			case !errors.Is(err, fs.ErrNotExist):
				return nil, err
			}
			p.Diff = UnifiedDiff(f.Path, p.Old, p.New, p.Exists)
			out.Files = append(out.Files, p)
		}
	}
	j := &journal{}
	var planned []Target
	for _, t := range run {
		before, err := t.Snapshot(ctx)
		if err != nil {
			if out.Unread == nil {
				out.Unread = map[string]string{}
			}
			out.Unread[t.Name()] = err.Error()
			continue
		}
		j.Targets = append(j.Targets, journalTarget{Name: t.Name(), Before: before})
		planned = append(planned, t)
	}
	steps, problems, err := plan(ctx, planned, j, opt, nil)
	if err != nil {
		return out, err
	}
	out.Steps, out.Problems = append(out.Steps, steps...), problems
	return out, nil
}

// UnifiedDiff renders the changes from old to new as a unified diff with
// three lines of context ("" when equal). A file that does not exist is
// diffed from /dev/null.
func UnifiedDiff(path string, old, new []byte, exists bool) string {
	if exists && bytes.Equal(old, new) {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	from := path
	if !exists {
		from = "/dev/null"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, path)
	const ctx = 3
	// Group the ops into hunks.
	i := 0
	for i < len(ops) {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		aStart, bStart := ops[start].a, ops[start].b
		var na, nb int
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aStart, na), hunkRange(bStart, nb))
		for _, o := range ops[start:end] {
			sb.WriteByte(o.kind)
			sb.WriteString(o.line)
			sb.WriteByte('\n')
		}
		i = end
	}
	return sb.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
	a, b int // line index (0-based) in old and new where the op sits
}

// diffLines is a longest-common-subsequence diff; files too large for it
// are shown as all removed then all added.
func diffLines(a, b []string) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > 4_000_000 {
		for i, l := range a {
			ops = append(ops, diffOp{'-', l, i, 0})
		}
		for j, l := range b {
			ops = append(ops, diffOp{'+', l, len(a), j})
		}
		return ops
	}
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		}
	}
	return ops
}
