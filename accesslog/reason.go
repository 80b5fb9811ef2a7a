package accesslog

import "github.com/stacktune/stacktune/internal/skip"

// Reasons a line is rejected: the second result of Parser.Parse. Their
// codes are stable, fit to be counted; report says them in words.
var (
	ReasonEmpty        = skip.Define("empty_line", "empty line")
	ReasonBinary       = skip.Define("binary_line", "binary junk")
	ReasonTruncated    = skip.Define("truncated_line", "truncated line")
	ReasonMismatch     = skip.Define("format_mismatch", "line does not match format")
	ReasonRequest      = skip.Define("bad_request_line", "malformed request line")
	ReasonStatus       = skip.Define("bad_status", "bad status")
	ReasonTime         = skip.Define("bad_time", "bad time")
	ReasonBytes        = skip.Define("bad_bytes", "bad bytes")
	ReasonRequestTime  = skip.Define("bad_request_time", "bad request time")
	ReasonUpstreamTime = skip.Define("bad_upstream_time", "bad upstream time")
	ReasonReqLength    = skip.Define("bad_request_length", "bad request length")
	ReasonNotJSON      = skip.Define("not_json", "not JSON")
	ReasonNotLTSV      = skip.Define("not_ltsv", "not LTSV")
	ReasonMissingField = skip.Define("missing_field", "missing field")
)

// Reasons lists every reason a parser of this package returns.
var Reasons = []skip.Reason{
	ReasonEmpty, ReasonBinary, ReasonTruncated, ReasonMismatch, ReasonRequest, ReasonStatus,
	ReasonTime, ReasonBytes, ReasonRequestTime, ReasonUpstreamTime, ReasonReqLength, ReasonNotJSON, ReasonNotLTSV,
	ReasonMissingField,
}

// Fields returns the optional fields p's format can fill: the Field bits a
// Record may have after p.Parse. For nginx and Apache formats this is known
// from the format (HasRequestTime is unset when the format logs no request
// time); LTSV and JSON lines carry their own labels, so every bit is
// possible.
func Fields(p Parser) Field {
	if f, ok := p.(interface{ fields() Field }); ok {
		return f.fields()
	}
	return HasTime | HasStatus | HasBytes | HasRequestTime | HasUpstreamTime | HasRequestLength
}
