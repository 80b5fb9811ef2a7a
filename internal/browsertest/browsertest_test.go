package browsertest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHarnessSeesProblems checks the harness against a page that does
// everything a report must not: a console error, an uncaught exception,
// a request for another file. A harness that missed them would let every
// report test pass.
func TestHarnessSeesProblems(t *testing.T) {
	b := Start(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "bad.html")
	os.WriteFile(page, []byte(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>bad</title></head><body>
<p id="t">hello <b>world</b></p>
<svg width="100" height="20"><rect width="50" height="10"></rect></svg>
<img src="missing.png">
<script>console.log("plain", 1); console.error("broken", {a: 1}); throw new Error("boom");</script>
</body></html>`), 0o644)
	p := b.Open(t, page)

	var levels, texts []string
	for _, m := range p.Problems() {
		levels = append(levels, m.Kind+"/"+m.Level)
		texts = append(texts, m.Text)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"broken", "boom"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems %q miss %q", texts, want)
		}
	}
	if !slices.Contains(levels, "exception/error") || !slices.Contains(levels, "console/error") {
		t.Errorf("problem kinds %v, want an exception and a console error", levels)
	}
	if got := p.OtherRequests(); len(got) != 1 || !strings.HasSuffix(got[0], "/missing.png") {
		t.Errorf("other requests %v, want the missing image", got)
	}
	plain := false
	for _, m := range p.Messages() {
		plain = plain || (m.Level == "log" && m.Text == "plain 1")
	}
	if !plain {
		t.Errorf("console.log not recorded: %v", p.Messages())
	}
	if n := p.Count(t, "svg rect"); n != 1 {
		t.Errorf("Count(svg rect) = %d", n)
	}
	if got := p.Text(t, "#t"); got != "hello world" {
		t.Errorf("Text(#t) = %q", got)
	}
	if got := p.Text(t, "#none"); got != "" {
		t.Errorf("Text(#none) = %q", got)
	}
	if w, h := p.Size(t, "svg"); w != 100 || h != 20 {
		t.Errorf("Size(svg) = %v x %v", w, h)
	}
	shot := filepath.Join(dir, "shots", "bad.png")
	p.Screenshot(t, shot)
	png, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n")) {
		t.Errorf("screenshot %s: not a PNG (%v)", shot, err)
	}
}

// TestCleanPage checks that a plain page reports nothing.
func TestCleanPage(t *testing.T) {
	b := Start(t)
	page := filepath.Join(t.TempDir(), "ok.html")
	os.WriteFile(page, []byte(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>ok</title></head><body><p>fine</p></body></html>`), 0o644)
	p := b.Open(t, page)
	if got := p.Problems(); len(got) > 0 {
		t.Errorf("problems on a clean page: %v", got)
	}
	if got := p.OtherRequests(); len(got) > 0 {
		t.Errorf("requests from a clean page: %v", got)
	}
	if got := p.Requests(); len(got) != 1 || got[0] != p.URL() {
		t.Errorf("requests %v, want only the page %s", got, p.URL())
	}
}

func TestExecPathEnv(t *testing.T) {
	t.Setenv(PathEnv, "/nonexistent/chromium")
	if _, err := ExecPath(); err == nil {
		t.Error("a missing $STACKTUNE_CHROMIUM was accepted")
	}
}
