package collect

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/nginxconf"
)

// Nginx is an nginx configuration, read with its includes, and the figures
// the rules need, each with nginx's default when the configuration does not
// set it. Paths in the configuration are as written (relative ones are
// relative to nginx's prefix, see ConfigureArgs).
type Nginx struct {
	// ConfPath is the absolute path of the main configuration file.
	ConfPath string `json:"conf_path"`
	// Files are every file read, the main one first.
	Files []string `json:"files"`
	// Binary, Version and ConfigureArgs come from `nginx -V` when the
	// binary is installed; they are empty otherwise.
	Binary        string   `json:"binary,omitempty"`
	Version       string   `json:"version,omitempty"` // "1.22.1"
	ConfigureArgs []string `json:"configure_args,omitempty"`
	// ConfigTest is the result of `nginx -t -c ConfPath`, when the binary
	// is installed. Not OK can also mean that the collector lacked the
	// rights nginx -t needs (to open the logs and pid file): see Output.
	ConfigTest *NginxConfigTest `json:"config_test,omitempty"`

	// Directives is the whole configuration, includes expanded, in the
	// order nginx reads it: nginxconf's Listing (nginxconf.Directive, the
	// one directive type, as plain data: the entries of types {} blocks
	// left out, the types directive kept; each with its context, file,
	// line and block's index).
	Directives nginxconf.Listing `json:"directives"`

	// Settings holds the effective value of the main, events and http
	// level directives the rules look at, keyed by name, with where it is
	// set (or nginx's default) and the servers and locations that set it
	// again. The typed fields below are derived from it.
	Settings map[string]NginxSetting `json:"settings"`

	// Workers is worker_processes with "auto" resolved to the number of
	// cores this process may run on.
	Workers            int `json:"workers"`
	WorkerConnections  int `json:"worker_connections"`
	WorkerRlimitNofile int `json:"worker_rlimit_nofile"` // 0: not set
	// Sendfile, TCPNopush and TCPNodelay are the http-level values
	// (defaults off, off, on); servers or locations may differ, see
	// Settings[name].Inner.
	Sendfile            bool               `json:"sendfile"`
	TCPNopush           bool               `json:"tcp_nopush"`
	TCPNodelay          bool               `json:"tcp_nodelay"`
	KeepaliveTimeoutSec float64            `json:"keepalive_timeout_sec"` // 0 disables client keepalive
	KeepaliveRequests   int                `json:"keepalive_requests"`
	OpenFileCache       NginxOpenFileCache `json:"open_file_cache"`
	Gzip                bool               `json:"gzip"`
	// GzipTypes are the MIME types gzip compresses; nginx always adds
	// text/html.
	GzipTypes          []string `json:"gzip_types"`
	ServerTokens       string   `json:"server_tokens"` // on, off, build
	ClientBodyTempPath string   `json:"client_body_temp_path"`

	Upstreams  []NginxUpstream  `json:"upstreams"`
	Listens    []NginxListen    `json:"listens"`
	AccessLogs []NginxAccessLog `json:"access_logs"`
	Locations  []NginxLocation  `json:"locations"`
}

// NginxConfigTest is the outcome of nginx -t.
type NginxConfigTest struct {
	OK     bool   `json:"ok"`
	Output string `json:"output"`
}

// NginxSetting is the effective value of a directive at its level (main,
// events or http).
type NginxSetting struct {
	// Value is the arguments joined by spaces, or nginx's default.
	Value string `json:"value"`
	// Default is true when the configuration does not set it at this level.
	Default bool   `json:"default,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	// Inner are the places inside the level (servers, locations) that set
	// the directive again, overriding Value there.
	Inner []NginxPlace `json:"inner,omitempty"`
}

// NginxPlace is a directive's value at one place of the configuration.
type NginxPlace struct {
	Context string `json:"context"`
	Value   string `json:"value"`
	File    string `json:"file"`
	Line    int    `json:"line"`
}

// NginxOpenFileCache is the http-level open_file_cache configuration.
type NginxOpenFileCache struct {
	Enabled     bool    `json:"enabled"`
	Max         int     `json:"max,omitempty"`
	InactiveSec float64 `json:"inactive_sec,omitempty"`
	ValidSec    float64 `json:"valid_sec"`
	MinUses     int     `json:"min_uses"`
	Errors      bool    `json:"errors"`
}

// NginxUpstream is an upstream {} block.
type NginxUpstream struct {
	Name    string                `json:"name"`
	File    string                `json:"file"`
	Line    int                   `json:"line"`
	Servers []NginxUpstreamServer `json:"servers"`
	// Keepalive is the number of idle connections each worker keeps to
	// the servers (the keepalive directive); 0: none, every request opens
	// a connection.
	Keepalive int `json:"keepalive"`
	// UsedBy are the *_pass directives that send requests to it.
	UsedBy []NginxUpstreamUse `json:"used_by"`
}

// NginxUpstreamServer is one server of an upstream.
type NginxUpstreamServer struct {
	Address string   `json:"address"` // "127.0.0.1:8080", "unix:/run/app.sock"
	Unix    bool     `json:"unix"`
	Params  []string `json:"params,omitempty"` // weight=2, max_fails=3, backup...
}

// NginxUpstreamUse is a *_pass directive naming an upstream, with the
// effective settings that decide whether the upstream's keepalive
// connections are reused.
type NginxUpstreamUse struct {
	Context   string `json:"context"`
	File      string `json:"file"`
	Line      int    `json:"line"`
	Directive string `json:"directive"` // proxy_pass, fastcgi_pass, grpc_pass...
	// HTTPVersion is the effective proxy_http_version (default "1.0").
	// It and the Connection fields are for proxy_pass, empty otherwise.
	HTTPVersion string `json:"http_version"`
	// Connection is the Connection header sent upstream, for proxy_pass:
	// the effective proxy_set_header Connection value as written, "close"
	// (nginx's own) when none applies. ConnectionValue is that value with a
	// map variable resolved for a request without the map's source header
	// (the usual `map $http_upgrade $connection_upgrade`).
	Connection      string `json:"connection"`
	ConnectionValue string `json:"connection_value"`
	// ConnectionCleared is true when ConnectionValue is empty, as upstream
	// keepalive wants.
	ConnectionCleared bool `json:"connection_cleared"`
	// KeepConn is the effective fastcgi_keep_conn, for fastcgi_pass.
	KeepConn bool `json:"keep_conn"`
	// KeepaliveReady is true when connections to the upstream can be kept
	// open from this place: HTTP/1.1 without "Connection: close" for
	// proxy_pass, fastcgi_keep_conn on for fastcgi_pass, always for
	// grpc_pass and never for uwsgi_pass and scgi_pass.
	KeepaliveReady bool `json:"keepalive_ready"`
}

// NginxListen is one listening socket of a server.
type NginxListen struct {
	Context    string   `json:"context"` // "http>server", "stream>server"
	ServerName []string `json:"server_name,omitempty"`
	File       string   `json:"file,omitempty"`
	Line       int      `json:"line,omitempty"`
	// Implicit is true for a server without listen, which nginx makes
	// listen on *:80 (*:8000 when not run as root).
	Implicit bool   `json:"implicit,omitempty"`
	Address  string `json:"address"` // "*", "127.0.0.1", "[::]", or the socket path
	Port     int    `json:"port,omitempty"`
	Unix     bool   `json:"unix,omitempty"`
	// Backlog is the listen queue asked for (the kernel caps it at
	// net.core.somaxconn); BacklogDefault is true when it is nginx's
	// default, 511.
	Backlog        int  `json:"backlog"`
	BacklogDefault bool `json:"backlog_default,omitempty"`
	Reuseport      bool `json:"reuseport,omitempty"`
	// HTTP2 is the listen parameter, or `http2 on` in the server.
	HTTP2         bool `json:"http2,omitempty"`
	SSL           bool `json:"ssl,omitempty"`
	Fastopen      int  `json:"fastopen,omitempty"`
	DefaultServer bool `json:"default_server,omitempty"`
	Deferred      bool `json:"deferred,omitempty"`
}

// NginxAccessLog is an access_log directive of the http context.
type NginxAccessLog struct {
	Context string `json:"context"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	// Default is true for nginx's own access log, used when the http
	// level sets none.
	Default bool   `json:"default,omitempty"`
	Off     bool   `json:"off,omitempty"`
	Path    string `json:"path,omitempty"`
	Syslog  bool   `json:"syslog,omitempty"`
	// Format is the log_format name ("combined" by default), FormatText
	// its definition (nginxconf's LogFormat: empty when the configuration
	// does not define it, or defines a name twice, which nginx refuses).
	Format     string `json:"format,omitempty"`
	FormatText string `json:"format_text,omitempty"`
	// RequestTime and UpstreamResponseTime tell whether the format logs
	// $request_time and $upstream_response_time; combined logs neither.
	RequestTime          bool   `json:"request_time"`
	UpstreamResponseTime bool   `json:"upstream_response_time"`
	Buffer               string `json:"buffer,omitempty"`
	Gzip                 bool   `json:"gzip,omitempty"`
	If                   string `json:"if,omitempty"`
	// Args are the directive's arguments as written (empty for nginx's
	// own default).
	Args []string `json:"args,omitempty"`

	// RequestLength tells whether the format logs $request_length, the
	// bytes of each request, its body included.
	RequestLength bool `json:"request_length,omitempty"`
}

// NginxLocation is a location block of an http server.
type NginxLocation struct {
	Context    string   `json:"context"`
	Match      string   `json:"match"` // "/api/", "= /healthcheck", "~ \\.php$", "@app"
	ServerName []string `json:"server_name,omitempty"`
	File       string   `json:"file"`
	Line       int      `json:"line"`
	// Kind is what answers: "static" (files under Root or Alias, maybe
	// through try_files), "proxy", "fastcgi", "uwsgi", "scgi", "grpc",
	// "memcached" (the *_pass directives), "return", "empty_gif",
	// "stub_status", or "nested" (only nested locations).
	Kind string `json:"kind"`
	// Pass is the *_pass target; Upstream the upstream block it names, if
	// any; Unix is true when it is a unix socket.
	Pass     string `json:"pass,omitempty"`
	Upstream string `json:"upstream,omitempty"`
	Unix     bool   `json:"unix,omitempty"`
	// Root or Alias is where static files come from (set here or
	// inherited; root "html" by default), TryFiles the location's
	// try_files.
	Root     string `json:"root,omitempty"`
	Alias    string `json:"alias,omitempty"`
	TryFiles string `json:"try_files,omitempty"`
	Expires  string `json:"expires,omitempty"`
	// AccessLogOff is true when requests here are not logged.
	AccessLogOff bool `json:"access_log_off,omitempty"`
}

// nginxCommandTimeout bounds nginx -V and nginx -t.
const nginxCommandTimeout = 10 * time.Second

type nginxCollector struct {
	conf string
	bin  string
	// testArgs are added to nginx -t (tests: -p and -e).
	testArgs []string
	// cores resolves worker_processes auto; 0 means runtime.NumCPU().
	cores int
}

// NewNginx returns the collector of the nginx configuration at confPath
// ("" means the binary's --conf-path, or /etc/nginx/nginx.conf). It only
// reads files, except that when the nginx binary is installed it runs
// nginx -V and nginx -t -c confPath; nginx -t opens (and so may create)
// the log files the configuration names, as nginx does at start.
func NewNginx(confPath string) Collector {
	c := &nginxCollector{conf: confPath}
	for _, p := range []string{"nginx", "/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"} {
		if bin, err := exec.LookPath(p); err == nil {
			c.bin = bin
			break
		}
	}
	return c
}

func (c *nginxCollector) Name() string { return "nginx" }

func (c *nginxCollector) Collect(ctx context.Context, s *Snapshot) error {
	n := &Nginx{}
	if c.bin != "" {
		n.Binary = c.bin
		cctx, cancel := context.WithTimeout(ctx, nginxCommandTimeout)
		out, _ := exec.CommandContext(cctx, c.bin, "-V").CombinedOutput()
		cancel()
		b := nginxconf.ParseBuild(string(out))
		n.Version, n.ConfigureArgs = b.Version, b.ConfigureArgs
	}
	conf := c.conf
	if conf == "" {
		conf = n.build().Arg("--conf-path", "/etc/nginx/nginx.conf")
	}
	if abs, err := filepath.Abs(conf); err == nil {
		conf = abs
	}
	if err := n.read(conf, c.cores); err != nil {
		return err
	}
	if c.bin != "" {
		cctx, cancel := context.WithTimeout(ctx, nginxCommandTimeout)
		args := append([]string{"-t", "-c", conf}, c.testArgs...)
		out, err := exec.CommandContext(cctx, c.bin, args...).CombinedOutput()
		cancel()
		text := strings.TrimSpace(string(out))
		if len(text) > 4096 {
			text = text[:4096] + "..."
		}
		if err != nil && text == "" {
			text = err.Error()
		}
		n.ConfigTest = &NginxConfigTest{OK: err == nil, Output: text}
	}
	s.Nginx = n
	return nil
}

// nginxConf is a configuration as the figures are read from it:
// nginxconf's tree, which answers every question about blocks and
// inherited values, its directives, and the blocks of the levels.
type nginxConf struct {
	cfg *nginxconf.Config
	// listed are the configuration's directives in reading order.
	listed []*nginxconf.Directive
	// http is the http block, nil when the configuration has none.
	http *nginxconf.Directive
}

// read parses the configuration at conf into n and derives its figures.
func (n *Nginx) read(conf string, cores int) error {
	cfg, err := nginxconf.Load(conf)
	if err != nil {
		return err
	}
	n.ConfPath = conf
	n.Files = cfg.Paths()
	c := &nginxConf{cfg: cfg, http: cfg.Block(nginxconf.LevelHTTP)}
	n.Directives, c.listed = cfg.Listing(), cfg.Directives()
	if cores <= 0 {
		cores = runtime.NumCPU()
	}
	n.derive(c, cores)
	return nil
}

// derive fills the settings and figures from the configuration.
func (n *Nginx) derive(c *nginxConf, cores int) {
	n.Settings = map[string]NginxSetting{}
	for _, d := range nginxconf.Defaults(n.build()) {
		n.Settings[d.Name] = c.setting(c.cfg.Block(d.Level), d.Name, d.Value)
	}
	n.deriveWorkers(cores)
	n.deriveSockets()
	n.deriveClientKeepalive()
	n.deriveOpenFileCache()
	n.deriveGzip()
	n.ServerTokens = n.value("server_tokens")
	if f := strings.Fields(n.value("client_body_temp_path")); len(f) > 0 {
		n.ClientBodyTempPath = f[0]
	}
	n.derivePlaces(c)
}

// setting is what the block of a level sets for name (the last such
// directive in it, or def when it sets none or the configuration has no
// such block), with the places inside an events or http block that set
// it again.
func (c *nginxConf) setting(b *nginxconf.Directive, name, def string) NginxSetting {
	s := NginxSetting{Value: def, Default: true}
	if b == nil {
		return s
	}
	if d := nginxLast(b.ChildrenNamed(name)); d != nil {
		s = NginxSetting{Value: strings.Join(d.Args(), " "), File: d.File(), Line: d.Line()}
	}
	if b == c.cfg.Main() {
		return s
	}
	for _, d := range c.cfg.Overrides(b, name) {
		s.Inner = append(s.Inner, NginxPlace{Context: d.Parent().Path(), Value: strings.Join(d.Args(), " "), File: d.File(), Line: d.Line()})
	}
	return s
}

// build is the binary's version and configure arguments, as nginxconf
// reads them.
func (n *Nginx) build() nginxconf.Build {
	return nginxconf.Build{Version: n.Version, ConfigureArgs: n.ConfigureArgs}
}

// value is the value of a setting of Settings.
func (n *Nginx) value(name string) string { return n.Settings[name].Value }

// deriveWorkers fills the worker figures: processes ("auto" is cores),
// connections per worker, and the file limit per worker.
func (n *Nginx) deriveWorkers(cores int) {
	if v := n.value("worker_processes"); v == "auto" {
		n.Workers = cores
	} else {
		n.Workers, _ = strconv.Atoi(v)
	}
	n.WorkerConnections, _ = strconv.Atoi(n.value("worker_connections"))
	n.WorkerRlimitNofile, _ = strconv.Atoi(n.value("worker_rlimit_nofile"))
}

// deriveSockets fills how responses are written to client sockets:
// sendfile, tcp_nopush, tcp_nodelay.
func (n *Nginx) deriveSockets() {
	n.Sendfile = n.value("sendfile") == "on"
	n.TCPNopush = n.value("tcp_nopush") == "on"
	n.TCPNodelay = n.value("tcp_nodelay") == "on"
}

// deriveClientKeepalive fills how long and for how many requests a
// client connection stays open.
func (n *Nginx) deriveClientKeepalive() {
	if f := strings.Fields(n.value("keepalive_timeout")); len(f) > 0 {
		n.KeepaliveTimeoutSec, _ = nginxconf.ParseSeconds(f[0])
	}
	n.KeepaliveRequests, _ = strconv.Atoi(n.value("keepalive_requests"))
}

// deriveOpenFileCache fills OpenFileCache from open_file_cache (on with
// max=, inactive 60s unless given) and its companions.
func (n *Nginx) deriveOpenFileCache() {
	n.OpenFileCache = NginxOpenFileCache{MinUses: 1, ValidSec: 60}
	for _, a := range strings.Fields(n.value("open_file_cache")) {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "max":
			n.OpenFileCache.Enabled = true
			n.OpenFileCache.Max, _ = strconv.Atoi(v)
			if n.OpenFileCache.InactiveSec == 0 {
				n.OpenFileCache.InactiveSec = 60
			}
		case "inactive":
			n.OpenFileCache.InactiveSec, _ = nginxconf.ParseSeconds(v)
		}
	}
	n.OpenFileCache.ValidSec, _ = nginxconf.ParseSeconds(n.value("open_file_cache_valid"))
	n.OpenFileCache.MinUses, _ = strconv.Atoi(n.value("open_file_cache_min_uses"))
	n.OpenFileCache.Errors = n.value("open_file_cache_errors") == "on"
}

// deriveGzip fills Gzip and the types it compresses, text/html always
// among them.
func (n *Nginx) deriveGzip() {
	n.Gzip = n.value("gzip") == "on"
	n.GzipTypes = strings.Fields(n.value("gzip_types"))
	if !nginxHas(n.GzipTypes, "text/html") && !nginxHas(n.GzipTypes, "*") {
		n.GzipTypes = append([]string{"text/html"}, n.GzipTypes...)
	}
}

// derivePlaces fills the lists of places: upstreams, listening sockets,
// access logs and locations (only the stream servers' sockets without an
// http block).
func (n *Nginx) derivePlaces(c *nginxConf) {
	n.Upstreams = []NginxUpstream{}
	n.Listens = []NginxListen{}
	n.AccessLogs = []NginxAccessLog{}
	n.Locations = []NginxLocation{}
	if c.http == nil {
		n.streamListens(c)
		return
	}
	n.upstreams(c)
	n.listens(c)
	n.accessLogs(c)
	n.locations(c)
}

func nginxHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// upstreams fills Upstreams (nginxconf's) and the places using each.
func (n *Nginx) upstreams(c *nginxConf) {
	byName := map[string]int{}
	for _, u := range c.cfg.Upstreams() {
		up := NginxUpstream{Name: u.Name, File: u.Block.File(), Line: u.Block.Line(), Servers: []NginxUpstreamServer{}, UsedBy: []NginxUpstreamUse{}, Keepalive: u.Keepalive}
		for _, s := range u.Servers {
			up.Servers = append(up.Servers, NginxUpstreamServer{Address: s.Address, Unix: s.Unix, Params: s.Params})
		}
		byName[up.Name] = len(n.Upstreams)
		n.Upstreams = append(n.Upstreams, up)
	}
	for _, d := range c.listed {
		if _, ok := nginxconf.PassKind(d.Name()); !ok || len(d.Args()) == 0 || !d.Within(c.http) {
			continue
		}
		host, _ := nginxconf.PassTarget(d.Args()[0])
		if ui, ok := byName[host]; ok {
			n.Upstreams[ui].UsedBy = append(n.Upstreams[ui].UsedBy, c.upstreamUse(d))
		}
	}
}

// nginxLast is the last of ds, or nil.
func nginxLast(ds []*nginxconf.Directive) *nginxconf.Directive {
	if len(ds) == 0 {
		return nil
	}
	return ds[len(ds)-1]
}

// upstreamUse is the *_pass directive d naming an upstream, with the
// values that apply where it is and decide whether the upstream's
// connections are kept open.
func (c *nginxConf) upstreamUse(d *nginxconf.Directive) NginxUpstreamUse {
	at := d.Parent()
	use := NginxUpstreamUse{Context: at.Path(), File: d.File(), Line: d.Line(), Directive: d.Name()}
	switch d.Name() {
	case "proxy_pass":
		use.HTTPVersion = c.value(at, "proxy_http_version", "1.0")
		use.Connection, use.ConnectionValue = "close", "close"
		for _, h := range c.cfg.Effective(at, "proxy_set_header") {
			if args := h.Args(); len(args) >= 2 && strings.EqualFold(args[0], "Connection") {
				use.Connection = args[1]
				use.ConnectionValue = c.cfg.MapDefault(args[1])
			}
		}
		use.ConnectionCleared = use.ConnectionValue == ""
		use.KeepaliveReady = use.HTTPVersion == "1.1" && !strings.EqualFold(use.ConnectionValue, "close")
	case "fastcgi_pass":
		use.KeepConn = c.value(at, "fastcgi_keep_conn", "off") == "on"
		use.KeepaliveReady = use.KeepConn
	case "grpc_pass":
		use.KeepaliveReady = true
	case "memcached_pass":
		use.KeepaliveReady = true
	}
	return use
}

// value is the value (arguments joined by spaces) of the directive name
// that applies in block, or def.
func (c *nginxConf) value(block *nginxconf.Directive, name, def string) string {
	if args, ok := c.cfg.Value(block, name); ok {
		return strings.Join(args, " ")
	}
	return def
}

// serverNames returns the server_name of the server block that is or
// holds d.
func (c *nginxConf) serverNames(d *nginxconf.Directive) []string {
	if srv := d.Enclosing("server"); srv != nil {
		args, _ := c.cfg.Value(srv, "server_name")
		return args
	}
	return nil
}

// listens fills Listens from the http servers, then the stream servers.
func (n *Nginx) listens(c *nginxConf) {
	for _, srv := range c.http.ChildrenNamed("server") {
		if !srv.IsBlock() {
			continue
		}
		http2 := false
		if k := nginxLast(srv.ChildrenNamed("http2")); k != nil && len(k.Args()) > 0 {
			http2 = k.Args()[0] == "on"
		}
		ls := srv.ChildrenNamed("listen")
		if len(ls) == 0 {
			n.Listens = append(n.Listens, NginxListen{
				Context: "http>server", ServerName: c.serverNames(srv), File: srv.File(), Line: srv.Line(),
				Implicit: true, Address: "*", Port: 80, Backlog: nginxconf.DefaultBacklog, BacklogDefault: true, HTTP2: http2,
			})
		}
		for _, k := range ls {
			if l, ok := nginxListenOf(k); ok {
				l.ServerName = c.serverNames(srv)
				l.HTTP2 = l.HTTP2 || http2
				n.Listens = append(n.Listens, l)
			}
		}
	}
	n.streamListens(c)
}

// streamListens adds the listening sockets of the stream servers.
func (n *Nginx) streamListens(c *nginxConf) {
	for _, st := range c.cfg.Main().ChildrenNamed("stream") {
		if !st.IsBlock() {
			continue
		}
		for _, srv := range st.ChildrenNamed("server") {
			for _, k := range srv.ChildrenNamed("listen") {
				if l, ok := nginxListenOf(k); ok {
					n.Listens = append(n.Listens, l)
				}
			}
		}
	}
}

// nginxListenOf reads the listen directive d (nginxconf.ParseListen), in
// its place.
func nginxListenOf(d *nginxconf.Directive) (NginxListen, bool) {
	p, ok := nginxconf.ParseListen(d.Args())
	if !ok {
		return NginxListen{}, false
	}
	return NginxListen{
		Context: d.Parent().Path(), File: d.File(), Line: d.Line(),
		Address: p.Address, Port: p.Port, Unix: p.Unix, Backlog: p.Backlog, BacklogDefault: p.BacklogDefault,
		Reuseport: p.Reuseport, HTTP2: p.HTTP2, SSL: p.SSL, Fastopen: p.Fastopen, DefaultServer: p.DefaultServer, Deferred: p.Deferred,
	}, true
}

// formatText is the text of the log_format name (nginxconf's LogFormat,
// the lookup the access-log profiler uses too): "" when the
// configuration does not define it, or defines a name twice (nginx
// refuses that; ConfigTest says so).
func (c *nginxConf) formatText(name string) string {
	f, err := c.cfg.LogFormat(name)
	if err != nil {
		return ""
	}
	return f
}

// accessLogs fills AccessLogs: every access_log in http, and nginx's own
// when the http level sets none.
func (n *Nginx) accessLogs(c *nginxConf) {
	if len(c.http.ChildrenNamed("access_log")) == 0 {
		l := NginxAccessLog{Context: "http", Default: true, Path: n.build().Arg("--http-log-path", "logs/access.log"), Format: "combined"}
		l.setFormat(c.formatText("combined"))
		n.AccessLogs = append(n.AccessLogs, l)
	}
	for _, d := range c.listed {
		if d.Name() == "access_log" && len(d.Args()) > 0 && d.Within(c.http) {
			n.AccessLogs = append(n.AccessLogs, c.accessLog(d))
		}
	}
}

// setFormat sets the log's format text and the timings it records.
func (l *NginxAccessLog) setFormat(text string) {
	l.FormatText = text
	l.RequestTime = nginxconf.UsesVariable(text, "request_time")
	l.UpstreamResponseTime = nginxconf.UsesVariable(text, "upstream_response_time")
	l.RequestLength = nginxconf.UsesVariable(text, "request_length")
}

// accessLog reads the access_log directive d (nginxconf.ParseAccessLog):
// off, or a path with its format (looked up by formatText) and
// parameters.
func (c *nginxConf) accessLog(d *nginxconf.Directive) NginxAccessLog {
	args := d.Args()
	l := NginxAccessLog{Context: d.Parent().Path(), File: d.File(), Line: d.Line(), Args: args}
	a, _ := nginxconf.ParseAccessLog(args)
	if a.Off {
		l.Off = true
		return l
	}
	l.Path, l.Syslog, l.Format, l.Buffer, l.Gzip, l.If = a.Path, a.Syslog, a.Format, a.Buffer, a.Gzip, a.If
	l.setFormat(c.formatText(l.Format))
	return l
}

// locations fills Locations with the locations of http servers, nested
// ones included.
func (n *Nginx) locations(c *nginxConf) {
	for _, d := range c.listed {
		if d.Name() == "location" && d.IsBlock() && d.Within(c.http) {
			n.Locations = append(n.Locations, n.location(c, d))
		}
	}
}

// location reads the location block d: what answers there, and the
// values it has or inherits.
func (n *Nginx) location(c *nginxConf, d *nginxconf.Directive) NginxLocation {
	l := NginxLocation{Context: d.Parent().Path(), Match: strings.Join(d.Args(), " "), ServerName: c.serverNames(d), File: d.File(), Line: d.Line()}
	for _, k := range d.Children() {
		args := k.Args()
		if kind, ok := nginxconf.PassKind(k.Name()); ok && len(args) > 0 {
			l.Kind, l.Pass = kind, args[0]
			up, unix := n.passUpstream(args[0])
			if l.Unix = unix; up != "" {
				l.Upstream = up
			}
		}
		switch k.Name() {
		case "return", "empty_gif", "stub_status":
			if l.Kind == "" {
				l.Kind = k.Name()
			}
		case "alias":
			l.Alias = strings.Join(args, " ")
		case "try_files":
			l.TryFiles = strings.Join(args, " ")
		case "expires":
			l.Expires = strings.Join(args, " ")
		}
	}
	if l.Kind == "" {
		l.Kind = "static"
		if len(d.ChildrenNamed("location")) > 0 && len(d.ChildrenNamed("root")) == 0 && l.Alias == "" && l.TryFiles == "" {
			l.Kind = "nested"
		}
	}
	if l.Kind == "static" && l.Alias == "" {
		l.Root, l.Alias = "html", ""
		if r := nginxLast(c.cfg.Effective(d, "root")); r != nil {
			l.Root, l.Alias = "", ""
			if r.Name() == "root" {
				l.Root = r.Args()[0]
			} else {
				l.Alias = r.Args()[0]
			}
		}
	}
	for _, k := range c.cfg.Effective(d, "access_log") {
		if args := k.Args(); len(args) > 0 && args[0] == "off" {
			l.AccessLogOff = true
		}
	}
	return l
}

// passUpstream returns the upstream block a *_pass target names ("" for
// none) and whether requests go over unix sockets: the target's own, or
// every server of the upstream.
func (n *Nginx) passUpstream(target string) (upstream string, unix bool) {
	host, unix := nginxconf.PassTarget(target)
	for _, u := range n.Upstreams {
		if u.Name == host {
			upstream = host
			unix = len(u.Servers) > 0
			for _, s := range u.Servers {
				unix = unix && s.Unix
			}
		}
	}
	return upstream, unix
}
