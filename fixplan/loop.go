package fixplan

import (
	"context"
	"io"
	"strings"

	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/slowlog"
	"github.com/stacktune/stacktune/sqltag"
)

// Loop is one request's calls of a loop's statement, with their values.
type Loop struct {
	// Request is the request's tag key ("trace:<id>"), Endpoint its
	// endpoint as its tags name it.
	Request, Endpoint string
	Statements        []string
}

// LoopFromSlowLog reads a slow log (the part captured during a run, with
// its statements' request tags) and returns, among the requests whose
// endpoint is endpoint ("" for any), the one with the most statements of
// fingerprint fp (pt-query-digest's, package fingerprint): at most
// MaxCalls of them, MaxRequests requests tracked. Nil when no tagged
// statement of fp is in the log.
func LoopFromSlowLog(ctx context.Context, r io.Reader, fp, endpoint string) (*Loop, error) {
	type req struct {
		ep    string
		stmts []string
	}
	fp = strings.TrimSpace(fp)
	reqs := map[string]*req{}
	var p slowlog.Parser
	_, err := slowlog.Split(chunk.WithContext(ctx, r), chunk.Options{}, func(c slowlog.Chunk) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.ParseSplit(c, func(ev *slowlog.Event) {
			if ev.Admin || len(ev.Query) == 0 || len(ev.Query) > MaxStatement {
				return
			}
			q := string(ev.Query)
			if strings.TrimSpace(fingerprint.Fingerprint(q)) != fp {
				return
			}
			tags := sqltag.Parse(ev.Query)
			k := tags.Request()
			if k == "" {
				return
			}
			rq := reqs[k]
			if rq == nil {
				if len(reqs) >= MaxRequests {
					return
				}
				rq = &req{ep: tags.Endpoint()}
				reqs[k] = rq
			}
			if len(rq.stmts) < MaxCalls {
				rq.stmts = append(rq.stmts, q)
			}
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The endpoint's requests: the tags name it as the caller does, or
	// name a route that matches it ("GET /{$}" for the access log's
	// "GET /"); else any request's.
	method, path, _ := strings.Cut(endpoint, " ")
	ofEndpoint := func(ep string) bool { return ep == endpoint || sqltag.MatchRoute(ep, method, path) }
	best := func(only bool) *Loop {
		var b *Loop
		for k, rq := range reqs {
			if only && !ofEndpoint(rq.ep) {
				continue
			}
			if b == nil || len(rq.stmts) > len(b.Statements) || len(rq.stmts) == len(b.Statements) && k < b.Request {
				b = &Loop{Request: k, Endpoint: rq.ep, Statements: rq.stmts}
			}
		}
		return b
	}
	if l := best(endpoint != ""); l != nil {
		return l, nil
	}
	return best(false), nil
}
