package reqtrace

import (
	"context"
	"database/sql"
	"io"
	"os"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/nplusone"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/refstack/refapp/refapptest"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

var isFriendID = refapptest.IsFriendID

// refStack is the reference app on a sandbox MariaDB with the small data
// set, through the proxy (with a Tap) or not.
type refStack struct {
	db    *sandbox.MariaDB
	app   *refapp.Server
	proxy *mysqlproxy.Proxy
	tap   *Tap
	root  *sql.DB // the app's database, for the replay
}

type stackOptions struct {
	server  map[string]string // the server's options
	proxy   bool              // the app connects through the proxy
	tags    bool              // the app tags its statements
	dsnArgs string            // more DSN parameters for the app
}

func startRefStack(t *testing.T, o stackOptions) *refStack {
	t.Helper()
	ctx := context.Background()
	s := &refStack{db: sandboxtest.NewMariaDB(t, sandbox.MariaDBOptions{Options: o.server})}
	s.root = refapptest.Load(t, s.db, 0)
	dsn := s.db.DSN("refapp")
	var err error
	if o.proxy {
		s.tap = NewTap()
		s.proxy, err = mysqlproxy.Start(ctx, mysqlproxy.Options{Network: "unix", Address: s.db.Socket(), OnStatement: s.tap.Statement})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.proxy.Close() })
		if dsn, err = s.proxy.DSN(dsn); err != nil {
			t.Fatal(err)
		}
	}
	if o.dsnArgs != "" {
		dsn += "?" + o.dsnArgs
	}
	s.app, err = refapp.Start(ctx, refapp.Config{DSN: dsn, SQLTags: o.tags})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.app.Close() })
	return s
}

func scenarioFor(t *testing.T, base string, users []int, more bool) string {
	return refapptest.Scenario(t, base, users, more)
}

func homePage(t *testing.T, base string, me int, trace string) string {
	return refapptest.HomePage(t, base, me, trace)
}

func expectedChecks(t *testing.T, s *refStack, me int) int {
	return refapptest.ExpectedChecks(t, s.root, s.app.URL(), me)
}

// endpointClass finds an endpoint's class in a report.
func endpointClass(rep *Report, endpoint, id string) (Endpoint, EndpointClass, bool) {
	for _, e := range rep.Endpoints {
		if e.Endpoint != endpoint {
			continue
		}
		for _, c := range e.Classes {
			if c.ID == id {
				return e, c, true
			}
		}
		return e, EndpointClass{}, false
	}
	return Endpoint{}, EndpointClass{}, false
}

func findNPlusOne(rep *Report, endpoint, id string) (nplusone.Pattern, bool) {
	for _, n := range rep.NPlusOne {
		if n.Endpoint == endpoint && n.ID == id {
			return n, true
		}
	}
	return nplusone.Pattern{}, false
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func openFile(path string) (*os.File, error) { return os.Open(path) }

func ioSection(f *os.File, start, end int64) io.Reader {
	return io.NewSectionReader(f, start, end-start)
}
