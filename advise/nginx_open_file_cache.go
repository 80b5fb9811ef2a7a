package advise

import "github.com/stacktune/stacktune/changeset"

// nginx-open-file-cache: for static traffic nginx can keep descriptors,
// sizes and modification times of files it serves instead of open() and
// stat() per request (the smartphone game backend: with open_file_cache and sendfile ab went
// from 500-1000 to ~4000 req/s).
var nginxOpenFileCache = ruleFunc{"nginx-open-file-cache", LayerNginx, checkNginxOpenFileCache}

func checkNginxOpenFileCache(c *Context) []Finding {
	if c.Nginx == nil || c.Nginx.OpenFileCache.Enabled {
		return nil
	}
	static := c.staticLocations()
	if len(static) == 0 {
		return nil
	}
	s, _ := c.nginxSetting("open_file_cache")
	return []Finding{{
		ID:       "nginx-open-file-cache",
		Title:    "Static files are opened and stat()ed on every request (open_file_cache off)",
		Severity: Info,
		Evidence: []Evidence{c.nginxEv("open_file_cache"), locationsEv("static locations", static)},
		Change:   nginxChange(nginxHTTP, "open_file_cache", s.Value, "max=100000 inactive=20s", Set),
		Also: []changeset.Change{
			*nginxChange(nginxHTTP, "open_file_cache_valid", c.Nginx.Settings["open_file_cache_valid"].Value, "30s", Set),
			*nginxChange(nginxHTTP, "open_file_cache_min_uses", c.Nginx.Settings["open_file_cache_min_uses"].Value, "2", Set),
			*nginxChange(nginxHTTP, "open_file_cache_errors", c.Nginx.Settings["open_file_cache_errors"].Value, "on", Set),
		},
		Effect: "files requested twice within 20 s keep their descriptor and metadata, saving open() and stat() per request",
		Risk:   changeset.Risk{Memory: "a few hundred bytes per cached file per worker", Note: "a file replaced on disk can be served stale for up to open_file_cache_valid (30 s)"},
		Source: "the smartphone game backend's write-up (open_file_cache max=100000 inactive=20s; open_file_cache_valid 30s; open_file_cache_min_uses 2; open_file_cache_errors on)",
	}}
}
