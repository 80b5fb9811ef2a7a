// Package report renders stacktune's results for people and programs:
// aligned text for terminals, Markdown for tickets and pull requests, and
// JSON whose shape is documented with each result type (for example
// digest.Report). Renderers only format; they never compute figures, so the
// three formats always agree.
package report
