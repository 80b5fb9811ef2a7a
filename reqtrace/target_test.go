package reqtrace

import (
	"strings"
	"testing"

	"github.com/stacktune/stacktune/benchrun"
)

// TestTraceTargetMasksTheURL: a trace run's refused URL is named without
// its password or query values.
func TestTraceTargetMasksTheURL(t *testing.T) {
	tests := []struct{ name, url, want string }{
		{"https", "https://u:pw-S3CRET@h/x?token=S3CRET", `"https://u:***@h/x?token=***": only http is traced`},
		{"no host", "http:///x?token=S3CRET", `"http:///x?token=***": want http://host[:port]/...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := traceTarget(benchrun.Options{URL: tt.url})
			if err == nil || strings.Contains(err.Error(), "S3CRET") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q without the secret", err, tt.want)
			}
		})
	}
}
