package refapp

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/http"
	"sort"
	"strings"
)

// Config.SQLTags makes the app tag every statement it sends the way an
// app instrumented with sqlcommenter (OpenTelemetry's) does: a comment at
// its end with the request's route, action, framework, driver and W3C
// traceparent, keys sorted, values URL-encoded and quoted:
//
//	SELECT ... WHERE id = ? /*action='profile',db_driver='go-sql-driver%2Fmysql',framework='net%2Fhttp',route='GET%20%2Fprofile%2F%7Baccount_name%7D',traceparent='00-<trace>-<span>-01'*/
//
// The trace is the one of the request's traceparent header when it has a
// valid one (a tracing proxy or load generator sent it), else a new one
// per request, as a tracer starting a trace does.

// taggedDB is the app's pool; with tags on, each statement gets its
// request's tags from the context.
type taggedDB struct {
	*sql.DB
	tags bool
}

type tagsKey struct{}

// handler wraps a route's handler: with tags on, the request's tags go
// into its context.
func (d *taggedDB) handler(route, action string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.tags {
			tp := r.Header.Get("traceparent")
			if !validTraceparent(tp) {
				var b [24]byte
				rand.Read(b[:])
				b[0] |= 1
				b[16] |= 1
				tp = "00-" + hex.EncodeToString(b[:16]) + "-" + hex.EncodeToString(b[16:]) + "-01"
			}
			comment := sqlcomment(map[string]string{"action": action, "db_driver": "go-sql-driver/mysql", "framework": "net/http", "route": route, "traceparent": tp})
			r = r.WithContext(context.WithValue(r.Context(), tagsKey{}, comment))
		}
		h(w, r)
	}
}

// tag appends the context's tags to q.
func (d *taggedDB) tag(ctx context.Context, q string) string {
	if !d.tags {
		return q
	}
	if c, ok := ctx.Value(tagsKey{}).(string); ok {
		return q + " " + c
	}
	return q
}

func (d *taggedDB) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return d.DB.QueryContext(ctx, d.tag(ctx, q), args...)
}

func (d *taggedDB) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return d.DB.QueryRowContext(ctx, d.tag(ctx, q), args...)
}

func (d *taggedDB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return d.DB.ExecContext(ctx, d.tag(ctx, q), args...)
}

// sqlcomment serialises tags as sqlcommenter does: each key and value
// URL-encoded (encodeURIComponent), the value's quotes escaped with a
// backslash and the value quoted, the pairs sorted by key and joined with
// commas.
func sqlcomment(tags map[string]string) string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("/*")
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(uriComponent(k))
		b.WriteString("='")
		b.WriteString(strings.ReplaceAll(uriComponent(tags[k]), "'", `\'`))
		b.WriteByte('\'')
	}
	b.WriteString("*/")
	return b.String()
}

// uriComponent is JavaScript's encodeURIComponent: everything but
// A-Z a-z 0-9 - _ . ! ~ * ' ( ) percent-encoded, byte by byte.
func uriComponent(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// validTraceparent reports whether v is a version-00 W3C traceparent with
// non-zero IDs.
func validTraceparent(v string) bool {
	if len(v) != 55 || v[:3] != "00-" || v[35] != '-' || v[52] != '-' {
		return false
	}
	for i, c := range []byte(v) {
		if i == 2 || i == 35 || i == 52 {
			continue
		}
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return strings.Trim(v[3:35], "0") != "" && strings.Trim(v[36:52], "0") != ""
}
