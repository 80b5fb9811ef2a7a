package fingerprint

// Merged returns the merged view of a fingerprint, for grouping the
// statements an application runs: pt-query-digest keeps classes apart that
// differ only in spacing, which one application often writes both ways
// ("WHERE id = ?" in one file, "WHERE id=?" in another), and a statement
// tagged with a trailing comment (sqlcommenter, marginalia: "SELECT ...
// /*route='/x'*/") fingerprints with a trailing space that the untagged
// statement lacks. Merged removes exactly those differences from a
// fingerprint (the output of Fingerprint, not a raw query):
//
//   - whitespace next to one of = < > ! , ( ) + - * / % is removed:
//     "where id = ?" and "where id=?" are both "where id=?",
//     "count( * )" is "count(*)";
//   - trailing whitespace and semicolons are removed.
//
// Text between backquotes (a quoted identifier) is kept as it is.
// Merged(Merged(fp)) == Merged(fp). Digest classes keep pt-query-digest's
// IDs; Merged is only the key under which per-request attribution counts
// them (see MergedID).
func Merged(fp string) string {
	out := make([]byte, 0, len(fp))
	pendingSpace := false
	inQuote := false
	for i := 0; i < len(fp); i++ {
		c := fp[i]
		if inQuote {
			out = append(out, c)
			if c == '`' {
				inQuote = false
			}
			continue
		}
		if isSpace(c) {
			pendingSpace = true
			continue
		}
		if pendingSpace {
			if len(out) > 0 && !mergeTight(out[len(out)-1]) && !mergeTight(c) {
				out = append(out, ' ')
			}
			pendingSpace = false
		}
		out = append(out, c)
		if c == '`' {
			inQuote = true
		}
	}
	for !inQuote && len(out) > 0 && (out[len(out)-1] == ';' || out[len(out)-1] == ' ') {
		out = out[:len(out)-1]
	}
	return string(out)
}

// MergedID is the ID of Merged(fp), computed as ID is: the key of a merged
// class. It equals ID(fp) when fp has nothing to merge.
func MergedID(fp string) string { return ID(Merged(fp)) }

// mergeTight reports whether c is punctuation that whitespace next to it
// does not change.
func mergeTight(c byte) bool {
	switch c {
	case '=', '<', '>', '!', ',', '(', ')', '+', '-', '*', '/', '%':
		return true
	}
	return false
}
