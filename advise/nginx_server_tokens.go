package advise

// nginx-server-tokens: nginx names its version in the Server header and
// error pages; the smartphone game backend turned it off. Not a speed change: a smaller
// header and one fact less for a scanner.
var nginxServerTokens = ruleFunc{"nginx-server-tokens", LayerNginx, checkNginxServerTokens}

func checkNginxServerTokens(c *Context) []Finding {
	if c.Nginx == nil || c.Nginx.ServerTokens == "off" || c.Nginx.ServerTokens == "" {
		return nil
	}
	return []Finding{{
		ID:       "nginx-server-tokens",
		Title:    "nginx announces its version (server_tokens " + c.Nginx.ServerTokens + ")",
		Severity: Info,
		Evidence: []Evidence{c.nginxEv("server_tokens")},
		Change:   nginxChange(nginxHTTP, "server_tokens", c.Nginx.ServerTokens, "off", Set),
		Effect:   "responses and error pages stop naming nginx's version (not a speed change)",
		Source:   "the smartphone game backend's write-up (server_tokens off); nginx docs",
	}}
}
