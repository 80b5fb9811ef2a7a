// Package report renders stacktune's results for people and programs:
// aligned text for terminals, Markdown for tickets and pull requests, and
// JSON whose shape is documented with each result type (for example
// digest.Report). Renderers only format; they never compute figures, so the
// three formats always agree.
//
// Strings that come from logs and servers (queries, databases, users,
// hosts, URL paths, methods, error messages) are never printed raw in text,
// Markdown or CSV: every renderer prints them through one cleaning step that
// shows control characters, C1 controls, bidirectional controls and
// invalid UTF-8 as \xNN escapes (see Clean), so a log cannot drive the
// reader's terminal or forge lines of the report. JSON keeps the values,
// with those characters as \u escapes (see WriteJSON).
package report
