// Command tracebench measures what a trace run's MySQL proxy (package
// mysqlproxy, recording through a reqtrace.Tap as `stacktune endpoints
// --trace proxy` does) adds to the reference app's request latency: the
// same pages requested one at a time, as a trace run sends them, from two
// copies of the app on one throwaway MariaDB, one connected to the server
// directly and one through the proxy, alternating request by request in
// the same run (ABBA), so both see the same server, data and machine load.
//
//	go run ./bench/tracebench                       # 300 rounds of 4 pages, table on stdout
//	go run ./bench/tracebench --markdown            # + a Markdown section for docs/benchmarks.md
//	go run ./bench/tracebench --rounds 50           # quick look
//	go run ./bench/tracebench --dsn-params interpolateParams=true   # text queries instead of prepare/execute/close
//
// See bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/bench/internal/measure"
	"github.com/stacktune/stacktune/mysqlproxy"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/reqtrace"
	"github.com/stacktune/stacktune/sandbox"
)

func main() { os.Exit(measure.Main("tracebench", parseFlags, run)) }

// config holds the command-line flags.
type config struct {
	rounds    int
	scale     int
	user      int
	dsnParams string
	upstream  string
	record    bool
	markdown  bool
	timeout   time.Duration
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("tracebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.rounds, "rounds", 300, "rounds: each requests every page once from each app, in alternating order")
	fs.IntVar(&c.scale, "scale", 0, "reference app data scale (0: the tests' small data set, 100 users; 1: 1000 users)")
	fs.IntVar(&c.user, "user", 7, "the user logged in")
	fs.StringVar(&c.dsnParams, "dsn-params", "", "go-sql-driver DSN parameters of both apps (default: the first version's, every query a prepare, execute and close)")
	fs.StringVar(&c.upstream, "upstream", "tcp", "how the apps (and the proxy) reach MariaDB: tcp or unix")
	fs.BoolVar(&c.record, "record", true, "the proxy records every statement (as during a trace run); false measures the pass-through alone")
	fs.BoolVar(&c.markdown, "markdown", false, "also print the results as Markdown for docs/benchmarks.md")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "per-request timeout")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q: every input is a flag", fs.Args())
	}
	if c.rounds < 5 || c.scale < 0 || c.user < 1 || (c.upstream != "tcp" && c.upstream != "unix") {
		return c, errors.New("--rounds at least 5, --scale 0 or more, --user 1 or more, --upstream tcp or unix")
	}
	return c, nil
}

// pages are what each round requests, as a trace run of the reference
// scenario does.
var pages = []string{"/", "/friends", "/profile/user00003", "/diary/entry/2"}

// sample is one page's latencies from one app.
type sample struct {
	lat []time.Duration
}

func (s *sample) quantile(q float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	c := append([]time.Duration(nil), s.lat...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	i := int(q * float64(len(c)-1))
	return c[i]
}

func run(ctx context.Context, c config, stdout, stderr io.Writer) error {
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "tracebench: "+format+"\n", a...) }
	db, err := sandbox.StartMariaDB(ctx, sandbox.MariaDBOptions{})
	if err != nil {
		return err
	}
	defer db.Stop()
	say("generating the reference app's data (scale %d)", c.scale)
	root, err := refapp.Load(ctx, db.DB(), db.DSN("refapp"), c.scale)
	if err != nil {
		return err
	}
	defer root.Close()
	if c.user > 100 {
		return fmt.Errorf("--user %d: the data has users 1 to 100 at least", c.user)
	}
	direct := db.TCPDSN("refapp")
	network, addr := "tcp", fmt.Sprintf("127.0.0.1:%d", db.Port())
	if c.upstream == "unix" {
		direct, network, addr = db.DSN("refapp"), "unix", db.Socket()
	}
	if direct == db.TCPDSN("refapp") {
		// root over TCP needs a password: an app user for both apps.
		for _, q := range []string{"CREATE USER app@'127.0.0.1' IDENTIFIED BY 'app'", "GRANT ALL ON refapp.* TO app@'127.0.0.1'",
			"CREATE USER app@localhost IDENTIFIED BY 'app'", "GRANT ALL ON refapp.* TO app@localhost"} {
			if _, err := db.DB().ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		direct = fmt.Sprintf("app:app@tcp(127.0.0.1:%d)/refapp", db.Port())
	}
	tap := reqtrace.NewTap()
	var statements int64
	onStatement := func(s *mysqlproxy.Statement) {
		if s.Command == mysqlproxy.Query || s.Command == mysqlproxy.Execute {
			statements++ // one request at a time: no race
		}
		tap.Statement(s)
	}
	// As a trace run starts it: with its idle timeout.
	p, err := mysqlproxy.Start(ctx, mysqlproxy.Options{Network: network, Address: addr, OnStatement: onStatement, IdleTimeout: mysqlproxy.DefaultIdleTimeout})
	if err != nil {
		return err
	}
	defer p.Close()
	proxied, err := p.DSN(direct)
	if err != nil {
		return err
	}
	if c.dsnParams != "" {
		direct += "?" + c.dsnParams
		proxied += "?" + c.dsnParams
	}
	if c.record {
		stop := tap.Record()
		defer stop()
	}
	apps := map[string]*refapp.Server{}
	for name, dsn := range map[string]string{"direct": direct, "proxy": proxied} {
		a, err := refapp.Start(ctx, refapp.Config{DSN: dsn})
		if err != nil {
			return fmt.Errorf("the %s app: %w", name, err)
		}
		defer a.Close()
		apps[name] = a
	}
	clients := map[string]*http.Client{}
	for name, a := range apps {
		jar, _ := cookiejar.New(nil)
		cl := &http.Client{Jar: jar, Timeout: c.timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := cl.PostForm(a.URL()+"/login", url.Values{"email": {refapp.Email(c.user)}, "password": {refapp.Password(c.user)}})
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			return fmt.Errorf("the %s app's login: %s", name, resp.Status)
		}
		clients[name] = cl
	}
	get := func(name, page string) (time.Duration, error) {
		start := time.Now()
		resp, err := clients[name].Get(apps[name].URL() + page)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s %s: %s", name, page, resp.Status)
		}
		return d, err
	}
	// Warm both apps (pools, caches) before measuring.
	for range 5 {
		for _, page := range pages {
			for _, name := range []string{"direct", "proxy"} {
				if _, err := get(name, page); err != nil {
					return err
				}
			}
		}
	}
	res := map[string]map[string]*sample{"direct": {}, "proxy": {}}
	for _, m := range res {
		for _, page := range pages {
			m[page] = &sample{}
		}
	}
	perRequest := map[string]float64{}
	say("%d rounds of %d pages from each app, alternating", c.rounds, len(pages))
	for i := range c.rounds {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		order := []string{"direct", "proxy"}
		if i%2 == 1 {
			order = []string{"proxy", "direct"}
		}
		for _, page := range pages {
			for _, name := range order {
				before := statements
				d, err := get(name, page)
				if err != nil {
					return err
				}
				res[name][page].lat = append(res[name][page].lat, d)
				if name == "proxy" {
					perRequest[page] += float64(statements - before)
				}
			}
		}
	}
	for page := range perRequest {
		perRequest[page] /= float64(c.rounds)
	}
	st := p.Stats()
	if st.Untracked != 0 || st.Refused != 0 {
		return fmt.Errorf("the proxy lost track of %d connections and refused %d", st.Untracked, st.Refused)
	}
	rows := table(res, perRequest)
	printTable(stdout, c, rows)
	if c.markdown {
		printMarkdown(stdout, c, rows, db.Version())
	}
	return nil
}

// row is one page's result.
type row struct {
	page                  string
	statements            float64
	direct, proxy         [3]time.Duration // p50, p90, p99
	overhead, perStmt     time.Duration
	ratio                 float64
	directMean, proxyMean time.Duration
}

func table(res map[string]map[string]*sample, perRequest map[string]float64) []row {
	var out []row
	for _, page := range pages {
		d, p := res["direct"][page], res["proxy"][page]
		r := row{page: page, statements: perRequest[page]}
		for i, q := range []float64{0.5, 0.9, 0.99} {
			r.direct[i], r.proxy[i] = d.quantile(q), p.quantile(q)
		}
		r.overhead = r.proxy[0] - r.direct[0]
		if r.statements > 0 {
			r.perStmt = time.Duration(float64(r.overhead) / r.statements)
		}
		if r.direct[0] > 0 {
			r.ratio = float64(r.proxy[0]) / float64(r.direct[0])
		}
		out = append(out, r)
	}
	return out
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func us(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Microsecond)) }

var heads = []string{"page", "statements/req", "direct p50 ms", "proxy p50 ms", "direct p90", "proxy p90", "direct p99", "proxy p99", "p50 added ms", "proxy/direct", "added µs/statement"}

func cells(r row) []string {
	return []string{r.page, fmt.Sprintf("%.0f", r.statements), ms(r.direct[0]), ms(r.proxy[0]), ms(r.direct[1]), ms(r.proxy[1]), ms(r.direct[2]), ms(r.proxy[2]),
		ms(r.overhead), fmt.Sprintf("%.2fx", r.ratio), us(r.perStmt)}
}

func printTable(w io.Writer, c config, rows []row) {
	fmt.Fprintf(w, "# request latency, one request at a time, %d rounds; the proxy %s\n", c.rounds, map[bool]string{true: "recording (a trace run)", false: "passing through only"}[c.record])
	fmt.Fprintln(w, strings.Join(heads, "\t"))
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(cells(r), "\t"))
	}
}

func printMarkdown(w io.Writer, c config, rows []row, mariadb string) {
	ctx := context.Background()
	fmt.Fprintf(w, "\n### Run of %s\n\n", measure.Today())
	fmt.Fprintf(w, "- Machine: %d cores (nproc), %s\n", measure.NumCPU(), measure.CPUModel())
	fmt.Fprintf(w, "- Versions: MariaDB %s, stacktune %s\n", mariadb, measure.GitCommit(ctx))
	params := c.dsnParams
	if params == "" {
		params = "none: every query a prepare, execute and close"
	}
	fmt.Fprintf(w, "- Reference app, data scale %d, user %d, DSN parameters %s, MariaDB over %s; %d rounds, one request at a time, the two apps alternating (ABBA); the proxy %s\n\n",
		c.scale, c.user, params, c.upstream, c.rounds, map[bool]string{true: "recording every statement as a trace run does", false: "passing through only"}[c.record])
	fmt.Fprintf(w, "| %s |\n|---|%s\n", strings.Join(heads, " | "), strings.Repeat("---:|", len(heads)-1))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells(r), " | "))
	}
}
