package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stacktune/stacktune/fleet"
)

// FleetFormats are the formats FleetAudit and FleetPlan render.
var FleetFormats = []string{Text, JSON, Markdown}

// FleetApplyFormats are the formats FleetApply renders.
var FleetApplyFormats = []string{Text, JSON}

// FleetCollectProgressLine is a fleet collection's live line for a
// terminal: hosts done of all, the last one named.
func FleetCollectProgressLine(done, total int, h fleet.Host) string {
	return fmt.Sprintf("%d/%d hosts (%s)", done, total, Clean(h.Name))
}

// FleetApplyProgressLine is a fleet apply's live line for a terminal: the
// host whose apply or rollback ended, and its state.
func FleetApplyProgressLine(h fleet.HostApply) string {
	return fmt.Sprintf("%s: %s", Clean(h.Name), h.State)
}

// FleetHosts lists a fleet collection host by host: answered (with its
// time) or failed (with the stage and the reason).
func FleetHosts(w io.Writer, s *fleet.Snapshot) error {
	ew := &errWriter{w: w}
	failed := len(s.Failed())
	ew.printf("# %d hosts, %d answered, %d failed, in %s (%d at a time)\n", len(s.Hosts), len(s.Hosts)-failed, failed,
		(time.Duration(s.ElapsedS * float64(time.Second))).Round(time.Millisecond), s.Parallel)
	var rows [][]string
	for _, h := range s.Hosts {
		if h.OK() {
			rows = append(rows, []string{"ok", h.Name, h.Role, fmt.Sprintf("%.1fs", h.ElapsedS)})
		} else {
			rows = append(rows, []string{"FAILED", h.Name, h.Role, fmt.Sprintf("%s: %s", h.Stage, h.Error)})
		}
	}
	sectionWriter{e: ew}.table(nil, "llll", rows)
	return ew.err
}

// FleetAudit renders a fleet's audit: per role, the findings with how many
// hosts each applies to, then the outlier hosts; the hosts that did not
// answer first.
func FleetAudit(w io.Writer, r *fleet.Report, format string) error {
	if r == nil {
		r = &fleet.Report{}
	}
	switch format {
	case JSON:
		return WriteJSON(w, r)
	case Text, Markdown, "":
	default:
		return CheckFormat(format, FleetFormats...)
	}
	md := format == Markdown
	ew := &errWriter{w: w}
	head := fmt.Sprintf("fleet audit: %d hosts, %d answered, %d failed (snapshot of %s)", r.Hosts, r.Answered, len(r.Failed), r.Taken.Format(time.RFC3339))
	if md {
		ew.printf("# Fleet audit\n\n%s\n", mdEscape(head))
	} else {
		ew.printf("# %s\n", head)
	}
	sw := sectionWriter{e: ew, md: md}
	if len(r.Failed) > 0 {
		var rows [][]string
		for _, h := range r.Failed {
			if md {
				rows = append(rows, []string{h.Name, h.Role, string(h.Stage), h.Error})
			} else {
				rows = append(rows, []string{h.Name, h.Role, fmt.Sprintf("%s: %s", h.Stage, h.Error)})
			}
		}
		if md {
			sw.heading("Hosts that did not answer")
			sw.table([]string{"host", "role", "stage", "why"}, "llll", rows)
		} else {
			ew.printf("\nHosts that did not answer:\n")
			sw.table(nil, "lll", rows)
		}
	}
	for _, role := range r.Roles {
		title := fmt.Sprintf("role %s: %s answered", role.Role, plural(len(role.Hosts), "host"))
		if role.Failed > 0 {
			title += fmt.Sprintf(", %d did not", role.Failed)
		}
		if md {
			ew.printf("\n## %s\n\n", mdEscape(title))
		} else {
			ew.printf("\n== %s\n", title)
		}
		if md {
			ew.printf("### Outliers\n\n")
		} else {
			ew.printf("\nOutliers (a setting that differs from the one most hosts share, a rate at least twice or at most half the role's median):\n")
		}
		switch {
		case role.NotCompared != "":
			line := "not compared: " + role.NotCompared
			if md {
				ew.printf("%s\n", mdEscape(line))
			} else {
				sw.list([]string{line})
			}
		case len(role.Outliers) == 0:
			if md {
				ew.printf("none: the hosts agree\n")
			} else {
				sw.list([]string{"none: the hosts agree"})
			}
		}
		if len(role.Outliers) > 0 {
			var rows [][]string
			for _, o := range role.Outliers {
				if md {
					rows = append(rows, []string{o.Host, o.Layer + " " + o.Metric, o.Value, o.Typical, o.Why})
				} else {
					rows = append(rows, []string{o.Host, fmt.Sprintf("%s %s = %s (role: %s; %s)", o.Layer, o.Metric, o.Value, o.Typical, o.Why)})
				}
			}
			if md {
				sw.table([]string{"host", "setting or rate", "value", "role", "why"}, "lllll", rows)
			} else {
				sw.table(nil, "ll", rows)
			}
		}
		if md {
			ew.printf("\n### Findings\n")
		} else {
			ew.printf("\nFindings (hosts it applies to / hosts that answered):\n")
		}
		if len(role.Findings) == 0 {
			if md {
				ew.printf("\nnone\n")
			} else {
				sw.list([]string{"none"})
			}
		}
		for i, f := range role.Findings {
			hosts := hostList(f.Hosts, f.Of)
			if md {
				ew.printf("\n#### %d. [%s] %s (`%s`, %s): %d of %d hosts\n\n- hosts: %s\n", i+1, f.Severity, mdEscape(f.Title), f.ID, f.Layer, len(f.Hosts), f.Of, mdEscape(hosts))
			} else {
				ew.printf("\n%d. [%s] %s  (%s, %s)  %d/%d hosts\n", i+1, strings.ToUpper(string(f.Severity)), f.Title, f.ID, f.Layer, len(f.Hosts), f.Of)
				sw.list([]string{"hosts: " + hosts})
			}
			lines := findingLines(&f.Finding)
			if len(lines) > 0 && len(f.Hosts) > 1 {
				lines[0] += " (on " + f.Hosts[0] + ")"
			}
			sw.list(lines)
		}
	}
	return ew.err
}

// hostList names the hosts, or says "all N" when every host is in it.
func hostList(hosts []string, of int) string {
	if len(hosts) == of && of > 3 {
		return fmt.Sprintf("all %d", of)
	}
	if len(hosts) > 12 {
		return strings.Join(hosts[:12], ", ") + fmt.Sprintf(" and %d more", len(hosts)-12)
	}
	return strings.Join(hosts, ", ")
}

// plural is "1 host", "2 hosts".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// FleetApply renders a rolling fleet apply: each batch's hosts with their
// state, where the roll stopped, and what a person must finish by hand.
func FleetApply(w io.Writer, r *fleet.ApplyReport, format string) error {
	if r == nil {
		r = &fleet.ApplyReport{}
	}
	switch format {
	case JSON:
		return WriteJSON(w, r)
	case Text, "":
	default:
		return CheckFormat(format, FleetApplyFormats...)
	}
	ew := &errWriter{w: w}
	counts := map[fleet.HostState]int{}
	for _, h := range r.Hosts {
		counts[h.State]++
	}
	var parts []string
	for _, st := range []fleet.HostState{fleet.HostApplied, fleet.HostDryRun, fleet.HostFailed, fleet.HostUnknown, fleet.HostRolledBack, fleet.HostRollbackFailed, fleet.HostNotStarted} {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	states := ""
	if len(parts) > 0 {
		states = ": " + strings.Join(parts, ", ")
	}
	ew.printf("# fleet apply %q: %d hosts in %d batches%s (%s)\n", r.Label, len(r.Hosts), len(r.Batches), states,
		(time.Duration(r.ElapsedS * float64(time.Second))).Round(time.Millisecond))
	if r.StoppedAt != "" {
		ew.printf("# stopped at %s: the batches after its own were not started and every host where the change set was in place was rolled back\n", r.StoppedAt)
	}
	// The hosts in runs of one batch (0: not started), each run a table
	// under its heading, each host's error, hand fix and output under it.
	sw := sectionWriter{e: ew}
	for start := 0; start < len(r.Hosts); {
		end := start + 1
		for end < len(r.Hosts) && (r.Hosts[end].Batch == r.Hosts[start].Batch || r.Hosts[start].Batch == 0 && r.Hosts[end].Batch == 0) {
			end++
		}
		hosts := r.Hosts[start:end]
		switch b := hosts[0].Batch; {
		case b == 0:
			ew.printf("\nnot started:\n")
		case b == 1:
			ew.printf("\ncanary %d:\n", b)
		default:
			ew.printf("\nbatch %d:\n", b)
		}
		var rows [][]string
		for _, h := range hosts {
			elapsed := ""
			if h.ElapsedS > 0 {
				elapsed = fmt.Sprintf("%.1fs", h.ElapsedS)
			}
			rows = append(rows, []string{h.Name, h.Role, string(h.State), elapsed})
		}
		sw.tableUnder(nil, "llll", rows, func(i int) []string {
			h := hosts[i]
			var out []string
			switch {
			case h.Error != "" && h.Stage != "":
				out = append(out, fmt.Sprintf("%s: %s", h.Stage, h.Error))
			case h.Error != "":
				out = append(out, h.Error)
			}
			if h.HandFix != "" {
				out = append(out, fmt.Sprintf("finish by hand on %s: %s", h.Name, h.HandFix))
			}
			if h.Output != "" && (h.State == fleet.HostDryRun || h.State == fleet.HostFailed) {
				for _, l := range strings.Split(h.Output, "\n") {
					out = append(out, "| "+l)
				}
			}
			return out
		})
		start = end
	}
	return ew.err
}

// FleetPlan renders a capacity plan made from a fleet: what was taken from
// the fleet snapshot, then the plan as Capacity renders it.
func FleetPlan(w io.Writer, p *fleet.Plan, format string) error {
	if p == nil {
		p = &fleet.Plan{}
	}
	switch format {
	case JSON:
		return WriteJSON(w, p)
	case Markdown:
		ew := &errWriter{w: w}
		ew.printf("From the fleet snapshot (role %s):\n\n", mdEscape(p.Role))
		for _, m := range p.Measured {
			ew.printf("- %s\n", mdEscape(m))
		}
		ew.printf("\n")
		if ew.err != nil {
			return ew.err
		}
	case Text, "":
		ew := &errWriter{w: w}
		ew.printf("# from the fleet snapshot (role %s):\n", p.Role)
		for _, m := range p.Measured {
			ew.printf("#   %s\n", m)
		}
		if ew.err != nil {
			return ew.err
		}
	}
	return Capacity(w, p.Report, format)
}
