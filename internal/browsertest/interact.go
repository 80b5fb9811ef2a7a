package browsertest

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// OpenURL loads a URL (a page served by a test's own server) in a new
// tab, as Open loads a file.
func (b *Browser) OpenURL(t testing.TB, u string) *Page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	p := &Page{ctx: ctx, url: u}
	if err := chromedp.Listen(ctx, p.record); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	if err := p.do(chromedp.Navigate(u)); err != nil {
		t.Fatalf("loading %s: %v", u, err)
	}
	p.settle(t)
	return p
}

func (p *Page) settle(t testing.TB) {
	t.Helper()
	settle := `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`
	if _, err := run(p, chromedp.Evaluate[bool](settle, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("waiting for the page to render: %v", err)
	}
}

// Click clicks the first element matching a CSS selector as a user does
// (a mouse click at its centre, scrolled into view).
func (p *Page) Click(t testing.TB, selector string) {
	t.Helper()
	if err := p.do(chromedp.Click(chromedp.CSS(selector))); err != nil {
		t.Fatalf("clicking %s: %v", selector, err)
	}
}

// ClickAndWait clicks the element and waits for the page it leads to
// (a link or a form's button) to load, and returns its URL.
func (p *Page) ClickAndWait(t testing.TB, selector string) string {
	t.Helper()
	var before string
	p.Eval(t, `location.href`, &before)
	p.Click(t, selector)
	var after string
	p.WaitFor(t, `location.href !== `+jsString(before)+` && document.readyState === "complete"`, Timeout)
	p.Eval(t, `location.href`, &after)
	p.settle(t)
	return after
}

// WaitFor evaluates a JavaScript condition until it is true, failing the
// test after timeout.
func (p *Page) WaitFor(t testing.TB, cond string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := run(p, chromedp.Evaluate[bool](`!!(`+cond+`)`))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", cond, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
