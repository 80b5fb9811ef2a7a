package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"time"

	"github.com/stacktune/stacktune/loadgen"
)

// HTTP probe timing: each GET may take probeTimeout, and the probe tries
// again every probeRetry until probeWait has passed.
const (
	probeTimeout = 5 * time.Second
	probeWait    = 10 * time.Second
	probeRetry   = 200 * time.Millisecond
)

// HTTPProbe returns a check (Services.NginxProbe) that GETs url until it
// answers with a status below 500: nginx's new workers may take a moment
// to answer after nginx -s reload returns. It tries for 10 s, each GET
// bounded to 5 s, and fails with the last error or status; a cancelled
// context ends it at once.
//
// Its errors show the URL as loadgen.MaskURL does (no password, no query
// value).
func HTTPProbe(url string) func(context.Context) error {
	shown := loadgen.MaskURL(url)
	return func(ctx context.Context) error {
		client := &http.Client{Timeout: probeTimeout}
		deadline := time.Now().Add(probeWait)
		for {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return fmt.Errorf("GET %s: %s", shown, loadgen.MaskCredentials(err.Error()))
			}
			resp, err := client.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode < 500 {
					return nil
				}
				err = fmt.Errorf("GET %s: %s", shown, resp.Status)
			} else if ue, ok := errors.AsType[*neturl.Error](err); ok {
				// url.Error quotes the whole URL: keep what went wrong.
				err = fmt.Errorf("GET %s: %w", shown, ue.Err)
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("probe: %w", err)
			}
			time.Sleep(probeRetry)
		}
	}
}
