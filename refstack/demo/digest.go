package demo

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/pfs"
	"github.com/stacktune/stacktune/refstack/workload"
	"github.com/stacktune/stacktune/report"
	"github.com/stacktune/stacktune/sandbox"
)

// DigestOptions configures DigestDemo.
type DigestOptions struct {
	Duration    time.Duration // workload run time; default 5 s
	Connections int           // workload connections; default 4
	Limit       int           // classes per report; default 5
	Format      string        // one of report.DigestFormats; HTML is one page (DigestHTMLPage)
	Progress    io.Writer     // progress lines; nil for none
}

// DigestResult holds the two reports of the demo.
type DigestResult struct {
	Server            string          `json:"server"`
	Workload          workload.Result `json:"workload"`
	SlowLog           *digest.Report  `json:"slowlog"`
	PerformanceSchema *digest.Report  `json:"performance_schema"`
}

// DigestDemo starts a throwaway MariaDB with the slow log at
// long_query_time=0 and performance_schema on, loads and runs the built-in
// workload, and digests both the slow log and performance_schema over the
// run. It writes the two reports to w in o.Format.
func DigestDemo(ctx context.Context, w io.Writer, o DigestOptions) (*DigestResult, error) {
	if o.Duration <= 0 {
		o.Duration = 5 * time.Second
	}
	if o.Limit <= 0 {
		o.Limit = 5
	}
	if o.Format == "" {
		o.Format = report.Text
	}
	if err := report.CheckFormat(o.Format, report.DigestFormats...); err != nil {
		return nil, err
	}
	say := func(format string, a ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "stacktune demo: "+format+"\n", a...)
		}
	}
	say("starting a throwaway MariaDB (slow log at long_query_time=0, performance_schema on)")
	srv, err := sandbox.StartMariaDB(ctx, sandbox.MariaDBOptions{Options: map[string]string{
		"performance_schema":      "ON",
		"slow_query_log":          "OFF", // switched on after loading, so the load is not digested
		"long_query_time":         "0",
		"log_slow_verbosity":      "query_plan",
		"innodb_buffer_pool_size": "128M",
	}})
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	res := &DigestResult{Server: srv.Version()}
	// Client-side placeholders, as PHP and most ORMs send queries: one
	// round trip per query, and the slow log shows the real values.
	db, err := dbconn.Open(ctx, srv.DSN("")+"?interpolateParams=true", 0)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(max(o.Connections, 4) + 2)
	say("loading the built-in social-network data set")
	if err := workload.Setup(ctx, db, "demo", workload.DefaultScale); err != nil {
		return nil, err
	}
	before, err := pfs.Take(ctx, db)
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, "SET GLOBAL slow_query_log = ON"); err != nil {
		return nil, fmt.Errorf("switching the slow log on: %w", err)
	}
	// MariaDB's slow_query_log has a session scope too: drop the pooled
	// connections so the workload's sessions start with the log on.
	db.SetMaxIdleConns(0)
	db.SetMaxIdleConns(max(o.Connections, 4) + 2)
	say("running the workload for %s on %d connections", o.Duration, max(o.Connections, 4))
	res.Workload, err = workload.Run(ctx, db, workload.Options{Database: "demo", Connections: o.Connections, Duration: o.Duration})
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, "SET GLOBAL slow_query_log = OFF"); err != nil {
		return nil, fmt.Errorf("switching the slow log off: %w", err)
	}
	after, err := pfs.Take(ctx, db)
	if err != nil {
		return nil, err
	}
	say("workload done: %d pages, %d queries, %d errors in %s", res.Workload.Pages, res.Workload.Queries, res.Workload.Errors, res.Workload.Elapsed.Round(time.Millisecond))
	if res.Workload.Errors > 0 {
		say("first workload error: %s", res.Workload.FirstError)
	}

	ropt := digest.ReportOptions{Limit: o.Limit}
	if res.SlowLog, err = digestSlowLog(ctx, srv.SlowLogPath(), ropt); err != nil {
		return nil, err
	}
	if res.PerformanceSchema, err = pfs.Diff(before, after, pfs.Options{Report: ropt}); err != nil {
		return nil, err
	}
	switch o.Format {
	case report.JSON:
		return res, report.WriteJSON(w, res)
	case report.HTML:
		return res, report.WriteHTMLPage(w, DigestHTMLPage(res))
	}
	for _, part := range digestParts(res) {
		if o.Format == report.Markdown {
			fmt.Fprintf(w, "\n# %s\n\n", part.title)
		} else {
			fmt.Fprintf(w, "\n==== %s ====\n\n", part.title)
		}
		if err := report.Digest(w, part.rep, o.Format); err != nil {
			return res, err
		}
	}
	return res, nil
}

// digestPart is one of the demo's two digests, with its title and its
// anchor on the HTML page.
type digestPart struct {
	title, id string
	rep       *digest.Report
}

func digestParts(res *DigestResult) []digestPart {
	return []digestPart{
		{"Digest of the slow log", "slowlog", res.SlowLog},
		{"Digest of performance_schema over the same run", "pfs", res.PerformanceSchema},
	}
}

// DigestHTMLPage is the digest demo's result as one HTML page (what
// DigestDemo writes for the "html" format): the server and the workload in
// the summary, then a section for each digest (report.DigestHTMLPage:
// its summary, chart, classes and their details), the slow log's first.
func DigestHTMLPage(res *DigestResult) *report.HTMLPage {
	if res == nil {
		res = &DigestResult{}
	}
	wl := res.Workload
	p := &report.HTMLPage{
		Title: "stacktune demo: query digests",
		Summary: []string{
			"server: " + res.Server + " (throwaway, slow log at long_query_time=0, performance_schema on)",
			fmt.Sprintf("workload: %d pages, %d queries, %d errors in %s",
				wl.Pages, wl.Queries, wl.Errors, wl.Elapsed.Round(time.Millisecond)),
		},
	}
	if wl.FirstError != "" {
		p.Summary = append(p.Summary, "first workload error: "+wl.FirstError)
	}
	for _, part := range digestParts(res) {
		p.Sections = append(p.Sections, report.DigestHTMLPage(part.rep).Section(part.title, part.id))
	}
	return p
}

// digestSlowLog digests one slow log file (the demos' servers' own).
func digestSlowLog(ctx context.Context, path string, ropt digest.ReportOptions) (*digest.Report, error) {
	in, closer, err := input.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return digest.ReportOf(ctx, []input.Input{in}, []string{path}, digest.Options{}, ropt)
}
