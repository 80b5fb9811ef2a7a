package accesslog

import (
	"time"

	"github.com/stacktune/stacktune/internal/skip"
)

// Field is a bit set naming the optional fields a Record has.
type Field uint16

// Optional fields of a Record.
const (
	HasTime Field = 1 << iota
	HasStatus
	HasBytes
	HasRequestTime   // $request_time, %D or %T
	HasUpstreamTime  // $upstream_response_time
	HasRequestLength // $request_length or %I
)

// Record is one request from an access log. Its byte-slice fields alias the
// parser's input: they are valid only during the callback that receives the
// record; copy what must outlive it.
type Record struct {
	Time   time.Time
	Method []byte
	// URI is the request target as logged: path and query string.
	URI    []byte
	Status int
	// BodyBytes is $body_bytes_sent (or %b/%B, or $bytes_sent when that is
	// all the format has).
	BodyBytes int64
	// RequestTime and UpstreamTime are seconds. UpstreamTime is the sum
	// when nginx logged several upstreams ("0.010, 0.020") and excludes
	// "-".
	RequestTime, UpstreamTime float64
	// RequestLength is $request_length (Apache's %I): the bytes nginx
	// received for the request, its line, headers and body.
	RequestLength int64
	// Client is the client's address ($remote_addr, %h) and UserAgent its
	// User-Agent header ($http_user_agent, %{User-Agent}i), as logged;
	// empty when the format has none or logged "-".
	Client, UserAgent []byte
	Has               Field
	// Offset is the byte offset of the line in its input.
	Offset int64
}

// Parser turns one log line (without its line end) into a Record. It
// returns false and a short reason when the line cannot be used; reasons are
// stable strings fit for counting (for example "malformed request line").
// A Parser is not safe for concurrent use; Clone gives an independent one.
type Parser interface {
	Parse(line []byte, r *Record) (ok bool, reason skip.Reason)
	// Format names the format, for reports ("nginx combined", "ltsv", ...).
	Format() string
	// Clone returns a parser with the same format and fresh state.
	Clone() Parser
}
