package collect

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/internal/bytesconv"
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

// NginxDirective is one directive of the configuration.
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

// nginxTree is the parsed configuration with the indexes the derivations
// use.
type nginxTree struct {
	d    []NginxDirective
	kids map[int][]int // parent index → children, in order; -1 is the top
	http int           // index of the http block, -1 if none
}

// read parses the configuration at conf into n and derives its figures.
func (n *Nginx) read(conf string, cores int) error {
	cfg, err := accesslog.ReadNginxConfig(conf)
	if err != nil {
		return err
	}
	n.ConfPath = conf
	n.Files = cfg.Files
	t := &nginxTree{kids: map[int][]int{}, http: -1}
	newIndex := make([]int, len(cfg.Directives))
	// Directives of one block share its context: joined once per block,
	// so deep configurations cost memory per block, not per directive.
	contexts := map[int]string{}
	for i, d := range cfg.Directives {
		newIndex[i] = -1
		parent := -1
		if d.Parent >= 0 {
			if newIndex[d.Parent] < 0 {
				continue // inside a skipped block
			}
			parent = newIndex[d.Parent]
			if p := t.d[parent]; p.Name == "types" && p.Block {
				continue
			}
		}
		newIndex[i] = len(t.d)
		args := d.Args
		if args == nil {
			args = []string{}
		}
		ctx, ok := contexts[d.Parent]
		if !ok {
			ctx = strings.Join(d.Context, ">")
			contexts[d.Parent] = ctx
		}
		t.d = append(t.d, NginxDirective{
			Name: d.Name, Args: args, Context: ctx,
			File: d.File, Line: d.Line, Block: d.Block, Parent: parent,
		})
		t.kids[parent] = append(t.kids[parent], newIndex[i])
		if d.Name == "http" && d.Block && parent == -1 && t.http < 0 {
			t.http = newIndex[i]
		}
	}
	n.Directives = t.d
	if cores <= 0 {
		cores = runtime.NumCPU()
	}
	n.derive(t, cores)
	return nil
}

// child returns the last direct child of block named name, or -1.
func (t *nginxTree) child(block int, name string) int {
	found := -1
	for _, k := range t.kids[block] {
		if t.d[k].Name == name {
			found = k
		}
	}
	return found
}

// children returns the direct children of block named name.
func (t *nginxTree) children(block int, name string) []int {
	var out []int
	for _, k := range t.kids[block] {
		if t.d[k].Name == name {
			out = append(out, k)
		}
	}
	return out
}

// inherited returns the directives named name that apply at block: those
// of the nearest enclosing level (block itself first) that has any.
func (t *nginxTree) inherited(block int, name string) []int {
	for b := block; ; b = t.d[b].Parent {
		if ks := t.children(b, name); len(ks) > 0 {
			return ks
		}
		if b < 0 {
			return nil
		}
	}
}

// inheritedValue is the value of the last directive named name applying at
// block, or def.
func (t *nginxTree) inheritedValue(block int, name, def string) string {
	ks := t.inherited(block, name)
	if len(ks) == 0 {
		return def
	}
	return strings.Join(t.d[ks[len(ks)-1]].Args, " ")
}

// within reports whether directive i is inside block (at any depth).
func (t *nginxTree) within(i, block int) bool {
	for p := t.d[i].Parent; p >= 0; p = t.d[p].Parent {
		if p == block {
			return true
		}
	}
	return false
}

// setting returns the effective value of name at block (-1: main), with
// the places deeper inside block that set it again.
func (t *nginxTree) setting(block int, name, def string) NginxSetting {
	s := NginxSetting{Value: def, Default: true}
	if block == -2 {
		return s // the level does not exist
	}
	if k := t.child(block, name); k >= 0 {
		s = NginxSetting{Value: strings.Join(t.d[k].Args, " "), File: t.d[k].File, Line: t.d[k].Line}
	}
	if block < 0 {
		return s
	}
	for i, d := range t.d {
		if d.Name == name && d.Parent != block && t.within(i, block) {
			s.Inner = append(s.Inner, NginxPlace{Context: d.Context, Value: strings.Join(d.Args, " "), File: d.File, Line: d.Line})
		}
	}
	return s
}

// derive fills the settings and figures from the tree.
func (n *Nginx) derive(t *nginxTree, cores int) {
	events := -2
	for _, k := range t.kids[-1] {
		if t.d[k].Name == "events" && t.d[k].Block {
			events = k
		}
	}
	http := t.http
	if http < 0 {
		http = -2
	}
	keepaliveRequests := "1000"
	if !nginxVersionAtLeast(n.Version, 1, 19, 10) {
		keepaliveRequests = "100"
	}
	sendfileMaxChunk := "2m"
	if !nginxVersionAtLeast(n.Version, 1, 21, 4) {
		sendfileMaxChunk = "0"
	}
	acceptMutex := "off"
	if !nginxVersionAtLeast(n.Version, 1, 11, 3) {
		acceptMutex = "on"
	}
	n.Settings = map[string]NginxSetting{}
	for _, s := range []struct {
		block     int
		name, def string
	}{
		{-1, "worker_processes", "1"},
		{-1, "worker_rlimit_nofile", ""},
		{-1, "worker_cpu_affinity", ""},
		{-1, "pcre_jit", "off"},
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
		{http, "client_body_temp_path", nginxConfigureArg(n.ConfigureArgs, "--http-client-body-temp-path", "client_body_temp")},
		{http, "client_body_buffer_size", "16k"},
		{http, "client_max_body_size", "1m"},
		{http, "proxy_buffering", "on"},
		{http, "proxy_http_version", "1.0"},
		{http, "etag", "on"},
	} {
		n.Settings[s.name] = t.setting(s.block, s.name, s.def)
	}
	val := func(name string) string { return n.Settings[name].Value }

	if v := val("worker_processes"); v == "auto" {
		n.Workers = cores
	} else {
		n.Workers, _ = strconv.Atoi(v)
	}
	n.WorkerConnections, _ = strconv.Atoi(val("worker_connections"))
	n.WorkerRlimitNofile, _ = strconv.Atoi(val("worker_rlimit_nofile"))
	n.Sendfile = val("sendfile") == "on"
	n.TCPNopush = val("tcp_nopush") == "on"
	n.TCPNodelay = val("tcp_nodelay") == "on"
	if f := strings.Fields(val("keepalive_timeout")); len(f) > 0 {
		n.KeepaliveTimeoutSec, _ = nginxSeconds(f[0])
	}
	n.KeepaliveRequests, _ = strconv.Atoi(val("keepalive_requests"))
	n.OpenFileCache = NginxOpenFileCache{MinUses: 1, ValidSec: 60}
	for _, a := range strings.Fields(val("open_file_cache")) {
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
	n.OpenFileCache.ValidSec, _ = nginxSeconds(val("open_file_cache_valid"))
	n.OpenFileCache.MinUses, _ = strconv.Atoi(val("open_file_cache_min_uses"))
	n.OpenFileCache.Errors = val("open_file_cache_errors") == "on"
	n.Gzip = val("gzip") == "on"
	n.GzipTypes = strings.Fields(val("gzip_types"))
	if !nginxHas(n.GzipTypes, "text/html") && !nginxHas(n.GzipTypes, "*") {
		n.GzipTypes = append([]string{"text/html"}, n.GzipTypes...)
	}
	n.ServerTokens = val("server_tokens")
	if f := strings.Fields(val("client_body_temp_path")); len(f) > 0 {
		n.ClientBodyTempPath = f[0]
	}

	n.Upstreams = []NginxUpstream{}
	n.Listens = []NginxListen{}
	n.AccessLogs = []NginxAccessLog{}
	n.Locations = []NginxLocation{}
	if t.http < 0 {
		n.streamListens(t)
		return
	}
	n.upstreams(t)
	n.listens(t)
	n.accessLogs(t)
	n.locations(t)
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
func (n *Nginx) upstreams(t *nginxTree) {
	byName := map[string]int{}
	for _, k := range t.children(t.http, "upstream") {
		u := t.d[k]
		if !u.Block || len(u.Args) == 0 {
			continue
		}
		up := NginxUpstream{Name: u.Args[0], File: u.File, Line: u.Line, Servers: []NginxUpstreamServer{}, UsedBy: []NginxUpstreamUse{}}
		for _, s := range t.children(k, "server") {
			if args := t.d[s].Args; len(args) > 0 {
				up.Servers = append(up.Servers, NginxUpstreamServer{Address: args[0], Unix: strings.HasPrefix(args[0], "unix:"), Params: args[1:]})
			}
		}
		if ka := t.child(k, "keepalive"); ka >= 0 && len(t.d[ka].Args) > 0 {
			up.Keepalive, _ = strconv.Atoi(t.d[ka].Args[0])
		}
		byName[up.Name] = len(n.Upstreams)
		n.Upstreams = append(n.Upstreams, up)
	}
	for i, d := range t.d {
		if _, ok := nginxPassDirectives[d.Name]; !ok || len(d.Args) == 0 || !t.within(i, t.http) {
			continue
		}
		host, _ := nginxPassTarget(d.Args[0])
		ui, ok := byName[host]
		if !ok {
			continue
		}
		use := NginxUpstreamUse{Context: d.Context, File: d.File, Line: d.Line, Directive: d.Name}
		switch d.Name {
		case "proxy_pass":
			use.HTTPVersion = t.inheritedValue(d.Parent, "proxy_http_version", "1.0")
			use.Connection, use.ConnectionValue = "close", "close"
			for _, h := range t.inherited(d.Parent, "proxy_set_header") {
				if args := t.d[h].Args; len(args) >= 2 && strings.EqualFold(args[0], "Connection") {
					use.Connection = args[1]
					use.ConnectionValue = t.resolveMap(args[1])
				}
			}
			use.ConnectionCleared = use.ConnectionValue == ""
			use.KeepaliveReady = use.HTTPVersion == "1.1" && !strings.EqualFold(use.ConnectionValue, "close")
		case "fastcgi_pass":
			use.KeepConn = t.inheritedValue(d.Parent, "fastcgi_keep_conn", "off") == "on"
			use.KeepaliveReady = use.KeepConn
		case "grpc_pass":
			use.KeepaliveReady = true
		case "memcached_pass":
			use.KeepaliveReady = true
		}
		n.Upstreams[ui].UsedBy = append(n.Upstreams[ui].UsedBy, use)
	}
}

// resolveMap returns the value a header value has for a request without the
// header a map reads: a value that is exactly a variable set by a map block
// takes that map's ” entry, else its default, else "". Anything else is
// returned as is.
func (t *nginxTree) resolveMap(v string) string {
	if !strings.HasPrefix(v, "$") || strings.ContainsAny(v[1:], "$ ") {
		return v
	}
	name := strings.Trim(v, "${}")
	for _, k := range t.children(t.http, "map") {
		m := t.d[k]
		if !m.Block || len(m.Args) != 2 || strings.Trim(m.Args[1], "${}") != name {
			continue
		}
		empty, def := -1, -1
		for _, e := range t.kids[k] {
			switch t.d[e].Name {
			case "":
				empty = e
			case "default":
				def = e
			}
		}
		for _, e := range []int{empty, def} {
			if e >= 0 && len(t.d[e].Args) > 0 {
				return t.d[e].Args[0]
			}
		}
		return ""
	}
	return v
}

// rootOrAlias returns the root or alias applying at location i: nginx
// inherits the two together, from the nearest level setting either.
func (t *nginxTree) rootOrAlias(i int) (root, alias string) {
	for b := i; b >= 0; b = t.d[b].Parent {
		for _, k := range slices.Backward(t.kids[b]) {
			switch d := t.d[k]; {
			case d.Name == "root" && len(d.Args) > 0:
				return d.Args[0], ""
			case d.Name == "alias" && len(d.Args) > 0:
				return "", d.Args[0]
			}
		}
	}
	return "html", ""
}

// serverNames returns the server_name of the server block enclosing i.
func (t *nginxTree) serverNames(i int) []string {
	for b := i; b >= 0; b = t.d[b].Parent {
		if t.d[b].Name == "server" && t.d[b].Block {
			if k := t.child(b, "server_name"); k >= 0 {
				return t.d[k].Args
			}
			return nil
		}
	}
	return nil
}

// listens fills Listens from the http servers, then the stream servers.
func (n *Nginx) listens(t *nginxTree) {
	for _, srv := range t.children(t.http, "server") {
		if !t.d[srv].Block {
			continue
		}
		http2 := false
		if k := t.child(srv, "http2"); k >= 0 && len(t.d[k].Args) > 0 {
			http2 = t.d[k].Args[0] == "on"
		}
		ls := t.children(srv, "listen")
		if len(ls) == 0 {
			n.Listens = append(n.Listens, NginxListen{
				Context: "http>server", ServerName: t.serverNames(srv), File: t.d[srv].File, Line: t.d[srv].Line,
				Implicit: true, Address: "*", Port: 80, Backlog: nginxDefaultBacklog, BacklogDefault: true, HTTP2: http2,
			})
		}
		for _, k := range ls {
			if l, ok := nginxParseListen(t.d[k]); ok {
				l.ServerName = t.serverNames(srv)
				l.HTTP2 = l.HTTP2 || http2
				n.Listens = append(n.Listens, l)
			}
		}
	}
	n.streamListens(t)
}

func (n *Nginx) streamListens(t *nginxTree) {
	for _, st := range t.kids[-1] {
		if t.d[st].Name != "stream" || !t.d[st].Block {
			continue
		}
		for _, srv := range t.children(st, "server") {
			for _, k := range t.children(srv, "listen") {
				if l, ok := nginxParseListen(t.d[k]); ok {
					n.Listens = append(n.Listens, l)
				}
			}
		}
	}
}

// nginxParseListen reads a listen directive.
func nginxParseListen(d NginxDirective) (NginxListen, bool) {
	if len(d.Args) == 0 {
		return NginxListen{}, false
	}
	l := NginxListen{Context: d.Context, File: d.File, Line: d.Line, Backlog: nginxDefaultBacklog, BacklogDefault: true}
	addr := d.Args[0]
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
	for _, p := range d.Args[1:] {
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

// logFormats returns the http-level log_format texts by name.
func (t *nginxTree) logFormats() map[string]string {
	formats := map[string]string{}
	for _, k := range t.children(t.http, "log_format") {
		args := t.d[k].Args
		if len(args) < 2 {
			continue
		}
		parts := args[1:]
		if strings.HasPrefix(parts[0], "escape=") {
			parts = parts[1:]
		}
		formats[args[0]] = strings.Join(parts, "")
	}
	return formats
}

// accessLogs fills AccessLogs: every access_log in http, and nginx's own
// when the http level sets none.
func (n *Nginx) accessLogs(t *nginxTree) {
	formats := t.logFormats()
	if _, ok := formats["combined"]; !ok {
		formats["combined"] = accesslog.Combined
	}
	if t.child(t.http, "access_log") < 0 {
		l := NginxAccessLog{Context: "http", Default: true, Path: nginxConfigureArg(n.ConfigureArgs, "--http-log-path", "logs/access.log"), Format: "combined"}
		l.FormatText = formats["combined"]
		n.AccessLogs = append(n.AccessLogs, l)
	}
	for i, d := range t.d {
		if d.Name != "access_log" || len(d.Args) == 0 || (i != t.http && !t.within(i, t.http)) {
			continue
		}
		l := NginxAccessLog{Context: d.Context, File: d.File, Line: d.Line, Args: d.Args}
		if d.Args[0] == "off" {
			l.Off = true
			n.AccessLogs = append(n.AccessLogs, l)
			continue
		}
		l.Path = d.Args[0]
		l.Syslog = strings.HasPrefix(l.Path, "syslog:")
		l.Format = "combined"
		for j, a := range d.Args[1:] {
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
		n.AccessLogs = append(n.AccessLogs, l)
	}
	for i := range n.AccessLogs {
		if l := &n.AccessLogs[i]; l.Default {
			l.RequestTime = nginxHasVariable(l.FormatText, "request_time")
			l.UpstreamResponseTime = nginxHasVariable(l.FormatText, "upstream_response_time")
		}
	}
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
func (n *Nginx) locations(t *nginxTree) {
	for i, d := range t.d {
		if d.Name != "location" || !d.Block || !t.within(i, t.http) {
			continue
		}
		l := NginxLocation{Context: d.Context, Match: strings.Join(d.Args, " "), ServerName: t.serverNames(i), File: d.File, Line: d.Line}
		for _, k := range t.kids[i] {
			c := t.d[k]
			if kind, ok := nginxPassDirectives[c.Name]; ok && len(c.Args) > 0 {
				l.Kind, l.Pass = kind, c.Args[0]
				host, unix := nginxPassTarget(c.Args[0])
				l.Unix = unix
				for _, u := range n.Upstreams {
					if u.Name == host {
						l.Upstream = host
						l.Unix = len(u.Servers) > 0
						for _, s := range u.Servers {
							l.Unix = l.Unix && s.Unix
						}
					}
				}
			}
			switch c.Name {
			case "return", "empty_gif", "stub_status":
				if l.Kind == "" {
					l.Kind = c.Name
				}
			case "alias":
				l.Alias = strings.Join(c.Args, " ")
			case "try_files":
				l.TryFiles = strings.Join(c.Args, " ")
			case "expires":
				l.Expires = strings.Join(c.Args, " ")
			}
		}
		if l.Kind == "" {
			l.Kind = "static"
			if len(t.children(i, "location")) > 0 && t.child(i, "root") < 0 && l.Alias == "" && l.TryFiles == "" {
				l.Kind = "nested"
			}
		}
		if l.Kind == "static" && l.Alias == "" {
			l.Root, l.Alias = t.rootOrAlias(i)
		}
		for _, k := range t.inherited(i, "access_log") {
			if args := t.d[k].Args; len(args) > 0 && args[0] == "off" {
				l.AccessLogOff = true
			}
		}
		n.Locations = append(n.Locations, l)
	}
}
