package report

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/stacktune/stacktune/fixplan"
	"github.com/stacktune/stacktune/tune"
)

// fixQueryMax bounds the one query shown (an IN list of a long loop).
const fixQueryMax = 4000

// fixLines say what a fix left to the user is worth and how it stands:
// the endpoint, calls per request, the share of the request's time, and
// the rewrite's check (the query and the command are shown apart).
func fixLines(f *fixplan.Fix) []string {
	var out []string
	switch f.Kind {
	case fixplan.KindNPlusOne:
		var l string
		switch {
		case f.Endpoint == "":
			l = "the endpoint that runs it is not known (the counts are the run's, not a request's)"
		case f.CallsPerRequest <= 0:
			l = f.Endpoint + " runs it (its calls per request are not known)"
		case f.MsPerRequest <= 0:
			// An estimate counts calls, not each request's time.
			l = fmt.Sprintf("%s runs it %s times per request (its time per request is not measured)", f.Endpoint, trim1(f.CallsPerRequest))
		default:
			l = fmt.Sprintf("%s runs it %s times per request: %s ms per request", f.Endpoint, trim1(f.CallsPerRequest), trim3(f.MsPerRequest))
			if f.RequestShare > 0 {
				l += fmt.Sprintf(", %s of the request's time", Percent(f.RequestShare))
			}
		}
		out = append(out, l)
	case fixplan.KindHotFunction:
		out = append(out, fmt.Sprintf("%s spends %s of its app CPU in %s itself: %s ms per request, %s of the request's time",
			f.Endpoint, Percent(f.CPUShare), f.Function, trim3(f.MsPerRequest), Percent(f.RequestShare)))
	}
	if rw := f.Rewrite; rw != nil {
		out = append(out, rewriteCheckLine(rw))
	} else if f.Kind == fixplan.KindNPlusOne {
		out = append(out, "the one query: not built (no request's calls with their values were at hand)")
	}
	return out
}

// rewriteCheckLine says whether the one query returns what the loop did.
func rewriteCheckLine(rw *fixplan.Rewrite) string {
	req := ""
	if rw.Request != "" {
		req = " of request " + rw.Request
	}
	switch rw.Check {
	case fixplan.CheckSameRows:
		what := "the same rows"
		if rw.Count {
			what = "the same counts"
		}
		return fmt.Sprintf("checked: the one query (%s rows) gives %s as the loop's %d calls%s (%d distinct keys), run on the server in a read-only transaction",
			Count(rw.Rows), what, rw.Calls, req, rw.Distinct)
	case fixplan.CheckDifferentRows:
		return fmt.Sprintf("checked: the one query does NOT give what the loop returned: call %d of %d%s differs; rewrite it with care (ordering, LIMIT, collation)", rw.Differs, rw.Calls, req)
	}
	why := map[fixplan.Unchecked]string{
		fixplan.UncheckedNoStatements: "no request's calls with their values (the statements carry no request tags, or the slow log was not captured)",
		fixplan.UncheckedShape:        "the statement is not a SELECT whose WHERE is an AND/OR of column = value",
		fixplan.UncheckedNoDatabase:   "no connection to the server",
		fixplan.UncheckedError:        "running it failed",
		fixplan.UncheckedBound:        fmt.Sprintf("the loop's rows are past %d", fixplan.MaxRows),
	}[rw.Unchecked]
	if why == "" {
		why = string(rw.Unchecked)
	}
	if rw.Error != "" {
		why += ": " + rw.Error
	}
	return "unchecked: " + why
}

// fixQuery is the one query, bounded.
func fixQuery(f *fixplan.Fix) string {
	if f.Rewrite == nil || f.Rewrite.Query == "" {
		return ""
	}
	q := f.Rewrite.Query
	if len(q) > fixQueryMax {
		q = strings.ToValidUTF8(q[:fixQueryMax], "") + " …"
	}
	return q
}

// fixReason is the "why" of a finding left to the user, in words.
func fixReason(f tune.Finding) string {
	switch f.Reason {
	case tune.LeftAppCode:
		switch {
		case f.Fix != nil && f.Fix.Kind == fixplan.KindHotFunction:
			return "a change to the application's code: the function's own CPU, per request"
		case f.Change != "":
			return "a change to the application's code: " + f.Change
		}
		return "a change to the application's code"
	case tune.LeftAppSetting:
		return "a change to the application's code or settings, for its developers"
	case tune.LeftObservability:
		return "observability: worth having on a real server, but it costs some speed, which this loop measures (the diagnosis turns the slow log on for its own run)"
	case tune.LeftInformation:
		return "information only: no setting to change"
	case tune.LeftHostWide:
		return "host-wide (kernel settings, service units): changed only when allowed (stacktune tune --host-wide, stacktune apply --host-wide; the demo never changes this machine's settings)"
	case tune.LeftServiceConfig:
		return "memcached and Redis options live in the service's own configuration: set them there and restart it"
	case tune.LeftMount:
		return "a mount option: set it in /etc/fstab and remount (stacktune does not change mounts)"
	case tune.LeftNoStep:
		return "no step of this loop applies this kind of change"
	}
	return string(f.Reason)
}

func trim1(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") }

// fixesText writes the fixes of the findings left to the user (text).
func fixesText(w *bufio.Writer, r *tune.Result) {
	for _, f := range r.NotApplied {
		if f.Fix == nil {
			continue
		}
		fprintf(w, "\nTo fix %s: %s\n", f.ID, f.Title)
		for _, l := range fixLines(f.Fix) {
			fprintf(w, "  %s\n", l)
		}
		if q := fixQuery(f.Fix); q != "" {
			fprintf(w, "  one query: %s\n", q)
		}
		fprintf(w, "  prove it:  %s\n", f.Fix.Prove)
	}
}

// fixesMarkdown writes them in Markdown.
func fixesMarkdown(w *bufio.Writer, r *tune.Result) {
	fence := func(lang, s string) {
		fmt.Fprintf(w, "\n```%s\n%s\n```\n", lang, Clean(strings.ReplaceAll(s, "```", "` ` `")))
	}
	for _, f := range r.NotApplied {
		if f.Fix == nil {
			continue
		}
		fmt.Fprintf(w, "\n### To fix %s: %s\n\n", mdCodeSpan(f.ID), loopMarkdownText(f.Title))
		for _, l := range fixLines(f.Fix) {
			fmt.Fprintf(w, "- %s\n", loopMarkdownText(l))
		}
		if q := fixQuery(f.Fix); q != "" {
			fmt.Fprintf(w, "\nThe one query that replaces the loop:\n")
			fence("sql", q)
		}
		fmt.Fprintf(w, "\nThe command that proves the change:\n")
		fence("sh", f.Fix.Prove)
	}
}

// fixesHTML are the fixes as page sections.
func fixesHTML(r *tune.Result) []HTMLBlock {
	var out []HTMLBlock
	for _, f := range r.NotApplied {
		if f.Fix == nil {
			continue
		}
		s := HTMLSection{Title: "To fix " + f.ID + ": " + f.Title, Blocks: []HTMLBlock{HTMLList(fixLines(f.Fix)...)}}
		if q := fixQuery(f.Fix); q != "" {
			s.Blocks = append(s.Blocks, HTMLText("The one query that replaces the loop:"), HTMLCode(q))
		}
		s.Blocks = append(s.Blocks, HTMLText("The command that proves the change:"), HTMLCode(f.Fix.Prove))
		out = append(out, s)
	}
	return out
}
