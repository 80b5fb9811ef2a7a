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

// FleetHosts lists a fleet collection host by host: answered (with its
// time) or failed (with the stage and the reason).
func FleetHosts(w io.Writer, s *fleet.Snapshot) error {
	ew := &errWriter{w: w}
	failed := len(s.Failed())
	ew.printf("# %d hosts, %d answered, %d failed, in %s (%d at a time)\n", len(s.Hosts), len(s.Hosts)-failed, failed,
		(time.Duration(s.ElapsedS * float64(time.Second))).Round(time.Millisecond), s.Parallel)
	for _, h := range s.Hosts {
		if h.OK() {
			ew.printf("ok      %-20s %-8s %s\n", h.Name, h.Role, fmt.Sprintf("%.1fs", h.ElapsedS))
			continue
		}
		ew.printf("FAILED  %-20s %-8s %s: %s\n", h.Name, h.Role, h.Stage, h.Error)
	}
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
	if len(r.Failed) > 0 {
		if md {
			ew.printf("\n## Hosts that did not answer\n\n| host | role | stage | why |\n|---|---|---|---|\n")
		} else {
			ew.printf("\nHosts that did not answer:\n")
		}
		for _, h := range r.Failed {
			if md {
				ew.printf("| %s | %s | %s | %s |\n", mdEscape(h.Name), mdEscape(h.Role), mdEscape(string(h.Stage)), mdEscape(h.Error))
			} else {
				ew.printf("   %-20s %-8s %s: %s\n", h.Name, h.Role, h.Stage, h.Error)
			}
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
				ew.printf("   %s\n", line)
			}
		case len(role.Outliers) == 0:
			if md {
				ew.printf("none: the hosts agree\n")
			} else {
				ew.printf("   none: the hosts agree\n")
			}
		}
		if md && len(role.Outliers) > 0 {
			ew.printf("| host | %s | value | role | why |\n|---|---|---|---|---|\n", "setting or rate")
		}
		for _, o := range role.Outliers {
			if md {
				ew.printf("| %s | %s %s | %s | %s | %s |\n", mdEscape(o.Host), mdEscape(o.Layer), mdEscape(o.Metric), mdEscape(o.Value), mdEscape(o.Typical), mdEscape(o.Why))
			} else {
				ew.printf("   %-20s %s %s = %s (role: %s; %s)\n", o.Host, o.Layer, o.Metric, o.Value, o.Typical, o.Why)
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
				ew.printf("   none\n")
			}
		}
		for i, f := range role.Findings {
			hosts := hostList(f.Hosts, f.Of)
			if md {
				ew.printf("\n#### %d. [%s] %s (`%s`, %s): %d of %d hosts\n\n- hosts: %s\n", i+1, f.Severity, mdEscape(f.Title), f.ID, f.Layer, len(f.Hosts), f.Of, mdEscape(hosts))
			} else {
				ew.printf("\n%d. [%s] %s  (%s, %s)  %d/%d hosts\n   hosts: %s\n", i+1, strings.ToUpper(string(f.Severity)), f.Title, f.ID, f.Layer, len(f.Hosts), f.Of, hosts)
			}
			lines := findingLines(&f.Finding)
			for j, l := range lines {
				if j == 0 && len(f.Hosts) > 1 {
					l += " (on " + f.Hosts[0] + ")"
				}
				if md {
					ew.printf("- %s\n", mdEscape(l))
				} else {
					ew.printf("   %s\n", l)
				}
			}
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
	counts := map[string]int{}
	for _, h := range r.Hosts {
		counts[h.State]++
	}
	var parts []string
	for _, st := range []string{fleet.HostApplied, fleet.HostDryRun, fleet.HostFailed, fleet.HostUnknown, fleet.HostRolledBack, fleet.HostRollbackFailed, fleet.HostNotStarted} {
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
	batch := 0
	for _, h := range r.Hosts {
		if h.Batch != batch && h.Batch != 0 {
			batch = h.Batch
			what := "batch"
			if batch == 1 {
				what = "canary"
			}
			ew.printf("\n%s %d:\n", what, batch)
		} else if h.Batch == 0 && batch != -1 {
			batch = -1
			ew.printf("\nnot started:\n")
		}
		line := fmt.Sprintf("   %-16s %-8s %-16s", h.Name, h.Role, h.State)
		if h.ElapsedS > 0 {
			line += fmt.Sprintf(" %.1fs", h.ElapsedS)
		}
		ew.printf("%s\n", strings.TrimRight(line, " "))
		switch {
		case h.Error != "" && h.Stage != "":
			ew.printf("      %s: %s\n", h.Stage, h.Error)
		case h.Error != "":
			ew.printf("      %s\n", h.Error)
		}
		if h.HandFix != "" {
			ew.printf("      finish by hand on %s: %s\n", h.Name, h.HandFix)
		}
		if h.Output != "" && (h.State == fleet.HostDryRun || h.State == fleet.HostFailed) {
			for _, l := range strings.Split(h.Output, "\n") {
				ew.printf("      | %s\n", l)
			}
		}
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
