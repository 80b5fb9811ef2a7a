package fixplan

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/fingerprint"
)

// TestLoopFromSlowLogEndpoint: the loop is taken from a request of the
// endpoint asked for, named by the access log ("GET /") while the tags
// carry the app's route pattern ("GET /{$}"); another endpoint's busier
// request is taken only when no endpoint is asked for.
func TestLoopFromSlowLogEndpoint(t *testing.T) {
	var log strings.Builder
	stmt := func(id int, route, trace string) {
		fmt.Fprintf(&log, "# Time: 261128 19:00:00\n# Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 1\nSET timestamp=1795892400;\n"+
			"SELECT id FROM entries WHERE id = %d /*route='%s',traceparent='00-%s-0000000000000001-01'*/;\n", id, route, trace)
	}
	const home, friends = "0000000000000000000000000000aaaa", "0000000000000000000000000000bbbb"
	for i := range 2 {
		stmt(i, "GET%20%2F%7B%24%7D", home)
	}
	for i := range 3 {
		stmt(10+i, "GET%20%2Ffriends", friends)
	}
	fp := fingerprint.Fingerprint("SELECT id FROM entries WHERE id = 1")
	for _, tc := range []struct {
		name, endpoint, request, loopEndpoint string
		calls                                 int
	}{
		{"the access log's name for the route", "GET /", "trace:" + home, "GET /{$}", 2},
		{"the route itself", "GET /{$}", "trace:" + home, "GET /{$}", 2},
		{"another endpoint", "GET /friends", "trace:" + friends, "GET /friends", 3},
		{"any endpoint: the busiest request", "", "trace:" + friends, "GET /friends", 3},
		{"an endpoint no request has: any request's", "GET /nowhere", "trace:" + friends, "GET /friends", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := LoopFromSlowLog(context.Background(), strings.NewReader(log.String()), fp, tc.endpoint)
			if err != nil || l == nil {
				t.Fatalf("loop %+v, %v", l, err)
			}
			if l.Request != tc.request || l.Endpoint != tc.loopEndpoint || len(l.Statements) != tc.calls {
				t.Errorf("loop of %s (%s), %d calls; want %s (%s), %d", l.Request, l.Endpoint, len(l.Statements), tc.request, tc.loopEndpoint, tc.calls)
			}
		})
	}
}
