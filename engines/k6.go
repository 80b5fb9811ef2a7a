package engines

import (
	"fmt"
	"io"
	"strconv"

	"github.com/stacktune/stacktune/scenario"
)

// k6 metric names the exported script defines and ImportK6 reads: per
// step i (Workload order, two digits or more) stacktune_<i>_requests,
// _latency (a trend, ms), _bytes, _slow and _fail_<kind>; over the run
// stacktune_requests, stacktune_latency and stacktune_failed (a rate).
func k6Metric(step int, what string) string { return fmt.Sprintf("stacktune_%02d_%s", step, what) }

// K6 writes a k6 script that runs s as stacktune would (see Locust for
// what a virtual user does): the open model as a constant-arrival-rate
// scenario at Rate iterations per second (Users VUs preallocated, up to
// four times as many), the closed model as constant-vus with Users VUs
// and each step's think time; checks are k6 checks tagged with the step;
// the scenario's fail_if limits are thresholds (error rate, latency); the
// per-step counters and trends are what ImportK6 reads back from the
// summary (k6 run --summary-export FILE). The warnings are what k6 does
// differently.
func K6(w io.Writer, s *scenario.Scenario, opt ExportOptions) ([]string, error) {
	o, m, data, err := prepare(s, opt)
	if err != nil {
		return nil, err
	}
	var warn []string
	if m.PreRun != nil && m.PreRun.Request == nil {
		warn = append(warn, "k6 cannot run pre_run's command: run it yourself before each k6 run")
	}
	warn = append(warn, "k6's latency is http_req_duration (sending, waiting, receiving), without the connection's setup; in the open model it is measured from the actual send, and iterations k6 could not start in time are dropped_iterations (read back as unsent)")
	header := fmt.Sprintf(`// k6 script for stacktune scenario %s, written by stacktune bench export.
// Export it again rather than editing: the scenario is the data below, the code is fixed.
//
// Run:      k6 run --summary-export summary.json script.js     (BASE_URL=... overrides the base URL)
// Score it: stacktune bench import --scenario SCENARIO.yaml --k6-summary summary.json
//
// %d VUs, %s, for %s; requests time out after %ss.
`, pyComment(s.Name), o.Users, modelWords(o), durationArg(o.Duration.Seconds()), strconv.FormatFloat(o.Timeout.Seconds(), 'f', -1, 64))
	_, err = fmt.Fprintf(w, "%s\nconst S = %s;\n%s", header, data, k6Runtime)
	return warn, err
}

// k6Runtime interprets S (see model). Module-level state is per VU: k6
// runs each VU in its own JavaScript runtime.
const k6Runtime = `
import http from 'k6/http';
import { check, sleep } from 'k6';
import { parseHTML } from 'k6/html';
import { Counter, Rate, Trend } from 'k6/metrics';
import exec from 'k6/execution';

const BASE = __ENV.BASE_URL || S.base_url;
const pad = (i) => (i < 10 ? '0' + i : '' + i);
const M = S.step_names.map((name, i) => {
  const p = 'stacktune_' + pad(i) + '_';
  const fail = {};
  for (const k of S.error_kinds) fail[k] = new Counter(p + 'fail_' + k);
  return { requests: new Counter(p + 'requests'), latency: new Trend(p + 'latency', true), bytes: new Counter(p + 'bytes'), slow: new Counter(p + 'slow'), fail: fail };
});
const allRequests = new Counter('stacktune_requests');
const allLatency = new Trend('stacktune_latency', true);
const failed = new Rate('stacktune_failed');

const thresholds = { stacktune_failed: ['rate<=' + S.scoring.error_rate] };
const lat = [];
if (S.scoring.mean_ms) lat.push('avg<' + S.scoring.mean_ms);
if (S.scoring.p50_ms) lat.push('med<' + S.scoring.p50_ms);
if (S.scoring.p90_ms) lat.push('p(90)<' + S.scoring.p90_ms);
if (S.scoring.p99_ms) lat.push('p(99)<' + S.scoring.p99_ms);
if (S.scoring.max_ms) lat.push('max<' + S.scoring.max_ms);
if (lat.length) thresholds.stacktune_latency = lat;

export const options = {
  scenarios: {
    stacktune: S.rate > 0
      ? { executor: 'constant-arrival-rate', rate: S.rate, timeUnit: '1s', duration: S.duration_s + 's', preAllocatedVUs: S.users, maxVUs: S.users * 4 }
      : { executor: 'constant-vus', vus: S.users, duration: S.duration_s + 's' },
  },
  thresholds: thresholds,
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(99)', 'count'],
};

// Go's url.PathEscape and url.QueryEscape, which stacktune bench uses.
function escapeValue(v, mode) {
  const hex = (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase();
  if (mode === 'path') return encodeURIComponent(v).replace(/[!'()*]/g, hex).replace(/%(3A|40|26|3D|2B|24)/g, (m, h) => String.fromCharCode(parseInt(h, 16)));
  if (mode === 'query') return encodeURIComponent(v).replace(/[!'()*]/g, hex).replace(/%20/g, '+');
  return v;
}

function resolve(u) {
  if (/^https?:\/\//i.test(u)) return u;
  const origin = BASE.match(/^https?:\/\/[^/]*/i)[0];
  if (u.startsWith('/')) return origin + u;
  return BASE.replace(/[^/]*$/, '') + u;
}

// Per VU: its row, login state and captured values.
let session = null;

function newSession() {
  return { id: exec.vu.idInTest - 1, loggedIn: S.login === null, captures: {} };
}

function row(list) {
  const vals = S.lists[list];
  return vals[session.id % vals.length];
}

function filler(login) {
  const picked = {};
  const value = (p) => {
    const kind = p[0], v = p[1];
    switch (kind) {
      case 'text': return v;
      case 'list':
        if (login) return row(v);
        if (!(v in picked)) { const vals = S.lists[v]; picked[v] = vals[Math.floor(Math.random() * vals.length)]; }
        return picked[v];
      case 'seq':
        if (!((v + '.seq') in picked)) { const vals = S.lists[v]; picked[v + '.seq'] = vals[exec.scenario.iterationInTest % vals.length]; }
        return picked[v + '.seq'];
      case 'user': return row(S.user_list);
      case 'row': return row(v);
      case 'capture': return session.captures[v] || '';
      case 'rand': return String(v[0] + Math.floor(Math.random() * (v[1] - v[0] + 1)));
    }
    throw new Error('unknown placeholder kind ' + kind);
  };
  return (parts) => parts.map((p) => escapeValue(value(p), p[2])).join('');
}

function errorKind(res) {
  const c = res.error_code;
  if (c === 1050 || c === 1211) return 'timeout';
  if (c === 1220 || c === 1221) return 'reset';
  if ((c >= 1100 && c < 1300) || c === 1000) return 'connect';
  if (c >= 1400 && c < 1700) return 'protocol';
  return 'other';
}

function jsonAt(doc, path) {
  let v = doc;
  for (const k of path) {
    if (v === null || typeof v !== 'object' || !(k in v)) return [null, 'no ' + k];
    v = v[k];
  }
  if (typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string') return [String(v), null];
  return [null, 'not a string, a number or a boolean'];
}

function capture(c, res, html) {
  if (c.regexp) {
    const m = new RegExp(c.regexp).exec(res.body);
    return m ? [m[c.group], null] : [null, 'regexp matched nothing'];
  }
  if (c.selector) {
    const el = html().find(c.selector).first();
    if (el.size() === 0) return [null, 'selector matched no element'];
    if (c.attr) { const v = el.attr(c.attr); return v === undefined ? [null, 'no attribute ' + c.attr] : [v, null]; }
    return [el.text().trim(), null];
  }
  if (c.json) {
    let doc;
    try { doc = JSON.parse(res.body); } catch (e) { return [null, 'the body is not JSON']; }
    return jsonAt(doc, c.json);
  }
  const v = res.headers[c.header] || res.headers[c.header.toLowerCase()];
  return v === undefined ? [null, 'no header ' + c.header] : [v, null];
}

// verdict is '' for a success, else the error kind.
function verdict(st, res, fill) {
  if (res.error_code) return errorKind(res);
  const tags = { step: st.name };
  const statusOK = st.status.length ? st.status.includes(res.status) : res.status < 400;
  if (!check(res, { ['status of ' + st.name]: () => statusOK }, tags)) return 'status';
  const body = res.body || '';
  for (const parts of st.contains) {
    const want = fill(parts);
    // One check name per step: a name with the filled text would make a
    // check per user or value in k6's summary.
    if (!check(res, { ['body of ' + st.name + ' contains the expected text']: () => body.includes(want) }, tags)) return 'check';
  }
  let doc = null;
  const html = () => (doc = doc || parseHTML(body));
  if (st.selector && !check(res, { ['selector ' + st.selector + ' of ' + st.name]: () => html().find(st.selector).size() >= st.min_count }, tags)) return 'check';
  const caps = {};
  for (const c of st.captures) {
    const [v, why] = capture(c, res, html);
    if (!check(res, { ['capture ' + c.name + ' of ' + st.name]: () => why === null }, tags)) return 'check';
    caps[c.name] = v;
  }
  Object.assign(session.captures, caps);
  return '';
}

function send(st, fill) {
  const headers = {};
  for (const h of S.headers) headers[h.name] = fill(h.parts);
  for (const h of st.headers) headers[h.name] = fill(h.parts);
  let body = null;
  if (st.form !== null) {
    body = st.form.map((f) => escapeValue(f.name, 'query') + '=' + escapeValue(fill(f.parts), 'query')).join('&');
    if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/x-www-form-urlencoded';
  } else if (st.body !== null) {
    body = fill(st.body);
  }
  return http.request(st.method, resolve(fill(st.url)), body, { headers: headers, redirects: 0, timeout: S.timeout_s + 's', tags: { step: st.name } });
}

function run(st, login) {
  const fill = filler(login);
  const res = send(st, fill);
  const m = M[st.index];
  const kind = verdict(st, res, fill);
  m.requests.add(1);
  allRequests.add(1);
  failed.add(kind !== '');
  if (kind !== '') m.fail[kind].add(1);
  if (kind !== 'connect' && kind !== 'other' && kind !== 'reset' && kind !== 'protocol') {
    m.latency.add(res.timings.duration);
    allLatency.add(res.timings.duration);
  }
  m.bytes.add((res.body || '').length);
  if (st.slow_after_ms > 0 && kind !== 'timeout' && res.timings.duration > st.slow_after_ms) m.slow.add(1);
  return kind === '';
}

export function setup() {
  const h = S.pre_run;
  if (h === null || !h.request) return;
  session = newSession();
  const st = h.request;
  const res = send(st, filler(false));
  const ok = res.error_code === 0 && (st.status.length ? st.status.includes(res.status) : res.status < 400);
  if (!ok) throw new Error('stacktune: pre_run ' + st.method + ' failed (status ' + res.status + '): no load is sent');
}

export default function () {
  if (session === null) session = newSession();
  if (!session.loggedIn) {
    session.loggedIn = run(S.login, true);
    return;
  }
  const ready = S.steps.filter((st) => st.needs.every((c) => c in session.captures));
  let total = 0;
  for (const st of ready) total += st.weight;
  let r = Math.random() * total;
  let pick = ready[ready.length - 1];
  for (const st of ready) { r -= st.weight; if (r < 0) { pick = st; break; } }
  run(pick, false);
  if (S.think && pick.think_s > 0) sleep(pick.think_s);
}
`
