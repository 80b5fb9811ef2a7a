package fixplan

import (
	"fmt"
	"strings"
	"time"
)

// The placeholders of ProveCommand: the user's own deploy commands.
const (
	PlaceholderA = "<deploy the code as it is, e.g. git checkout main && make && systemctl restart app>"
	PlaceholderB = "<deploy the change, e.g. git checkout fix && make && systemctl restart app>"
)

// ProveCommand is the `stacktune ab` line that measures the change: the
// user's scenario (or URL), connections and run length filled in, the two
// deploy commands as placeholders.
func ProveCommand(scenario, baseURL string, connections int, duration time.Duration) string {
	parts := []string{"stacktune ab", "--a " + shellQuote(PlaceholderA), "--b " + shellQuote(PlaceholderB)}
	if scenario != "" {
		parts = append(parts, "--scenario "+shellQuote(scenario))
		if baseURL != "" {
			parts = append(parts, "--base-url "+shellQuote(baseURL))
		}
	}
	if connections > 0 {
		parts = append(parts, fmt.Sprintf("--connections %d", connections))
	}
	if duration > 0 {
		parts = append(parts, "--duration "+duration.String())
	}
	if scenario == "" && baseURL != "" {
		parts = append(parts, shellQuote(baseURL))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '=' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
