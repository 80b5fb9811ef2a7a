// Package fingerprint turns a SQL statement into its class: the normalised
// "fingerprint" and the 16-hex-digit query ID, following the rules that
// pt-query-digest documents, so that a class here and a class in a
// pt-query-digest report are the same class with the same ID.
//
// The fingerprinter is a single-pass byte scanner (no regular expressions):
// it is on the hot path of every slow-log event.
package fingerprint
