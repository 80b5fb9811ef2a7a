package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/stacktune/stacktune/loadgen"
)

// HookResult is what a pre_run hook did.
type HookResult struct {
	// What names the hook: "POST http://127.0.0.1:8080/initialize" (a URL
	// password masked) or "command ./init.sh --all".
	What string
	// Elapsed is how long the hook took: reported, never scored.
	Elapsed time.Duration
	// Status is the HTTP response's status; 0 for a command or when no
	// response came.
	Status int
}

// RunPreRun runs the scenario's pre_run hook, bounded by its timeout and
// by ctx; it returns nil, nil when the scenario has none. A hook that
// fails (no response, an unexpected status or a failed check; a command
// that cannot start, exits non-zero or outlives its timeout) returns its
// result with an error saying why, for example
//
//	pre_run POST http://127.0.0.1:8080/initialize: status 500, want 200
//	pre_run command ./init.sh: exit status 1: ERROR 1045 (28000): Access denied
//
// An HTTP hook is sent as the steps are (the scenario's headers, no
// redirects followed), from a client of its own that keeps no connection.
// A command runs in the scenario file's directory, its output kept only for
// the message; at the timeout its process group is killed.
func (s *Scenario) RunPreRun(ctx context.Context) (*HookResult, error) {
	h := s.PreRun
	if h == nil {
		return nil, nil
	}
	if h.Request != nil {
		return s.runHTTPHook(ctx, h)
	}
	return h.runCommand(ctx)
}

func (s *Scenario) runHTTPHook(ctx context.Context, h *Hook) (*HookResult, error) {
	st := h.Request
	res := &HookResult{What: st.Method + " " + loadgen.MaskURL(st.URL)}
	hctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	f := newFiller(rand.New(rand.NewPCG(0, 0)), s.lists, make([]atomic.Uint64, len(s.lists)))
	f.reset()
	req, err := newRequest(hctx, st, f, s.base, s.headers)
	if err != nil {
		return res, fmt.Errorf("pre_run %s: %s", res.What, short(err.Error()))
	}
	res.What = st.Method + " " + loadgen.MaskURL(req.URL.String())
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	tr := &http.Transport{Protocols: &protocols, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := time.Now()
	fail := func(err error) (*HookResult, error) {
		res.Elapsed = time.Since(start)
		if ctx.Err() != nil {
			return res, fmt.Errorf("pre_run %s: %w", res.What, context.Cause(ctx))
		}
		_, d := classify(err, ctx, hctx, h.Timeout)
		return res, fmt.Errorf("pre_run %s: %s", res.What, d)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	res.Status = resp.StatusCode
	var body bytes.Buffer
	_, err = body.ReadFrom(io.LimitReader(resp.Body, MaxBody))
	truncated := false
	if err == nil {
		var extra int64
		extra, err = io.Copy(io.Discard, resp.Body)
		truncated = extra > 0
	}
	if err != nil {
		return fail(err)
	}
	res.Elapsed = time.Since(start)
	r := &response{status: resp.StatusCode, header: resp.Header, body: body.Bytes(), of: bodyName(truncated)}
	if k, d, _ := check(st, f, r); k != loadgen.OK {
		return res, fmt.Errorf("pre_run %s: %s", res.What, d)
	}
	return res, nil
}

// hookOutput is how much of a command's output is kept (its end), for the
// message of a failure.
const hookOutput = 4 << 10

func (h *Hook) runCommand(ctx context.Context) (*HookResult, error) {
	res := &HookResult{What: h.commandLine()}
	hctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	cmd := exec.CommandContext(hctx, h.Command[0], h.Command[1:]...)
	cmd.Dir = h.dir
	out := &tail{max: hookOutput}
	cmd.Stdout, cmd.Stderr = out, out
	// Output pipes a killed command's children still hold are closed
	// after this, so a timeout ends the hook.
	cmd.WaitDelay = time.Second
	killGroup(cmd)
	start := time.Now()
	err := cmd.Run()
	res.Elapsed = time.Since(start)
	if err == nil {
		return res, nil
	}
	var why string
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("pre_run %s: %w", res.What, context.Cause(ctx))
	case errors.Is(hctx.Err(), context.DeadlineExceeded):
		why = fmt.Sprintf("killed after the %v timeout", h.Timeout)
	case errors.As(err, &ee):
		why = ee.Error() // "exit status 1", "signal: segmentation fault"
	default:
		why = err.Error()
	}
	if last := out.lastLine(); last != "" {
		why += ": " + last
	}
	return res, fmt.Errorf("pre_run %s: %s", res.What, why)
}

// commandLine renders the command for messages: "command ./init.sh --all",
// or "shell: mysql < init.sql".
func (h *Hook) commandLine() string {
	if h.Shell && len(h.Command) == 3 {
		return "shell: " + loadgen.MaskCredentials(shortString(h.Command[2], 80))
	}
	var b strings.Builder
	b.WriteString("command")
	for _, a := range h.Command {
		b.WriteByte(' ')
		if a == "" || strings.ContainsFunc(a, needsQuotes) {
			a = strconv.Quote(a)
		}
		b.WriteString(a)
	}
	return loadgen.MaskCredentials(shortString(b.String(), 120))
}

// needsQuotes says whether an argument with r is quoted in messages, so
// its boundaries show.
func needsQuotes(r rune) bool {
	return unicode.IsSpace(r) || strings.ContainsRune("\"'\\$`", r) || !unicode.IsPrint(r)
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// lastLine is the last non-blank line of the output, printable and short.
func (t *tail) lastLine() string {
	lines := strings.Split(strings.ToValidUTF8(string(t.buf), "?"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.Map(func(r rune) rune {
			if r == '\t' {
				return ' '
			}
			if !unicode.IsPrint(r) {
				return -1
			}
			return r
		}, lines[i])
		if l = strings.TrimSpace(l); l != "" {
			return shortString(loadgen.MaskCredentials(l), 200)
		}
	}
	return ""
}
