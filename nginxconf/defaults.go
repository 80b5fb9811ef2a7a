package nginxconf

// Level is the context a top-level setting is read at.
type Level string

// The levels of Defaults.
const (
	LevelMain   Level = "main"
	LevelEvents Level = "events"
	LevelHTTP   Level = "http"
)

// Default is a setting stacktune's rules read, at its level, with the
// value nginx takes when the configuration sets none.
type Default struct {
	Level Level
	Name  string
	// Value is nginx's default; "" when nginx has none (the setting is
	// off until set, as worker_rlimit_nofile).
	Value string
}

// Defaults are the settings the audit reads with nginx's defaults for
// the build b: those that changed between versions (keepalive_requests
// 100 before 1.19.10, sendfile_max_chunk 0 before 1.21.4, accept_mutex on
// before 1.11.3) and those its configure arguments set
// (client_body_temp_path). An unknown version takes today's.
func Defaults(b Build) []Default {
	pick := func(since []int, now, before string) string {
		if b.AtLeast(since...) {
			return now
		}
		return before
	}
	return []Default{
		{LevelMain, "worker_processes", "1"},
		{LevelMain, "worker_rlimit_nofile", ""},
		{LevelMain, "worker_cpu_affinity", ""},
		{LevelMain, "pcre_jit", "off"},
		{LevelEvents, "worker_connections", "512"},
		{LevelEvents, "multi_accept", "off"},
		{LevelEvents, "accept_mutex", pick([]int{1, 11, 3}, "off", "on")},
		{LevelEvents, "accept_mutex_delay", "500ms"},
		{LevelEvents, "use", ""},
		{LevelHTTP, "sendfile", "off"},
		{LevelHTTP, "sendfile_max_chunk", pick([]int{1, 21, 4}, "2m", "0")},
		{LevelHTTP, "tcp_nopush", "off"},
		{LevelHTTP, "tcp_nodelay", "on"},
		{LevelHTTP, "keepalive_timeout", "75s"},
		{LevelHTTP, "keepalive_requests", pick([]int{1, 19, 10}, "1000", "100")},
		{LevelHTTP, "reset_timedout_connection", "off"},
		{LevelHTTP, "open_file_cache", "off"},
		{LevelHTTP, "open_file_cache_valid", "60s"},
		{LevelHTTP, "open_file_cache_min_uses", "1"},
		{LevelHTTP, "open_file_cache_errors", "off"},
		{LevelHTTP, "gzip", "off"},
		{LevelHTTP, "gzip_types", "text/html"},
		{LevelHTTP, "gzip_comp_level", "1"},
		{LevelHTTP, "gzip_min_length", "20"},
		{LevelHTTP, "gzip_static", "off"},
		{LevelHTTP, "server_tokens", "on"},
		{LevelHTTP, "client_body_temp_path", b.Arg("--http-client-body-temp-path", "client_body_temp")},
		{LevelHTTP, "client_body_buffer_size", "16k"},
		{LevelHTTP, "client_max_body_size", "1m"},
		{LevelHTTP, "proxy_buffering", "on"},
		{LevelHTTP, "proxy_http_version", "1.0"},
		{LevelHTTP, "etag", "on"},
	}
}

// Block is the block of a level: the main context; the events block (the
// last one: nginx refuses a second); the first http block. Nil when the
// configuration has none.
func (c *Config) Block(l Level) *Directive {
	var found *Directive
	for _, d := range c.Main().Children() {
		switch {
		case !d.IsBlock():
		case l == LevelEvents && d.Name() == "events":
			found = d
		case l == LevelHTTP && d.Name() == "http" && found == nil:
			found = d
		}
	}
	if l == LevelMain {
		return c.Main()
	}
	return found
}
