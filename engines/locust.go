package engines

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/scenario"
)

// SlowType is the request type under which an exported Locust file
// records a slow response (one over its step's slow_after): an entry with
// no response time, so Locust's percentiles are not touched, which
// ImportLocustCSV reads back as the step's slow count.
const SlowType = "STACKTUNE-SLOW"

// Locust writes a locustfile that runs s as stacktune would: each Locust
// user is a virtual user with its own session (cookies, captures, the
// row of the data lists its login binds), logs in first, then picks
// steps by weight among those whose captured values it has, fills the
// templates, checks status, substrings and CSS selectors (lxml and
// cssselect, or BeautifulSoup), takes captures, and reports a failure as
// "KIND: detail" with stacktune's error kinds, so ImportLocustCSV scores
// it the same way. The open model paces each of Users at Rate/Users
// (constant_throughput); the closed model runs back to back with each
// step's think time. The master runs pre_run once before the load.
// The warnings are what Locust does differently.
func Locust(w io.Writer, s *scenario.Scenario, opt ExportOptions) ([]string, error) {
	o, m, data, err := prepare(s, opt)
	if err != nil {
		return nil, err
	}
	var warn []string
	if o.Rate > 0 {
		warn = append(warn, "Locust's open model paces each user (constant_throughput): a user whose request is slow falls behind instead of queueing, and latency is measured from the actual send, not the intended one (stacktune bench corrects for coordinated omission)")
	}
	warn = append(warn, "{{NAME.seq}} is round-robin per Locust process (each worker has its own sequence), not across the whole run")
	if literalURLSpace(m) {
		warn = append(warn, "a step's URL has a space or other character a URL cannot hold in its literal text: stacktune bench sends it as is, Locust's requests percent-encodes it (%20)")
	}
	if m.NeedsHTML {
		warn = append(warn, "CSS selector checks and captures need lxml and cssselect on every Locust host (Debian: python3-lxml python3-cssselect; BeautifulSoup, python3-bs4, works too but parses a page tens of times slower)")
	}
	run := fmt.Sprintf("locust -f FILE --headless -u %d -r %d -t %s --csv RESULT", o.Users, o.Users, durationArg(o.Duration.Seconds()))
	header := fmt.Sprintf(`# Locust file for stacktune scenario %s, written by stacktune bench export.
# Export it again rather than editing: the scenario is the data below, the code is fixed.
#
# One process:     %s
# Distributed:     %s --master --expect-workers N
#                  locust -f FILE --worker --master-host MASTER   (on each load host)
# Score it:        stacktune bench import --scenario SCENARIO.yaml --locust-csv RESULT
#
# %d users, %s; requests time out after %ss; --host overrides the base URL.
`, pyComment(s.Name), run, run, o.Users, modelWords(o), strconv.FormatFloat(o.Timeout.Seconds(), 'f', -1, 64))
	_, err = fmt.Fprintf(w, "%s\nSCENARIO = %s\n%s", header, strconv.QuoteToASCII(string(data)), locustRuntime)
	return warn, err
}

func durationArg(sec float64) string { return strconv.FormatFloat(sec, 'f', -1, 64) + "s" }

func modelWords(o ExportOptions) string {
	if o.Rate > 0 {
		return fmt.Sprintf("open model at %s requests/s in all (%s per user)", strconv.FormatFloat(o.Rate, 'f', -1, 64), strconv.FormatFloat(o.Rate/float64(o.Users), 'f', -1, 64))
	}
	return "closed model, back to back with each step's think time"
}

// pyComment keeps a name on one comment line.
func pyComment(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == 0x2028 || r == 0x2029 || r == 0x85 {
			return '?'
		}
		return r
	}, s)
}

// locustRuntime interprets SCENARIO (see model). It only uses Locust,
// requests (Locust's dependency) and, for selectors, lxml or BeautifulSoup.
const locustRuntime = `
import itertools
import json
import logging
import random
import re
import subprocess
import time
import urllib.parse

import gevent
import locust.runners
import locust.stats
import requests
from locust import HttpUser, constant, constant_throughput, events, task
from locust.runners import WorkerRunner

if not locust.runners.__version__:
    # Debian's python3-locust 2.12.1 has an empty version, which its master
    # takes for a pre-2.0 worker and refuses; -1 is Locust's "do not check".
    locust.runners.__version__ = -1

S = json.loads(SCENARIO, parse_int=int)

# CSS selectors: lxml with cssselect (fast: a page in well under a
# millisecond), else BeautifulSoup (tens of milliseconds a page, which
# can hold a load host back).
try:
    import lxml.html
    from lxml.cssselect import CSSSelector

    HTML = "lxml"
except ImportError:
    try:
        from bs4 import BeautifulSoup

        HTML = "bs4"
    except ImportError:
        HTML = None
if S["needs_html"] and HTML is None:
    raise SystemExit("stacktune: this scenario checks CSS selectors: install lxml and cssselect (Debian: apt-get install python3-lxml python3-cssselect) or BeautifulSoup (python3-bs4)")
SELECTORS = {}


def select(doc, selector):
    """The elements of doc that match selector, in document order."""
    if HTML == "lxml":
        if selector not in SELECTORS:
            SELECTORS[selector] = CSSSelector(selector)
        return SELECTORS[selector](doc)
    return doc.select(selector)


def text_of(el):
    return (el.text_content() if HTML == "lxml" else el.get_text()).strip()

SEQ = {name: itertools.count() for name in S["lists"]}
NEXT_USER = itertools.count()
SLOW_TYPE = "STACKTUNE-SLOW"


def short(s, n=80):
    s = str(s).replace("\n", " ")
    return s if len(s) <= n else s[: n - 3] + "..."


def escape(value, mode):
    if mode == "path":
        return urllib.parse.quote(value, safe=":@&=+$")
    if mode == "query":
        return urllib.parse.quote_plus(value, safe="")
    return value


class Fill:
    """The values of one request: every {{list}} of it gets the same value."""

    def __init__(self, user, login=False):
        self.user, self.login, self.picked = user, login, {}

    def value(self, p):
        kind, v = p[0], p[1]
        if kind == "text":
            return v
        if kind == "list":
            if self.login:
                return self.user.row(v)
            if v not in self.picked:
                self.picked[v] = random.choice(S["lists"][v])
            return self.picked[v]
        if kind == "seq":
            key = v + ".seq"
            if key not in self.picked:
                vals = S["lists"][v]
                self.picked[key] = vals[next(SEQ[v]) % len(vals)]
            return self.picked[key]
        if kind == "user":
            return self.user.row(S["user_list"])
        if kind == "row":
            return self.user.row(v)
        if kind == "capture":
            return self.user.captures.get(v, "")
        if kind == "rand":
            return str(random.randint(v[0], v[1]))
        raise ValueError("unknown placeholder kind %r" % kind)

    def fill(self, parts):
        return "".join(escape(self.value(p), p[2]) for p in parts)


def error_kind(e):
    if isinstance(e, requests.exceptions.Timeout):
        return "timeout"
    if isinstance(e, requests.exceptions.ChunkedEncodingError):
        return "reset"
    if isinstance(e, requests.exceptions.ConnectionError):
        s = str(e)
        if "reset" in s or "RemoteDisconnected" in s or "aborted" in s or "BadStatusLine" in s:
            return "reset"
        return "connect"
    if isinstance(e, (requests.exceptions.ContentDecodingError, requests.exceptions.InvalidHeader)):
        return "protocol"
    return "other"


def json_at(doc, path):
    v = doc
    for key in path:
        if isinstance(key, str):
            if not isinstance(v, dict) or key not in v:
                return None, "no key %s" % key
            v = v[key]
        else:
            if not isinstance(v, list) or key >= len(v):
                return None, "no element [%d]" % key
            v = v[key]
    if isinstance(v, bool):
        return ("true" if v else "false"), None
    if isinstance(v, (str, int, float)):
        return str(v), None
    return None, "not a string, a number or a boolean"


class Response:
    def __init__(self, r):
        self.r, self._soup, self._json = r, None, None

    def soup(self):
        if self._soup is None:
            if HTML == "lxml":
                text = self.r.text
                self._soup = lxml.html.fromstring(text) if text.strip() else lxml.html.fromstring("<html></html>")
            else:
                self._soup = BeautifulSoup(self.r.text, "html.parser")
        return self._soup

    def capture(self, c):
        if c.get("regexp"):
            m = re.search(c["regexp"], self.r.text)
            if m is None:
                return None, "regexp %s matched nothing" % short(c["regexp"], 40)
            return m.group(c["group"]), None
        if c.get("selector"):
            els = select(self.soup(), c["selector"])
            if not els:
                return None, "selector %s matched no element" % short(c["selector"], 40)
            el = els[0]
            if c.get("attr"):
                v = el.get(c["attr"])
                if v is None:
                    return None, "no attribute %s" % c["attr"]
                return (" ".join(v) if isinstance(v, list) else v), None
            return text_of(el), None
        if c.get("json") is not None:
            try:
                doc = json.loads(self.r.text, parse_int=str, parse_float=str)
            except ValueError:
                return None, "the body is not JSON"
            return json_at(doc, c["json"])
        v = self.r.headers.get(c["header"])
        if v is None:
            return None, "no header %s" % c["header"]
        return v, None


def check(st, r, f):
    """Why the response fails its step, as "KIND: detail", or None."""
    code = r.status_code
    if st["status"]:
        if code not in st["status"]:
            return "status: status %d, want %s" % (code, " or ".join(str(s) for s in st["status"]))
    elif code >= 400:
        return "status: status %d, want below 400" % code
    body = r.text
    for parts in st["contains"]:
        want = f.fill(parts)
        if want not in body:
            return "check: body lacks %r" % short(want, 60)
    resp = Response(r)
    if st["selector"]:
        n = len(select(resp.soup(), st["selector"]))
        if n < st["min_count"]:
            return "check: selector %r matched %d elements, want at least %d" % (short(st["selector"], 60), n, st["min_count"])
    caps = {}
    for c in st["captures"]:
        v, why = resp.capture(c)
        if why is not None:
            return "check: capture %s: %s" % (c["name"], why)
        caps[c["name"]] = v
    f.user.captures.update(caps)
    return None


def send(client, base, st, f, name):
    url = urllib.parse.urljoin(base, f.fill(st["url"]))
    headers = {h["name"]: f.fill(h["parts"]) for h in S["headers"]}
    headers.update({h["name"]: f.fill(h["parts"]) for h in st["headers"]})
    data = None
    if st["form"] is not None:
        data = [(x["name"], f.fill(x["parts"])) for x in st["form"]]
    elif st["body"] is not None:
        data = f.fill(st["body"]).encode()
    return client.request(st["method"], url, name=name, headers=headers, data=data,
                          allow_redirects=False, timeout=S["timeout_s"], catch_response=True)


class StacktuneUser(HttpUser):
    host = S["base_url"]
    if S["rate"] > 0:
        wait_time = constant_throughput(S["rate"] / S["users"])
    else:
        wait_time = constant(0)

    def on_start(self):
        runner = self.environment.runner
        offset = (getattr(runner, "worker_index", 0) or 0) * 100003
        self.id = offset + next(NEXT_USER)
        self.captures = {}
        self.logged_in = S["login"] is None

    def row(self, name):
        vals = S["lists"][name]
        return vals[self.id % len(vals)]

    @task
    def step(self):
        if not self.logged_in:
            self.logged_in = self.do(S["login"], Fill(self, login=True))
            return
        ready = [st for st in S["steps"] if all(c in self.captures for c in st["needs"])]
        st = random.choices(ready, weights=[x["weight"] for x in ready])[0]
        self.do(st, Fill(self))
        if S["think"] and st["think_s"] > 0:
            gevent.sleep(st["think_s"])

    def do(self, st, f):
        start = time.perf_counter()
        ok = False
        with send(self.client, self.host or S["base_url"], st, f, st["name"]) as r:
            elapsed_ms = (time.perf_counter() - start) * 1000
            err = getattr(r, "error", None)
            if err is not None and not isinstance(err, requests.exceptions.HTTPError):
                kind = error_kind(err)
                r.failure("%s: %s" % (kind, short(type(err).__name__)))
                if kind == "timeout":
                    return False
            else:
                why = check(st, r, f)
                if why is None:
                    r.success()
                    ok = True
                else:
                    r.failure(why)
        if st["slow_after_ms"] > 0 and elapsed_ms > st["slow_after_ms"]:
            events.request.fire(request_type=SLOW_TYPE, name=st["name"], response_time=None,
                                response_length=0, exception=None, context={})
        return ok


@events.test_start.add_listener
def pre_run(environment, **kwargs):
    """The scenario's pre_run, once, on the master (or the only process)."""
    h = S["pre_run"]
    if h is None or isinstance(environment.runner, WorkerRunner):
        return
    started = time.perf_counter()
    why = None
    try:
        if h.get("request") is not None:
            st = h["request"]
            base = environment.host or S["base_url"]
            with requests.Session() as client:
                f = Fill(None)
                url = urllib.parse.urljoin(base, f.fill(st["url"]))
                headers = {x["name"]: f.fill(x["parts"]) for x in S["headers"]}
                headers.update({x["name"]: f.fill(x["parts"]) for x in st["headers"]})
                data = [(x["name"], f.fill(x["parts"])) for x in st["form"]] if st["form"] is not None else (f.fill(st["body"]).encode() if st["body"] is not None else None)
                r = client.request(st["method"], url, headers=headers, data=data, allow_redirects=False, timeout=h["timeout_s"])
                if (st["status"] and r.status_code not in st["status"]) or (not st["status"] and r.status_code >= 400):
                    why = "%s %s: status %d" % (st["method"], url, r.status_code)
        else:
            p = subprocess.run(h["command"], cwd=h["dir"] or None, timeout=h["timeout_s"], capture_output=True)
            if p.returncode != 0:
                why = "command %s exited with %d: %s" % (h["command"][0], p.returncode, short(p.stderr.decode(errors="replace"), 200))
    except Exception as e:  # noqa: BLE001 - any failure stops the run
        why = "%s: %s" % (type(e).__name__, short(e, 200))
    if why is not None:
        logging.error("stacktune: pre_run failed, no load is sent: %s", why)
        environment.process_exit_code = 1
        gevent.spawn(environment.runner.quit)
    else:
        logging.info("stacktune: pre_run took %.3fs", time.perf_counter() - started)


@events.quitting.add_listener
def last_csv_rows(environment, **kwargs):
    """Locust (2.12) writes its --csv statistics once a second and not at
    exit, so the files missed what the users did in their last second and
    while they stopped (stacktune bench import would undercount it): the
    users have stopped by now, so wait for one more write."""
    opts = getattr(environment, "parsed_options", None)
    if opts is None or not getattr(opts, "csv_prefix", None) or isinstance(environment.runner, WorkerRunner):
        return
    gevent.sleep(getattr(locust.stats, "CSV_STATS_INTERVAL_SEC", 1) + 0.5)
`

// literalURLSpace reports a URL template whose literal text holds a byte a
// URL cannot (a space, a control, a quote).
func literalURLSpace(m *model) bool {
	steps := append([]step{}, m.Steps...)
	if m.Login != nil {
		steps = append(steps, *m.Login)
	}
	for _, st := range steps {
		for _, p := range st.URL {
			if p[0] == scenario.PartText && strings.ContainsAny(p[1].(string), " \t\"<>`{}|\\^") {
				return true
			}
		}
	}
	return false
}
