package collect

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/internal/bytesconv"
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
	// order nginx reads it. The entries of types {} blocks (MIME types,
	// usually from mime.types) are left out; the types directive is kept.
	Directives []NginxDirective `json:"directives"`

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

// NginxDirective is one directive of the configuration as the snapshot
// lists it: plain data, read from nginxconf's tree (nginxconf.Directive).
type NginxDirective struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
	// Context is the path of enclosing blocks, "" at the top level:
	// "http>server>location /api".
	Context string `json:"context"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	// Block is true for a directive that opens a block.
	Block bool `json:"block,omitempty"`
	// Parent is the index in Directives of the enclosing block directive,
	// -1 at the top level; it tells two servers with the same Context
	// apart.
	Parent int `json:"parent"`
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
	// its definition (empty when the configuration does not define it).
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

// nginxDefaultBacklog is NGX_LISTEN_BACKLOG on Linux.
const nginxDefaultBacklog = 511

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
		n.Version, n.ConfigureArgs = parseNginxV(string(out))
	}
	conf := c.conf
	if conf == "" {
		conf = nginxConfigureArg(n.ConfigureArgs, "--conf-path", "/etc/nginx/nginx.conf")
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

// parseNginxV reads the version and configure arguments from nginx -V.
func parseNginxV(out string) (version string, args []string) {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "nginx version: "); ok {
			_, version, _ = strings.Cut(strings.TrimSpace(v), "/")
		}
		if a, ok := strings.CutPrefix(line, "configure arguments:"); ok {
			args = nginxSplitWords(a)
		}
	}
	return version, args
}

// nginxSplitWords splits on blanks outside single or double quotes,
// removing the quotes.
func nginxSplitWords(s string) []string {
	var words []string
	var b strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
			b.WriteByte(ch)
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, b.String())
	}
	return words
}

// nginxConfigureArg returns the value of --name=value in args, or def.
func nginxConfigureArg(args []string, name, def string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return def
}

// nginxVersionAtLeast compares dotted versions; an unknown version counts as
// recent.
func nginxVersionAtLeast(v string, want ...int) bool {
	if v == "" {
		return true
	}
	parts := strings.Split(v, ".")
	for i, w := range want {
		if i >= len(parts) {
			return false
		}
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return true
		}
		if n != w {
			return n > w
		}
	}
	return true
}

// nginxConf is a configuration as the figures are read from it:
// nginxconf's tree, which answers every question about blocks and
// inherited values, the directives the snapshot lists, and the blocks of
// the levels.
type nginxConf struct {
	cfg *nginxconf.Config
	// listed are the directives of Nginx.Directives, in the same order.
	listed []*nginxconf.Directive
	// events and http are the events and http blocks, nil when the
	// configuration has none.
	events, http *nginxconf.Directive
}

// read parses the configuration at conf into n and derives its figures.
func (n *Nginx) read(conf string, cores int) error {
	cfg, err := nginxconf.Load(conf)
	if err != nil {
		return err
	}
	n.ConfPath = conf
	n.Files = cfg.Paths()
	c := &nginxConf{cfg: cfg}
	n.Directives, c.listed = nginxListing(cfg)
	for _, d := range cfg.Main().Children() {
		switch {
		case !d.IsBlock():
		case d.Name() == "events":
			c.events = d // nginx refuses a second; the last counts
		case d.Name() == "http" && c.http == nil:
			c.http = d
		}
	}
	if cores <= 0 {
		cores = runtime.NumCPU()
	}
	n.derive(c, cores)
	return nil
}

// nginxListing lists the directives of cfg for the snapshot in reading
// order, each with its context and its block's index in the list. The
// entries of types {} blocks (MIME types, usually from mime.types) are
// left out; the types directive is kept.
func nginxListing(cfg *nginxconf.Config) ([]NginxDirective, []*nginxconf.Directive) {
	var out []NginxDirective
	var listed []*nginxconf.Directive
	index := map[*nginxconf.Directive]int{cfg.Main(): -1} // the blocks listed
	// Directives of one block share its context: joined once per block,
	// so deep configurations cost memory per block, not per directive.
	contexts := map[*nginxconf.Directive]string{}
	for d := range cfg.Main().Descendants() {
		b := d.Parent()
		parent, ok := index[b]
		if !ok || b.Name() == "types" {
			continue // inside a types {} block
		}
		ctx, ok := contexts[b]
		if !ok {
			ctx = b.Path()
			contexts[b] = ctx
		}
		args := d.Args()
		if args == nil {
			args = []string{}
		}
		if d.IsBlock() {
			index[d] = len(out)
		}
		out = append(out, NginxDirective{
			Name: d.Name(), Args: args, Context: ctx,
			File: d.File(), Line: d.Line(), Block: d.IsBlock(), Parent: parent,
		})
		listed = append(listed, d)
	}
	return out, listed
}

// derive fills the settings and figures from the configuration.
func (n *Nginx) derive(c *nginxConf, cores int) {
	n.Settings = map[string]NginxSetting{}
	for _, s := range c.settings(n.Version, n.ConfigureArgs) {
		n.Settings[s.name] = c.setting(s.block, s.name, s.def)
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

// nginxSetting is a setting the rules read: the block of its level (the
// main context, the events or the http block; nil when the configuration
// has none), its name and nginx's default.
type nginxSetting struct {
	block     *nginxconf.Directive
	name, def string
}

// settings are the settings of Nginx.Settings, with the defaults of the
// nginx version (recent when unknown) and of its build.
func (c *nginxConf) settings(version string, configureArgs []string) []nginxSetting {
	keepaliveRequests := "1000"
	if !nginxVersionAtLeast(version, 1, 19, 10) {
		keepaliveRequests = "100"
	}
	sendfileMaxChunk := "2m"
	if !nginxVersionAtLeast(version, 1, 21, 4) {
		sendfileMaxChunk = "0"
	}
	acceptMutex := "off"
	if !nginxVersionAtLeast(version, 1, 11, 3) {
		acceptMutex = "on"
	}
	main, events, http := c.cfg.Main(), c.events, c.http
	return []nginxSetting{
		{main, "worker_processes", "1"},
		{main, "worker_rlimit_nofile", ""},
		{main, "worker_cpu_affinity", ""},
		{main, "pcre_jit", "off"},
		{events, "worker_connections", "512"},
		{events, "multi_accept", "off"},
		{events, "accept_mutex", acceptMutex},
		{events, "accept_mutex_delay", "500ms"},
		{events, "use", ""},
		{http, "sendfile", "off"},
		{http, "sendfile_max_chunk", sendfileMaxChunk},
		{http, "tcp_nopush", "off"},
		{http, "tcp_nodelay", "on"},
		{http, "keepalive_timeout", "75s"},
		{http, "keepalive_requests", keepaliveRequests},
		{http, "reset_timedout_connection", "off"},
		{http, "open_file_cache", "off"},
		{http, "open_file_cache_valid", "60s"},
		{http, "open_file_cache_min_uses", "1"},
		{http, "open_file_cache_errors", "off"},
		{http, "gzip", "off"},
		{http, "gzip_types", "text/html"},
		{http, "gzip_comp_level", "1"},
		{http, "gzip_min_length", "20"},
		{http, "gzip_static", "off"},
		{http, "server_tokens", "on"},
		{http, "client_body_temp_path", nginxConfigureArg(configureArgs, "--http-client-body-temp-path", "client_body_temp")},
		{http, "client_body_buffer_size", "16k"},
		{http, "client_max_body_size", "1m"},
		{http, "proxy_buffering", "on"},
		{http, "proxy_http_version", "1.0"},
		{http, "etag", "on"},
	}
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
		n.KeepaliveTimeoutSec, _ = nginxSeconds(f[0])
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
			n.OpenFileCache.InactiveSec, _ = nginxSeconds(v)
		}
	}
	n.OpenFileCache.ValidSec, _ = nginxSeconds(n.value("open_file_cache_valid"))
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

// nginxSeconds parses an nginx time ("65", "75s", "1m", "500ms", "1h30m").
func nginxSeconds(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	units := map[string]float64{"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "M": 2592000, "y": 31536000}
	total := 0.0
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, false
		}
		v, _ := strconv.Atoi(s[:i])
		s = s[i:]
		j := 0
		for j < len(s) && (s[j] < '0' || s[j] > '9') && s[j] != ' ' {
			j++
		}
		unit := s[:j]
		s = strings.TrimLeft(s[j:], " ")
		if unit == "" {
			unit = "s"
		}
		m, ok := units[unit]
		if !ok {
			return 0, false
		}
		total += float64(v) * m
	}
	return total, true
}

// nginxPassDirectives are the directives handing a request to another server,
// with the location kind they make.
var nginxPassDirectives = map[string]string{
	"proxy_pass":     "proxy",
	"fastcgi_pass":   "fastcgi",
	"uwsgi_pass":     "uwsgi",
	"scgi_pass":      "scgi",
	"grpc_pass":      "grpc",
	"memcached_pass": "memcached",
}

// nginxPassTarget splits a *_pass argument into the host part (an upstream
// name when one matches) and whether it is a unix socket.
func nginxPassTarget(arg string) (host string, unix bool) {
	rest := arg
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if strings.HasPrefix(rest, "unix:") {
		return "", true
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return rest, false
}

// upstreams fills Upstreams and the places using each.
func (n *Nginx) upstreams(c *nginxConf) {
	byName := map[string]int{}
	for _, u := range c.http.ChildrenNamed("upstream") {
		args := u.Args()
		if !u.IsBlock() || len(args) == 0 {
			continue
		}
		up := NginxUpstream{Name: args[0], File: u.File(), Line: u.Line(), Servers: []NginxUpstreamServer{}, UsedBy: []NginxUpstreamUse{}}
		for _, s := range u.ChildrenNamed("server") {
			if args := s.Args(); len(args) > 0 {
				up.Servers = append(up.Servers, NginxUpstreamServer{Address: args[0], Unix: strings.HasPrefix(args[0], "unix:"), Params: args[1:]})
			}
		}
		if ka := nginxLast(u.ChildrenNamed("keepalive")); ka != nil && len(ka.Args()) > 0 {
			up.Keepalive, _ = strconv.Atoi(ka.Args()[0])
		}
		byName[up.Name] = len(n.Upstreams)
		n.Upstreams = append(n.Upstreams, up)
	}
	for _, d := range c.listed {
		if _, ok := nginxPassDirectives[d.Name()]; !ok || len(d.Args()) == 0 || !d.Within(c.http) {
			continue
		}
		host, _ := nginxPassTarget(d.Args()[0])
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
				use.ConnectionValue = c.resolveMap(args[1])
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

// resolveMap returns the value a header value has for a request without the
// header a map reads: a value that is exactly a variable set by a map block
// takes that map's "" entry, else its default, else "". Anything else is
// returned as is.
func (c *nginxConf) resolveMap(v string) string {
	if !strings.HasPrefix(v, "$") || strings.ContainsAny(v[1:], "$ ") {
		return v
	}
	name := strings.Trim(v, "${}")
	for _, m := range c.http.ChildrenNamed("map") {
		args := m.Args()
		if !m.IsBlock() || len(args) != 2 || strings.Trim(args[1], "${}") != name {
			continue
		}
		var empty, def *nginxconf.Directive
		for _, e := range m.Children() {
			switch e.Name() {
			case "":
				empty = e
			case "default":
				def = e
			}
		}
		for _, e := range []*nginxconf.Directive{empty, def} {
			if e != nil && len(e.Args()) > 0 {
				return e.Args()[0]
			}
		}
		return ""
	}
	return v
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
				Implicit: true, Address: "*", Port: 80, Backlog: nginxDefaultBacklog, BacklogDefault: true, HTTP2: http2,
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

// nginxListenOf reads the listen directive d, in its place.
func nginxListenOf(d *nginxconf.Directive) (NginxListen, bool) {
	l, ok := nginxParseListen(d.Args())
	if ok {
		l.Context, l.File, l.Line = d.Parent().Path(), d.File(), d.Line()
	}
	return l, ok
}

// nginxParseListen reads the arguments of a listen directive.
func nginxParseListen(args []string) (NginxListen, bool) {
	if len(args) == 0 {
		return NginxListen{}, false
	}
	l := NginxListen{Backlog: nginxDefaultBacklog, BacklogDefault: true}
	addr := args[0]
	switch {
	case strings.HasPrefix(addr, "unix:"):
		l.Address, l.Unix = strings.TrimPrefix(addr, "unix:"), true
	case bytesconv.IsDigits(addr):
		l.Address = "*"
		l.Port, _ = strconv.Atoi(addr)
	default:
		host, port := addr, ""
		if strings.HasPrefix(addr, "[") {
			if i := strings.Index(addr, "]"); i >= 0 {
				host, port = addr[:i+1], strings.TrimPrefix(addr[i+1:], ":")
			}
		} else if i := strings.LastIndexByte(addr, ':'); i >= 0 {
			host, port = addr[:i], addr[i+1:]
		}
		l.Address = host
		l.Port = 80
		if port != "" {
			l.Port, _ = strconv.Atoi(port)
		}
	}
	for _, p := range args[1:] {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "backlog":
			if b, err := strconv.Atoi(v); err == nil {
				l.Backlog, l.BacklogDefault = b, false
			}
		case "reuseport":
			l.Reuseport = true
		case "http2":
			l.HTTP2 = true
		case "ssl":
			l.SSL = true
		case "fastopen":
			l.Fastopen, _ = strconv.Atoi(v)
		case "default_server", "default":
			l.DefaultServer = true
		case "deferred":
			l.Deferred = true
		}
	}
	return l, true
}

// logFormats returns the http-level log_format texts by name, with
// nginx's own combined unless the configuration defines it.
func (c *nginxConf) logFormats() map[string]string {
	formats := map[string]string{}
	for _, k := range c.http.ChildrenNamed("log_format") {
		args := k.Args()
		if len(args) < 2 {
			continue
		}
		parts := args[1:]
		if strings.HasPrefix(parts[0], "escape=") {
			parts = parts[1:]
		}
		formats[args[0]] = strings.Join(parts, "")
	}
	if _, ok := formats["combined"]; !ok {
		formats["combined"] = accesslog.Combined
	}
	return formats
}

// accessLogs fills AccessLogs: every access_log in http, and nginx's own
// when the http level sets none.
func (n *Nginx) accessLogs(c *nginxConf) {
	formats := c.logFormats()
	if len(c.http.ChildrenNamed("access_log")) == 0 {
		l := NginxAccessLog{Context: "http", Default: true, Path: nginxConfigureArg(n.ConfigureArgs, "--http-log-path", "logs/access.log"), Format: "combined"}
		l.FormatText = formats["combined"]
		l.RequestTime = nginxHasVariable(l.FormatText, "request_time")
		l.UpstreamResponseTime = nginxHasVariable(l.FormatText, "upstream_response_time")
		n.AccessLogs = append(n.AccessLogs, l)
	}
	for _, d := range c.listed {
		if d.Name() == "access_log" && len(d.Args()) > 0 && d.Within(c.http) {
			n.AccessLogs = append(n.AccessLogs, nginxAccessLog(d, formats))
		}
	}
}

// nginxAccessLog reads the access_log directive d: off, or a path with
// its format (combined by default, looked up in formats) and parameters.
func nginxAccessLog(d *nginxconf.Directive, formats map[string]string) NginxAccessLog {
	args := d.Args()
	l := NginxAccessLog{Context: d.Parent().Path(), File: d.File(), Line: d.Line(), Args: args}
	if args[0] == "off" {
		l.Off = true
		return l
	}
	l.Path = args[0]
	l.Syslog = strings.HasPrefix(l.Path, "syslog:")
	l.Format = "combined"
	for j, a := range args[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch {
		case j == 0 && !strings.Contains(a, "="):
			l.Format = a
		case k == "buffer":
			l.Buffer = v
		case k == "gzip":
			l.Gzip = true
		case k == "if":
			l.If = v
		}
	}
	l.FormatText = formats[l.Format]
	l.RequestTime = nginxHasVariable(l.FormatText, "request_time")
	l.UpstreamResponseTime = nginxHasVariable(l.FormatText, "upstream_response_time")
	return l
}

// nginxHasVariable reports whether format uses $name or ${name}.
func nginxHasVariable(format, name string) bool {
	if strings.Contains(format, "${"+name+"}") {
		return true
	}
	for rest := format; ; {
		i := strings.Index(rest, "$"+name)
		if i < 0 {
			return false
		}
		rest = rest[i+1+len(name):]
		if rest == "" || !nginxVarByte(rest[0]) {
			return true
		}
	}
}

func nginxVarByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
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
		if kind, ok := nginxPassDirectives[k.Name()]; ok && len(args) > 0 {
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
	host, unix := nginxPassTarget(target)
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
