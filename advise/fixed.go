package advise

import (
	"fmt"
	"strings"
)

// ParseFixed reads --fix flags ("innodb_doublewrite=1",
// "innodb-flush-log-at-trx-commit = 1", "vm.swappiness=1") into
// Options.Fixed.
func ParseFixed(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || value == "" {
			return nil, fmt.Errorf("--fix %q: want name=value, as in innodb_doublewrite=1", f)
		}
		out[name] = value
	}
	return out, nil
}
