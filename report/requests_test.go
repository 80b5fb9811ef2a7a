package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/internal/golden"
	"github.com/stacktune/stacktune/internal/skip"
	"github.com/stacktune/stacktune/reqtrace"
)

// requestsFixtures are two per-request views: the trace run of the
// diagnose fixture (the test app through the proxy) and the tags of a
// captured slow log of the reference app (sqlcommenter).
func requestsFixtures(t *testing.T) map[string]*reqtrace.Report {
	t.Helper()
	f, err := os.Open("../testdata/slowlogs/mariadb1011-sqlcommenter.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tags, err := reqtrace.FromSlowLog(context.Background(), []input.Input{{Name: "mariadb1011-sqlcommenter.log", R: f}}, reqtrace.Options{NPlusOne: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The same log with the last two requests taken as in flight at the
	// end: their calls by endpoint, apart (Class.CutEndpoints).
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	inFlight, err := reqtrace.FromSlowLog(context.Background(), []input.Input{{Name: "mariadb1011-sqlcommenter.log", R: f}}, reqtrace.Options{NPlusOne: 2, DropLast: 2})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*reqtrace.Report{"trace": diagnoseFixture(t).Requests, "tags": tags, "tags-in-flight": inFlight}
}

func TestRequestsGolden(t *testing.T) {
	for name, r := range requestsFixtures(t) {
		for _, f := range RequestsFormats {
			var b bytes.Buffer
			if err := Requests(&b, r, f); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "requests", name+"."+f), b.Bytes())
		}
	}
	if err := Requests(&bytes.Buffer{}, nil, "csv"); err == nil {
		t.Error("csv accepted")
	}
}

// TestRequestsSections: what the view must say, in order.
func TestRequestsSections(t *testing.T) {
	r := requestsFixtures(t)["tags"]
	var b bytes.Buffer
	if err := Requests(&b, r, Text); err != nil {
		t.Fatal(err)
	}
	out, pos := b.String(), 0
	for _, want := range []string{
		"Which endpoint runs which SQL (tags: slow log)", "10 requests", "how: each statement's SQL comment tags",
		"Endpoints, the most DB time first", "queries/req", "GET /diary/entries/{account_name}",
		"N+1: one statement 2 times or more in one request", "select count(*) from comments where entry_id = ?", "Rewrite: one grouped query",
		"Statement classes and the endpoints that run them",
	} {
		i := strings.Index(out[pos:], want)
		if i < 0 {
			t.Errorf("no %q after byte %d:\n%s", want, pos, out)
			continue
		}
		pos += i + len(want)
	}
}

func TestRequestsHostile(t *testing.T) {
	for _, s := range []string{kitchenSink, "<script>alert(1)</script>"} {
		r := requestsFixtures(t)["tags-in-flight"]
		r.Method += s
		r.Notes = append(r.Notes, s)
		r.Skipped[skip.Code(s)] = 2
		for i := range r.Endpoints {
			r.Endpoints[i].Endpoint += s
			for j := range r.Endpoints[i].Classes {
				r.Endpoints[i].Classes[j].Fingerprint += s
			}
		}
		for i := range r.Classes {
			r.Classes[i].Fingerprint += s
			for j := range r.Classes[i].CutEndpoints {
				r.Classes[i].CutEndpoints[j].Endpoint += s
			}
		}
		for i := range r.NPlusOne {
			r.NPlusOne[i].Endpoint += s
			r.NPlusOne[i].Rewrite += s
		}
		for _, f := range []string{Text, Markdown, JSON} {
			var b bytes.Buffer
			if err := Requests(&b, r, f); err != nil {
				t.Fatal(err)
			}
			checkClean(t, b.String(), false)
		}
	}
}
