package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// nginxFormat is the log_format of the generated log: combined with the
// request time and the upstream response time appended.
const nginxFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time $upstream_response_time`

// goaccessFormat is nginxFormat for goaccess: %T is $request_time, the
// upstream time is ignored.
const goaccessFormat = `%h %^[%d:%t %^] "%r" %s %b "%R" "%u" %T %^`

// generatorVersion names the generator's output: a cached log made by
// another version is regenerated. Bump it whenever the output changes.
const generatorVersion = 1

// logMeta describes a generated log and what any profiler must find in
// it; it is stored beside the log as <log>.meta.json.
type logMeta struct {
	Generator   int       `json:"generator_version"`
	Seed        uint64    `json:"seed"`
	SizeMiB     int       `json:"size_mib"`
	LogFormat   string    `json:"nginx_log_format"`
	Bytes       int64     `json:"bytes"`
	Requests    int64     `json:"requests"`
	TimeTotalMs int64     `json:"time_total_ms"`
	FirstTime   time.Time `json:"first_time"`
	LastTime    time.Time `json:"last_time"`
	Users       int       `json:"users"`
	Posts       int       `json:"posts"`
	Devices     int       `json:"devices"`
	Clients     int       `json:"clients"`
	// Endpoints are the expected rows of a profile grouped the way
	// stacktune groups: per method and path pattern.
	Endpoints []expectedEndpoint `json:"endpoints"`
	// Learned are the positions a grouping profiler must learn as :name.
	Learned     []string  `json:"learned_groups"`
	GeneratedAt time.Time `json:"generated_at"`
	GenSeconds  float64   `json:"gen_seconds"`
}

// expectedEndpoint is what the generator wrote for one method and pattern.
type expectedEndpoint struct {
	Method      string   `json:"method"`
	Pattern     string   `json:"pattern"`
	Count       int64    `json:"count"`
	Status      [5]int64 `json:"status"` // 1xx..5xx
	Bytes       int64    `json:"bytes"`
	TimeTotalMs int64    `json:"time_total_ms"`
	TimeMaxMs   int64    `json:"time_max_ms"`
	Static      bool     `json:"static"`
}

// The application's population: enough distinct users, posts and devices
// that per-path aggregation (awk) tracks far more keys than endpoints.
const (
	nUsers   = 5000
	nPosts   = 200000
	nDevices = 1000
	nClients = 3000
	// meanGapNs is the mean time between requests: about 2000 requests/s.
	meanGapNs = 500_000
	host      = "https://isucon.example"
)

// status is one possible response of a route, with its probability
// weight and response size.
type status struct {
	code     int
	weight   float64
	bytesMed float64 // median body bytes (0: none)
}

// route is one (method, path pattern) the application serves, with how to
// write a request path for it.
type route struct {
	method  string
	pattern string // what a grouping profiler must report
	weight  float64
	static  bool
	// request time: log-normal with this median (ms) and sigma; static
	// files take 0-5 ms.
	medianMs, sigma float64
	statuses        []status
	uri             func(g *gen, b []byte) []byte
	referer         func(g *gen, b []byte) []byte
}

func lit(path string) func(*gen, []byte) []byte {
	return func(_ *gen, b []byte) []byte { return append(b, path...) }
}

// staticURI is a fixed file, with a cache-busting query now and then.
func staticURI(path string) func(*gen, []byte) []byte {
	return func(g *gen, b []byte) []byte {
		b = append(b, path...)
		if g.r.IntN(4) == 0 {
			b = append(b, "?v=20241010"...)
		}
		return b
	}
}

func ok(bytes float64) []status { return []status{{200, 1, bytes}} }

// routes is an ISUCON-like application: a photo-sharing site (private-isu)
// and an IoT dashboard API (isucondition) behind one nginx, with static
// files making up 20% of the requests. Weights are relative within the
// dynamic and within the static routes; Zipf-ish, a few routes take most
// requests. /initialize is written once, first.
var routes = []route{
	{method: "GET", pattern: "/", weight: 10, medianMs: 95, sigma: 0.5, statuses: []status{{200, 995, 28000}, {500, 5, 150}}, uri: lit("/"), referer: refSite},
	{method: "GET", pattern: "/posts", weight: 3, medianMs: 70, sigma: 0.5, statuses: ok(22000), uri: uriPosts, referer: refTop},
	{method: "GET", pattern: "/posts/:num", weight: 6, medianMs: 12, sigma: 0.6, statuses: []status{{200, 97, 9000}, {404, 3, 150}}, uri: uriPost, referer: refPage},
	{method: "GET", pattern: "/users/:name", weight: 5, medianMs: 45, sigma: 0.6, statuses: []status{{200, 985, 24000}, {404, 15, 150}}, uri: uriUser, referer: refPage},
	{method: "GET", pattern: "/image/:name", weight: 14, medianMs: 3, sigma: 0.8, statuses: []status{{200, 80, 80000}, {304, 20, 0}}, uri: uriImage, referer: refPage},
	{method: "POST", pattern: "/login", weight: 2, medianMs: 9, sigma: 0.4, statuses: []status{{302, 88, 0}, {200, 12, 3000}}, uri: lit("/login"), referer: refLit(host + "/login")},
	{method: "POST", pattern: "/register", weight: 0.5, medianMs: 11, sigma: 0.4, statuses: []status{{302, 95, 0}, {200, 5, 3000}}, uri: lit("/register"), referer: refLit(host + "/register")},
	{method: "GET", pattern: "/logout", weight: 0.5, medianMs: 1, sigma: 0.3, statuses: []status{{302, 1, 0}}, uri: lit("/logout"), referer: refPage},
	{method: "POST", pattern: "/", weight: 1.2, medianMs: 28, sigma: 0.7, statuses: []status{{302, 995, 0}, {500, 5, 150}}, uri: lit("/"), referer: refTop},
	{method: "POST", pattern: "/comment", weight: 2, medianMs: 7, sigma: 0.4, statuses: []status{{302, 1, 0}}, uri: lit("/comment"), referer: refPage},
	{method: "GET", pattern: "/admin/banned", weight: 0.2, medianMs: 35, sigma: 0.4, statuses: []status{{200, 80, 40000}, {403, 20, 150}}, uri: lit("/admin/banned"), referer: refTop},
	{method: "POST", pattern: "/admin/banned", weight: 0.05, medianMs: 60, sigma: 0.4, statuses: []status{{302, 1, 0}}, uri: lit("/admin/banned"), referer: refLit(host + "/admin/banned")},
	{method: "GET", pattern: "/api/isu", weight: 3, medianMs: 20, sigma: 0.5, statuses: ok(4000), uri: lit("/api/isu"), referer: refLit(host + "/")},
	{method: "GET", pattern: "/api/isu/:uuid", weight: 2, medianMs: 5, sigma: 0.5, statuses: []status{{200, 98, 600}, {404, 2, 30}}, uri: uriIsu(""), referer: refIsu},
	{method: "GET", pattern: "/api/isu/:uuid/graph", weight: 4, medianMs: 220, sigma: 0.6, statuses: ok(5000), uri: uriGraph, referer: refIsu},
	{method: "GET", pattern: "/api/condition/:uuid", weight: 5, medianMs: 30, sigma: 0.6, statuses: ok(12000), uri: uriConditions, referer: refIsu},
	{method: "POST", pattern: "/api/condition/:uuid", weight: 12, medianMs: 3, sigma: 0.6, statuses: []status{{202, 99, 0}, {400, 1, 30}}, uri: uriIsu("/api/condition/"), referer: refNone},
	{method: "GET", pattern: "/api/trend", weight: 3, medianMs: 380, sigma: 0.35, statuses: ok(30000), uri: lit("/api/trend"), referer: refLit(host + "/")},
	{method: "GET", pattern: "/api/user/:name/statistics", weight: 1.5, medianMs: 140, sigma: 0.5, statuses: ok(800), uri: uriStatistics, referer: refPage},
	{method: "HEAD", pattern: "/", weight: 0.1, medianMs: 1, sigma: 0.3, statuses: ok(0), uri: lit("/"), referer: refNone},
	// Scanners: 404 from the application.
	{method: "GET", pattern: "/wp-login.php", weight: 0.12, medianMs: 2, sigma: 0.3, statuses: []status{{404, 1, 150}}, uri: lit("/wp-login.php"), referer: refNone},
	{method: "GET", pattern: "/.env", weight: 0.12, medianMs: 2, sigma: 0.3, statuses: []status{{404, 1, 150}}, uri: lit("/.env"), referer: refNone},
	{method: "GET", pattern: "/admin/config.php", weight: 0.06, medianMs: 2, sigma: 0.3, statuses: []status{{404, 1, 150}}, uri: lit("/admin/config.php"), referer: refNone},
	// Static files, served by nginx itself (no upstream time).
	{method: "GET", pattern: "/css/style.css", weight: 4, static: true, statuses: []status{{200, 55, 9000}, {304, 45, 0}}, uri: staticURI("/css/style.css"), referer: refPage},
	{method: "GET", pattern: "/js/main.js", weight: 4, static: true, statuses: []status{{200, 55, 12000}, {304, 45, 0}}, uri: staticURI("/js/main.js"), referer: refPage},
	{method: "GET", pattern: "/js/timeago.min.js", weight: 3, static: true, statuses: []status{{200, 55, 5000}, {304, 45, 0}}, uri: staticURI("/js/timeago.min.js"), referer: refPage},
	{method: "GET", pattern: "/favicon.ico", weight: 3, static: true, statuses: []status{{200, 70, 4000}, {304, 30, 0}}, uri: lit("/favicon.ico"), referer: refPage},
	{method: "GET", pattern: "/assets/index-3f2a9c1e.js", weight: 2, static: true, statuses: []status{{200, 55, 180000}, {304, 45, 0}}, uri: staticURI("/assets/index-3f2a9c1e.js"), referer: refIsu},
	{method: "GET", pattern: "/assets/vendor-8b4d2f6a.css", weight: 2, static: true, statuses: []status{{200, 55, 60000}, {304, 45, 0}}, uri: staticURI("/assets/vendor-8b4d2f6a.css"), referer: refIsu},
	{method: "GET", pattern: "/assets/logo.svg", weight: 1, static: true, statuses: []status{{200, 60, 3000}, {304, 40, 0}}, uri: lit("/assets/logo.svg"), referer: refIsu},
	{method: "GET", pattern: "/assets/ajax-loader.gif", weight: 1, static: true, statuses: []status{{200, 60, 1500}, {304, 40, 0}}, uri: lit("/assets/ajax-loader.gif"), referer: refPage},
}

// initializeRoute is the benchmarker's first request.
var initializeRoute = route{method: "POST", pattern: "/initialize", medianMs: 8500, sigma: 0.1, statuses: ok(20), uri: lit("/initialize"), referer: refNone}

// staticShare is the part of requests for static files.
const staticShare = 0.20

// learnedGroups are the positions whose values (user names, image file
// names) a grouping profiler must collapse into :name.
var learnedGroups = []string{"/api/user/:name", "/image/:name", "/users/:name"}

func uriPosts(g *gen, b []byte) []byte {
	b = append(b, "/posts?max_created_at="...)
	t := time.Unix(0, g.now-int64(g.r.IntN(3600))*int64(time.Second)).In(g.zone)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	return append(b, "%2B09%3A00"...)
}

func uriPost(g *gen, b []byte) []byte {
	b = append(b, "/posts/"...)
	return strconv.AppendInt(b, int64(g.post()), 10)
}

func uriUser(g *gen, b []byte) []byte {
	b = append(b, "/users/"...)
	b = append(b, g.users[g.user()]...)
	if g.r.IntN(8) == 0 {
		b = append(b, "?page="...)
		b = strconv.AppendInt(b, int64(2+g.r.IntN(5)), 10)
	}
	return b
}

var imageExt = []string{".jpg", ".jpg", ".png", ".gif"}

func uriImage(g *gen, b []byte) []byte {
	id := g.post()
	b = append(b, "/image/"...)
	b = strconv.AppendInt(b, int64(id), 10)
	return append(b, imageExt[id%len(imageExt)]...)
}

func uriIsu(prefix string) func(*gen, []byte) []byte {
	if prefix == "" {
		prefix = "/api/isu/"
	}
	return func(g *gen, b []byte) []byte {
		b = append(b, prefix...)
		return append(b, g.devices[g.device()]...)
	}
}

func uriGraph(g *gen, b []byte) []byte {
	b = append(b, "/api/isu/"...)
	b = append(b, g.devices[g.device()]...)
	b = append(b, "/graph?datetime="...)
	return strconv.AppendInt(b, (g.now/int64(time.Second)/3600-int64(g.r.IntN(48)))*3600, 10)
}

var conditionLevels = []string{"critical", "critical%2Cwarning", "critical%2Cwarning%2Cinfo", "info", "warning"}

func uriConditions(g *gen, b []byte) []byte {
	b = append(b, "/api/condition/"...)
	b = append(b, g.devices[g.device()]...)
	b = append(b, "?condition_level="...)
	b = append(b, conditionLevels[g.r.IntN(len(conditionLevels))]...)
	end := g.now/int64(time.Second) - int64(g.r.IntN(600))
	b = append(b, "&end_time="...)
	b = strconv.AppendInt(b, end, 10)
	if g.r.IntN(3) == 0 {
		b = append(b, "&start_time="...)
		b = strconv.AppendInt(b, end-86400, 10)
	}
	return b
}

func uriStatistics(g *gen, b []byte) []byte {
	b = append(b, "/api/user/"...)
	b = append(b, g.users[g.user()]...)
	return append(b, "/statistics"...)
}

func refNone(_ *gen, b []byte) []byte { return append(b, '-') }

func refLit(s string) func(*gen, []byte) []byte {
	return func(_ *gen, b []byte) []byte { return append(b, s...) }
}

// refSite is the referer of a top page: often none or a search engine.
func refSite(g *gen, b []byte) []byte {
	switch g.r.IntN(10) {
	case 0, 1, 2, 3:
		return append(b, '-')
	case 4:
		return append(b, "https://www.google.com/"...)
	}
	return append(b, host+"/"...)
}

func refTop(g *gen, b []byte) []byte {
	if g.r.IntN(10) == 0 {
		return append(b, '-')
	}
	return append(b, host+"/"...)
}

// refPage is a page of the site that links to the request.
func refPage(g *gen, b []byte) []byte {
	switch g.r.IntN(10) {
	case 0:
		return append(b, '-')
	case 1, 2, 3:
		return append(b, host+"/"...)
	case 4, 5, 6:
		b = append(b, host+"/posts/"...)
		return strconv.AppendInt(b, int64(g.post()), 10)
	}
	b = append(b, host+"/users/"...)
	return append(b, g.users[g.user()]...)
}

func refIsu(g *gen, b []byte) []byte {
	if g.r.IntN(10) == 0 {
		return append(b, host+"/"...)
	}
	b = append(b, host+"/isu/"...)
	return append(b, g.devices[g.device()]...)
}

// userAgents are what the clients send; each client keeps one.
var userAgents = []string{
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36 Edg/129.0.0.0",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15",
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.6668.81 Mobile Safari/537.36",
	"Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0",
	"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
	"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
	"isucandar",
	"Go-http-client/1.1",
	"curl/8.5.0",
}

// uaWeights makes browsers common and bots rare.
var uaWeights = []float64{20, 6, 10, 6, 10, 8, 4, 1, 1, 25, 6, 1}

// gen writes the log. Everything it writes comes from r, seeded.
type gen struct {
	r       *rand.Rand
	zone    *time.Location
	now     int64 // Unix ns of the current request
	users   []string
	devices []string
	clients []client
	uaCum   []float64
	dynCum  []float64 // cumulative weights over dynamic routes
	statCum []float64 // over static routes
	dynIdx  []int
	statIdx []int
	stCum   [][]float64 // per route, cumulative status weights

	sec     int64 // second of cached timeText
	timeBuf []byte
	exp     []expectedEndpoint // per route index; the last is /initialize
}

type client struct {
	addr string
	ua   string
}

// syllables make user names that are neither numbers nor hex: each has a
// letter past f.
var syllables = []string{"ka", "ki", "ku", "ko", "sa", "shi", "su", "so", "ta", "chi", "tsu", "to", "na", "ni", "nu", "no",
	"ha", "hi", "fu", "ho", "ma", "mi", "mu", "mo", "ya", "yu", "yo", "ra", "ri", "ru", "ro", "wa", "n"}

func newGen(seed uint64) *gen {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed_1e55_a11c_e5)), zone: time.FixedZone("", 9*3600)}
	g.now = time.Date(2024, 10, 10, 13, 0, 0, 0, g.zone).UnixNano()
	seen := map[string]bool{}
	for len(g.users) < nUsers {
		var b []byte
		for n := 2 + g.r.IntN(3); n > 0; n-- {
			b = append(b, syllables[g.r.IntN(len(syllables))]...)
		}
		if g.r.IntN(3) == 0 {
			b = strconv.AppendInt(append(b, '_'), int64(g.r.IntN(100)), 10)
		}
		if s := string(b); !seen[s] && classifyName(b) {
			seen[s] = true
			g.users = append(g.users, s)
		}
	}
	for range nDevices {
		g.devices = append(g.devices, uuid(g.r))
	}
	for i := range userAgents {
		g.uaCum = append(g.uaCum, lastOr(g.uaCum)+uaWeights[i])
	}
	for range nClients {
		c := client{ua: userAgents[pick(g.r, g.uaCum)]}
		if g.r.IntN(100) < 85 {
			c.addr = fmt.Sprintf("%d.%d.%d.%d", []int{10, 172, 192, 203}[g.r.IntN(4)], g.r.IntN(256), g.r.IntN(256), 1+g.r.IntN(254))
		} else {
			c.addr = fmt.Sprintf("2001:db8:%x:%x::%x", g.r.IntN(0x10000), g.r.IntN(0x10000), 1+g.r.IntN(0xffff))
		}
		g.clients = append(g.clients, c)
	}
	for i, rt := range routes {
		if rt.static {
			g.statIdx = append(g.statIdx, i)
			g.statCum = append(g.statCum, lastOr(g.statCum)+rt.weight)
		} else {
			g.dynIdx = append(g.dynIdx, i)
			g.dynCum = append(g.dynCum, lastOr(g.dynCum)+rt.weight)
		}
	}
	for _, rt := range append(routes[:len(routes):len(routes)], initializeRoute) {
		var cum []float64
		for _, s := range rt.statuses {
			cum = append(cum, lastOr(cum)+s.weight)
		}
		g.stCum = append(g.stCum, cum)
		g.exp = append(g.exp, expectedEndpoint{Method: rt.method, Pattern: rt.pattern, Static: rt.static})
	}
	return g
}

// classifyName is true for a user name no profiler would take for a
// number, hash, UUID or date: it has a letter past f.
func classifyName(b []byte) bool {
	for _, c := range b {
		if c >= 'g' && c <= 'z' {
			return true
		}
	}
	return false
}

func lastOr(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1]
}

// pick draws an index with probability proportional to its weight, from
// cumulative weights.
func pick(r *rand.Rand, cum []float64) int {
	x := r.Float64() * cum[len(cum)-1]
	return min(sort.SearchFloat64s(cum, x), len(cum)-1)
}

func uuid(r *rand.Rand) string {
	const hexd = "0123456789abcdef"
	b := make([]byte, 36)
	for i := range b {
		switch i {
		case 8, 13, 18, 23:
			b[i] = '-'
		default:
			b[i] = hexd[r.IntN(16)]
		}
	}
	return string(b)
}

// zipf draws 0..n-1 with small values far more likely.
func (g *gen) zipf(n int, exp float64) int {
	return min(int(float64(n)*math.Pow(g.r.Float64(), exp)), n-1)
}

func (g *gen) user() int   { return g.zipf(nUsers, 2) }
func (g *gen) device() int { return g.zipf(nDevices, 2) }

// post draws a post ID, recent ones (high IDs) the most.
func (g *gen) post() int { return nPosts - g.zipf(nPosts, 3) }

// timeText returns the $time_local of g.now.
func (g *gen) timeText() []byte {
	if s := g.now / int64(time.Second); s != g.sec || g.timeBuf == nil {
		g.sec = s
		g.timeBuf = time.Unix(s, 0).In(g.zone).AppendFormat(g.timeBuf[:0], "02/Jan/2006:15:04:05 -0700")
	}
	return g.timeBuf
}

// appendMs writes milliseconds as nginx writes $request_time: "0.042".
func appendMs(b []byte, ms int64) []byte {
	b = strconv.AppendInt(b, ms/1000, 10)
	f := ms % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// line appends one request of route i to b and accounts for it.
func (g *gen) line(b []byte, i int) []byte {
	rt := &initializeRoute
	if i < len(routes) {
		rt = &routes[i]
	}
	st := rt.statuses[pick(g.r, g.stCum[i])]
	var ms int64
	switch {
	case rt.static:
		switch x := g.r.IntN(100); {
		case x < 80:
		case x < 95:
			ms = 1
		default:
			ms = 2 + int64(g.r.IntN(4))
		}
	default:
		ms = int64(math.Round(rt.medianMs * math.Exp(rt.sigma*g.r.NormFloat64())))
		if st.code >= 500 {
			ms += 1000 + int64(g.r.IntN(9000)) // a timeout somewhere
		}
		ms = min(max(ms, 0), 60_000)
	}
	var body int64
	if st.bytesMed > 0 {
		body = int64(st.bytesMed * math.Exp(0.3*g.r.NormFloat64()))
	}
	if rt.method == "HEAD" {
		body = 0
	}
	c := &g.clients[g.zipf(nClients, 1.5)]

	b = append(b, c.addr...)
	b = append(b, " - "...)
	if rt.pattern == "/admin/banned" {
		b = append(b, "admin"...)
	} else {
		b = append(b, '-')
	}
	b = append(b, " ["...)
	b = append(b, g.timeText()...)
	b = append(b, "] \""...)
	b = append(b, rt.method...)
	b = append(b, ' ')
	b = rt.uri(g, b)
	if g.r.IntN(5) == 0 {
		b = append(b, " HTTP/2.0\" "...)
	} else {
		b = append(b, " HTTP/1.1\" "...)
	}
	b = strconv.AppendInt(b, int64(st.code), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, body, 10)
	b = append(b, " \""...)
	b = rt.referer(g, b)
	b = append(b, "\" \""...)
	b = append(b, c.ua...)
	b = append(b, "\" "...)
	b = appendMs(b, ms)
	b = append(b, ' ')
	if rt.static {
		b = append(b, '-')
	} else {
		b = appendMs(b, max(0, ms-int64(g.r.IntN(2))))
	}
	b = append(b, '\n')

	e := &g.exp[i]
	e.Count++
	e.Status[st.code/100-1]++
	e.Bytes += body
	e.TimeTotalMs += ms
	e.TimeMaxMs = max(e.TimeMaxMs, ms)
	return b
}

// next draws the route of the next request.
func (g *gen) next() int {
	if g.r.Float64() < staticShare {
		return g.statIdx[pick(g.r, g.statCum)]
	}
	return g.dynIdx[pick(g.r, g.dynCum)]
}

// advance moves the clock by an exponential gap (Poisson arrivals).
func (g *gen) advance() {
	g.now += int64(g.r.ExpFloat64() * meanGapNs)
}

// generateLog writes requests to w until at least target bytes are
// written (whole lines only) and returns what it wrote.
func generateLog(w io.Writer, seed uint64, target int64) (logMeta, error) {
	g := newGen(seed)
	m := logMeta{Generator: generatorVersion, Seed: seed, LogFormat: nginxFormat, Users: nUsers, Posts: nPosts, Devices: nDevices, Clients: nClients}
	m.FirstTime = time.Unix(0, g.now).In(g.zone)
	buf := make([]byte, 0, 256<<10)
	flush := func() error {
		_, err := w.Write(buf)
		m.Bytes += int64(len(buf))
		buf = buf[:0]
		return err
	}
	buf = g.line(buf, len(routes)) // POST /initialize
	m.Requests++
	for m.Bytes+int64(len(buf)) < target {
		g.advance()
		buf = g.line(buf, g.next())
		m.Requests++
		if len(buf) >= 255<<10 {
			if err := flush(); err != nil {
				return m, err
			}
		}
	}
	if err := flush(); err != nil {
		return m, err
	}
	m.LastTime = time.Unix(g.now/int64(time.Second), 0).In(g.zone)
	for _, e := range g.exp {
		m.TimeTotalMs += e.TimeTotalMs
		if e.Count > 0 {
			m.Endpoints = append(m.Endpoints, e)
		}
	}
	sortExpected(m.Endpoints)
	m.Learned = learnedGroups
	return m, nil
}

// sortExpected orders endpoints by count, then method and pattern.
func sortExpected(es []expectedEndpoint) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].Count != es[j].Count {
			return es[i].Count > es[j].Count
		}
		if es[i].Pattern != es[j].Pattern {
			return es[i].Pattern < es[j].Pattern
		}
		return es[i].Method < es[j].Method
	})
}

// logInfo is the access log under test.
type logInfo struct {
	path    string
	bytes   int64
	meta    logMeta
	quarter quarterInfo // the first quarter, for the memory check ("" if not wanted)
}

// quarterInfo is a prefix of the log, cut at a line end.
type quarterInfo struct {
	path     string
	bytes    int64
	requests int64
}

// readMeta reads the log's metadata, or returns false if there is none or
// it is from another generator.
func readMeta(log string, want logMeta) (logMeta, bool) {
	var m logMeta
	if !measure.ReadMeta(log, &m) {
		return logMeta{}, false
	}
	if m.Generator != want.Generator || m.Seed != want.Seed || m.SizeMiB != want.SizeMiB || m.LogFormat != want.LogFormat {
		return logMeta{}, false
	}
	if st, err := os.Stat(log); err != nil || st.Size() != m.Bytes {
		return logMeta{}, false
	}
	return m, true
}

// prepareLog returns the cached log of --size-mb and --seed, generating it
// (and its metadata) when missing or stale, and its first quarter when
// --quarter is on.
func prepareLog(cfg config, stderr io.Writer) (logInfo, error) {
	var lg logInfo
	if err := os.MkdirAll(cfg.cacheDir, 0o755); err != nil {
		return lg, fmt.Errorf("creating the cache directory: %w", err)
	}
	lg.path = filepath.Join(cfg.cacheDir, fmt.Sprintf("nginx-timed-%dMiB-seed%d.log", cfg.sizeMiB, cfg.seed))
	want := logMeta{Generator: generatorVersion, Seed: cfg.seed, SizeMiB: cfg.sizeMiB, LogFormat: nginxFormat}
	if m, ok := readMeta(lg.path, want); ok {
		fmt.Fprintf(stderr, "httpbench: reusing %s\n", lg.path)
		lg.meta = m
	} else {
		fmt.Fprintf(stderr, "httpbench: generating %s (%d MiB, seed %d)\n", lg.path, cfg.sizeMiB, cfg.seed)
		start := time.Now()
		var m logMeta
		err := measure.WriteAtomic(lg.path, func(w io.Writer) error {
			var err error
			m, err = generateLog(w, cfg.seed, int64(cfg.sizeMiB)<<20)
			return err
		})
		if err != nil {
			return lg, err
		}
		m.SizeMiB = cfg.sizeMiB
		m.GeneratedAt = time.Now().UTC().Truncate(time.Second)
		m.GenSeconds = time.Since(start).Seconds()
		if err := measure.WriteMeta(lg.path, m); err != nil {
			return lg, err
		}
		fmt.Fprintf(stderr, "httpbench: wrote %s (%.1f MiB, %s requests) in %.1fs\n", lg.path, measure.MiB(m.Bytes), measure.GroupInt(m.Requests), m.GenSeconds)
		lg.meta = m
	}
	lg.bytes = lg.meta.Bytes
	if cfg.quarter {
		q, err := ensureQuarter(lg.path, lg.bytes)
		if err != nil {
			return lg, err
		}
		lg.quarter = q
	}
	return lg, nil
}

// quarterPath names the first quarter of a log.
func quarterPath(log string) string { return log[:len(log)-len(filepath.Ext(log))] + ".quarter.log" }

// ensureQuarter writes (or reuses) the first quarter of the log, cut after
// the first line end at or past a quarter of its bytes.
func ensureQuarter(log string, size int64) (quarterInfo, error) {
	q := quarterInfo{path: quarterPath(log)}
	in, err := os.Open(log)
	if err != nil {
		return q, err
	}
	defer in.Close()
	// Count the requests as we copy; reuse a quarter of the right size,
	// counting its lines again (cheap next to the benchmark).
	write := true
	if st, err := os.Stat(q.path); err == nil && st.ModTime().After(modTime(log)) {
		write = false
	}
	var out io.Writer = io.Discard
	var bw *bufio.Writer
	var f *os.File
	if write {
		f, err = os.CreateTemp(filepath.Dir(q.path), filepath.Base(q.path)+".tmp-*")
		if err != nil {
			return q, fmt.Errorf("creating the quarter log: %w", err)
		}
		defer os.Remove(f.Name()) // a no-op after the rename
		if err := f.Chmod(0o644); err != nil {
			f.Close()
			return q, err
		}
		bw = bufio.NewWriterSize(f, 1<<20)
		out = bw
	}
	br := bufio.NewReaderSize(in, 1<<20)
	for q.bytes < size/4 {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return q, errors.New("the log has a line longer than 1 MiB")
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			q.requests++
		}
		q.bytes += int64(len(line))
		if _, werr := out.Write(line); werr != nil {
			return q, werr
		}
		if err == io.EOF {
			break
		} else if err != nil {
			return q, err
		}
	}
	if write {
		if err := bw.Flush(); err != nil {
			f.Close()
			return q, err
		}
		if err := f.Close(); err != nil {
			return q, err
		}
		if err := os.Rename(f.Name(), q.path); err != nil {
			return q, err
		}
	} else if st, err := os.Stat(q.path); err != nil || st.Size() != q.bytes {
		// A stale quarter: write it again.
		os.Remove(q.path)
		return ensureQuarter(log, size)
	}
	return q, nil
}

func modTime(path string) time.Time {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}
