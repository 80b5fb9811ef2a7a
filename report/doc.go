// Package report renders stacktune's results for people and programs:
// aligned text for terminals, Markdown for tickets and pull requests, and
// JSON whose shape is documented with each result type (for example
// digest.Report). Renderers only format; they never compute figures, so the
// three formats always agree. Every renderer lives here: the libraries
// produce data, and the CLI parses flags, calls one library function and
// hands its result to one renderer.
//
// Strings that come from logs and servers (queries, databases, users,
// hosts, URL paths, methods, error messages) are never printed raw in text,
// Markdown or CSV: every renderer prints them through one cleaning step that
// shows control characters, C1 controls, bidirectional controls and
// invalid UTF-8 as \xNN escapes (see Clean), so a log cannot drive the
// reader's terminal or forge lines of the report. JSON keeps the values,
// with those characters as \u escapes (see WriteJSON).
//
// # Escaping
//
// Each markup format has one escaper, in escape.go, used by every renderer
// of that format: mdEscape for text in Markdown (paragraphs, list items,
// headings and table cells alike: backslash, '*', '_', '~', '`', '[' and
// '|' get a backslash, '<' is "&lt;"), and htmlEscape for text in HTML
// (html/template's escaping). mdCode and mdCodeSpan only keep a code
// span whole (in a table cell, and elsewhere). The escaped text is
// cleaned once where it is printed.
//
// # Score transitions (package history)
//
// Transitions writes the steps of history.Transitions as an aligned text
// table (East Asian wide characters count two columns, so Japanese labels
// line up), a Markdown table, an HTML page (TransitionsHTMLPage: the
// medians as an inline SVG chart, the steps and every run), or JSON ({"steps": [...]}, see
// history.Step.MarshalJSON; durations in seconds as elsewhere in
// stacktune's JSON). Labels show as "(no label)" when empty and get
// " (again)" when measured again; Score formats a score.
//
// TransitionsChart draws one chart in three kinds (ChartKind picks one
// from a file name): per step, on the x axis as "N. label", a bar up to
// the median, every run's score as a point beside it (a red cross for a
// run that did not pass), and a dashed line at the first step's median.
// SVG and PNG come from gonum/plot with its embedded Liberation fonts,
// 960x540 pixels (80 per step when wider, up to 4000); long labels are cut
// at 32 characters and rotated. Liberation has no CJK glyphs, so PNG
// labels show '?' for them (SVG keeps the text and the viewer's fonts draw
// it; HTML too).
//
// The HTML chart comes from go-echarts: one self-contained page with
// tooltips that works offline. go-echarts can only point <script src> at
// an assets host (a CDN by default), so the page instead inlines ECharts
// 5.6.0 (dist/echarts.min.js from the npm package, Apache-2.0, about 1 MB;
// embedded gzipped, see assets/README.md) and loads nothing from anywhere.
// Labels are written into the page's script as JSON that go-echarts does
// not escape, so "</" and "<!--" in a label get an invisible zero-width
// space after the '<'.
//
// # The tuning loop (package tune; the demo is tune on its own stack)
//
// Loop renders the loop's result (tune.Result, data only): the transition table, the findings and changes behind each step
// and what was not applied, as text, Markdown (linking the SVG of
// LoopChart), HTML (a page on the skeleton of html.go with its own inline
// chart of the medians)
// or JSON ({"steps": [{"label", "scores", "median", "x_baseline",
// "findings", ...}], "not_applied": [...]}). LoopReportFormat picks the
// report file's format from its extension.
//
// # Apply transactions (package apply)
//
// ApplyResult writes what apply.Run or apply.Rollback did, ApplyDryRun
// what apply.DryRun found (each file's diff, shown as a block, and every
// setting's plan), and ApplyTransactions the journal's list
// (apply.History); as text, or JSON of the result as it is.
package report
