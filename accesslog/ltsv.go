package accesslog

import (
	"bytes"

	"github.com/stacktune/stacktune/internal/skip"
)

// NewLTSV returns a Parser for LTSV (labeled tab-separated values, ltsv.org):
// fields "label:value" separated by tabs. The labels it reads are those of
// ltsv.org and alp, with common aliases; see the package documentation.
func NewLTSV() Parser { return &ltsvParser{} }

type ltsvParser struct {
	labeledParser
}

func (p *ltsvParser) Format() string { return "ltsv" }

func (p *ltsvParser) Clone() Parser { return &ltsvParser{} }

// Parse implements Parser.
func (p *ltsvParser) Parse(line []byte, r *Record) (bool, skip.Reason) {
	*r = Record{Offset: r.Offset}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) == 0 {
		return false, ReasonEmpty
	}
	if bytes.IndexByte(line, 0) >= 0 {
		return false, ReasonBinary
	}
	var f fieldSet
	labels := 0
	for len(line) > 0 {
		field := line
		if t := bytes.IndexByte(line, '\t'); t >= 0 {
			field, line = line[:t], line[t+1:]
		} else {
			line = nil
		}
		c := bytes.IndexByte(field, ':')
		if c <= 0 || !isLabel(field[:c]) {
			continue
		}
		labels++
		f.put(field[:c], field[c+1:], vString, false)
	}
	if labels == 0 {
		return false, ReasonNotLTSV
	}
	p.buf = p.buf[:0]
	if reason := p.record(&f, r); !reason.IsZero() {
		return false, reason
	}
	return true, skip.Reason{}
}

// isLabel reports whether b is an LTSV label: ltsv.org allows
// [0-9A-Za-z_.-]; '@' is accepted too (@timestamp).
func isLabel(b []byte) bool {
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '@') {
			return false
		}
	}
	return true
}
