// Package browsertest drives a headless Chromium for tests of what
// stacktune writes for browsers (HTML reports): it finds the browser,
// starts it with a throwaway profile, loads a page from a file, and
// records what the page did (console messages, uncaught exceptions,
// network requests) so a test can assert a page loads cleanly, offline,
// and shows what it should.
//
// A test calls Start, which skips the test when no Chromium is installed
// unless STACKTUNE_REQUIRE_BROWSER is set (scripts/setup.sh installs
// Debian's chromium, so CI must never skip: it sets the variable), then
// Open for each page:
//
//	b := browsertest.Start(t)
//	p := b.Open(t, "/tmp/report.html")
//	if errs := p.Problems(); len(errs) > 0 { t.Errorf("%v", errs) }
//	n := p.Count(t, "svg rect")
//	p.Screenshot(t, filepath.Join(dir, "report.png"))
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// RequireEnv is the environment variable that turns a missing browser
// from a skip into a failure.
const RequireEnv = "STACKTUNE_REQUIRE_BROWSER"

// PathEnv names a browser binary to use instead of the search of
// ExecPath.
const PathEnv = "STACKTUNE_CHROMIUM"

// candidates are the browser binaries ExecPath tries, in order: Debian's
// chromium package first.
var candidates = []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"}

// ErrNoBrowser is returned by ExecPath when no Chromium is installed.
var ErrNoBrowser = errors.New("no Chromium found (install Debian's chromium package: scripts/setup.sh does)")

// ExecPath returns the Chromium binary to run: $STACKTUNE_CHROMIUM if set,
// else the first of /usr/bin/chromium, chromium, chromium-browser,
// google-chrome, google-chrome-stable and headless_shell found.
func ExecPath() (string, error) {
	if p := os.Getenv(PathEnv); p != "" {
		found, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", PathEnv, p, err)
		}
		return found, nil
	}
	for _, c := range candidates {
		if found, err := exec.LookPath(c); err == nil {
			return found, nil
		}
	}
	return "", ErrNoBrowser
}

// Timeout bounds each step against the browser (start, load, a query, a
// screenshot).
const Timeout = 60 * time.Second

// Viewport is the browser window's size in CSS pixels.
const (
	ViewportWidth  = 1280
	ViewportHeight = 900
)

// Browser is one headless Chromium, stopped when the test that started it
// ends.
type Browser struct {
	ctx context.Context // the browser's first tab: its context owns the process
}

// Start starts a headless Chromium with a profile in a temporary
// directory, without the sandbox (tests run as root, where Chromium's
// sandbox cannot start), and stops it at the end of the test. It skips
// the test when no browser is installed and STACKTUNE_REQUIRE_BROWSER is
// unset, and fails it when the variable is set or the browser is there
// but does not start.
func Start(t testing.TB) *Browser {
	t.Helper()
	path, err := ExecPath()
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("browser test: %v, and %s is set", err, RequireEnv)
		}
		t.Skipf("browser test skipped: %v (set %s=1 to make this a failure)", err, RequireEnv)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(ViewportWidth, ViewportHeight),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("font-render-hinting", "none"),
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		acancel()
	})
	// The first Run starts the browser; it must not carry a timeout (that
	// would end the browser with it), so the wait is bounded apart.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err = <-started:
	case <-time.After(Timeout):
		err = fmt.Errorf("no answer in %s", Timeout)
	}
	if err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return &Browser{ctx: ctx}
}

// Message is something a page reported: a console call, an uncaught
// exception, or an entry of the browser's log (a blocked load, a
// Content-Security-Policy violation).
type Message struct {
	// Kind is "console", "exception" or "log".
	Kind string
	// Level is the console call's type ("log", "warning", "error", ...)
	// or the log entry's level; "error" for an exception.
	Level string
	Text  string
	URL   string
}

func (m Message) String() string {
	s := m.Kind + " " + m.Level + ": " + m.Text
	if m.URL != "" {
		s += " (" + m.URL + ")"
	}
	return s
}

// Page is a page loaded in its own tab.
type Page struct {
	ctx  context.Context
	url  string
	mu   sync.Mutex
	msgs []Message
	reqs []string
}

// Open loads the file at path in a new tab (closed at the end of the
// test), waits for its load event and for two animation frames, and
// returns it with what it reported while loading. It fails the test when
// the page does not load.
func (b *Browser) Open(t testing.TB, path string) *Page {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	ctx, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	p := &Page{ctx: ctx, url: u}
	// Listen sees each event before any later command returns, so what
	// the page reported before the last step below is all recorded.
	if err := chromedp.Listen(ctx, p.record); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	if err := p.do(chromedp.Navigate(u)); err != nil {
		t.Fatalf("loading %s: %v", u, err)
	}
	settle := `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`
	if _, err := run(p, chromedp.Evaluate[bool](settle, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("waiting for %s to render: %v", u, err)
	}
	return p
}

// record is the tab's event listener: it runs on chromedp's reading
// goroutine, so it only appends.
func (p *Page) record(ev any) {
	var m Message
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		m = Message{Kind: "console", Level: string(e.Type), Text: consoleText(e.Args)}
		if st := e.StackTrace; st != nil && len(st.CallFrames) > 0 {
			m.URL = st.CallFrames[0].URL
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		m = Message{Kind: "exception", Level: "error", Text: d.Text, URL: d.URL}
		if d.Exception != nil && d.Exception.Description != "" {
			m.Text += " " + d.Exception.Description
		}
	case *log.EventEntryAdded:
		en := e.Entry
		m = Message{Kind: "log", Level: string(en.Level), Text: en.Text, URL: en.URL}
	case *network.EventRequestWillBeSent:
		if e.Request != nil {
			p.mu.Lock()
			p.reqs = append(p.reqs, e.Request.URL)
			p.mu.Unlock()
		}
		return
	default:
		return
	}
	p.mu.Lock()
	p.msgs = append(p.msgs, m)
	p.mu.Unlock()
}

// consoleText joins a console call's arguments as the console shows
// them: strings as they are, other values by their JSON or description.
func consoleText(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		var s string
		switch {
		case len(a.Value) > 0:
			if err := json.Unmarshal(a.Value, &s); err != nil {
				s = string(a.Value)
			}
		case a.UnserializableValue != "":
			s = string(a.UnserializableValue)
		default:
			s = a.Description
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// URL is the page's file:// URL.
func (p *Page) URL() string { return p.url }

// Messages is everything the page reported so far.
func (p *Page) Messages() []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Message(nil), p.msgs...)
}

// Problems is what a clean page never reports: exceptions, console
// errors and warnings, and log entries at warning or error level.
func (p *Page) Problems() []Message {
	var out []Message
	for _, m := range p.Messages() {
		switch m.Level {
		case "error", "warning", "assert":
			out = append(out, m)
		}
	}
	return out
}

// Requests is the URL of every request the page made, the page's own
// load first.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reqs...)
}

// OtherRequests is every request but the page's own load: what a
// self-contained page never makes.
func (p *Page) OtherRequests() []string {
	var out []string
	for _, r := range p.Requests() {
		if r != p.url {
			out = append(out, r)
		}
	}
	return out
}

func (p *Page) do(a chromedp.Action[chromedp.Void]) error {
	_, err := run(p, a)
	return err
}

func run[T any](p *Page, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// Eval evaluates a JavaScript expression in the page and decodes its
// value into out (a pointer), failing the test on an error.
func (p *Page) Eval(t testing.TB, expr string, out any) {
	t.Helper()
	raw, err := run(p, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("evaluating %s: decoding %s: %v", expr, raw, err)
	}
}

// Count is the number of elements matching a CSS selector.
func (p *Page) Count(t testing.TB, selector string) int {
	t.Helper()
	var n int
	p.Eval(t, fmt.Sprintf("document.querySelectorAll(%s).length", jsString(selector)), &n)
	return n
}

// Text is the rendered text (innerText) of the first element matching a
// CSS selector, "" when none does.
func (p *Page) Text(t testing.TB, selector string) string {
	t.Helper()
	var s string
	p.Eval(t, fmt.Sprintf("(e => e ? e.innerText : '')(document.querySelector(%s))", jsString(selector)), &s)
	return s
}

// Size is the rendered width and height, in CSS pixels, of the first
// element matching a CSS selector (0, 0 when none does).
func (p *Page) Size(t testing.TB, selector string) (w, h float64) {
	t.Helper()
	var r struct{ W, H float64 }
	p.Eval(t, fmt.Sprintf("(e => { if (!e) return {W: 0, H: 0}; const r = e.getBoundingClientRect(); return {W: r.width, H: r.height} })(document.querySelector(%s))", jsString(selector)), &r)
	return r.W, r.H
}

// Screenshot writes a PNG of the whole page (beyond the window) to path,
// creating its directory.
func (p *Page) Screenshot(t testing.TB, path string) {
	t.Helper()
	png, err := run(p, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", p.url, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
