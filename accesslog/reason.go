package accesslog

// Reasons a line is rejected: the second result of Parser.Parse. They are
// stable strings, fit to be counted and shown in reports.
const (
	ReasonEmpty        = "empty line"
	ReasonBinary       = "binary junk"
	ReasonTruncated    = "truncated line"
	ReasonMismatch     = "line does not match format"
	ReasonRequest      = "malformed request line"
	ReasonStatus       = "bad status"
	ReasonTime         = "bad time"
	ReasonBytes        = "bad bytes"
	ReasonRequestTime  = "bad request time"
	ReasonUpstreamTime = "bad upstream time"
	ReasonNotJSON      = "not JSON"
	ReasonNotLTSV      = "not LTSV"
	ReasonMissingField = "missing field"
)

// Reasons lists every reason a parser of this package returns.
var Reasons = []string{
	ReasonEmpty, ReasonBinary, ReasonTruncated, ReasonMismatch, ReasonRequest, ReasonStatus,
	ReasonTime, ReasonBytes, ReasonRequestTime, ReasonUpstreamTime, ReasonNotJSON, ReasonNotLTSV,
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
	return HasTime | HasStatus | HasBytes | HasRequestTime | HasUpstreamTime
}
