// Package scenario describes a load test of a web application in a file,
// runs it through loadgen and scores the result, the way an ISUCON
// benchmarker does: virtual users log in, browse pages picked by weight,
// every response is checked (status, content, CSS selector), and the run
// earns points for successes and loses points for failures.
//
// # Design
//
// Load (or Parse) reads a YAML file, or a TOML file when the name ends in
// ".toml", into one tree of yaml.Nodes (TOML is decoded and rebuilt as nodes,
// with the line of each key found in the source), then one validator walks
// the tree. It checks everything up front and reports every problem at once,
// each as
//
//	scenario.yaml:17: steps[2].expect.status: want an integer or a list of integers
//
// (an Errors of *FieldError): syntax errors, unknown fields (with a "did you
// mean" for typos), wrong types, bad durations, non-positive weights, empty
// steps, unknown template lists, bad placeholders, invalid CSS selectors,
// regular expressions and JSON paths, URLs that are not absolute http or
// https after joining base_url, methods that cannot carry the given form or
// body, duplicate step names, steps that can never run (they use a captured
// value no step that can run before them captures), a pre_run that is both
// or neither a request and a command, missing
// (named by their path), unreadable or empty data files; a list whose data
// is bad is reported once, not again as an unknown list wherever a
// template uses it. URL passwords in messages and default step names are
// masked ("user:***@"). Templates and selectors are compiled at load; a
// request only fills placeholders and parses the filled URL, and only steps
// with a selector parse their HTML response.
//
// Load reads only a regular file (a FIFO is refused without blocking, a
// device or directory with what it is), and every read is bounded by the
// constants of limits.go, each named in its message: the file's size
// (MaxFileSize), the steps (MaxSteps), a data file's size and values
// (MaxDataFileSize, MaxListValues) and all lists' together (MaxDataBytes,
// MaxDataValues), what YAML aliases and merge keys expand to (MaxAliasNodes,
// MaxAliasBytes: a few KB of nested merge keys can stand for billions of
// fields), and a TOML file's depth (MaxTOMLNesting, scanned before the
// decoder, whose cost grows with the square of the depth; YAML's parser
// bounds its own).
//
// Scenario.Workload returns a loadgen.Workload. Its Steps are the step names, with
// "login" first when the scenario has a login, and Sample.Step indexes them.
// Each virtual user (Workload.NewUser) has its own http.Client: its own
// Transport (MaxConnsPerHost 1, keep-alive as PlanOptions.KeepAlive says,
// HTTP/1.1), its own cookie jar, redirects not followed, and its own PRNG
// seeded with PlanOptions.Seed+id, so a run's choices are reproducible. Its
// first Do sends the login (a failed login is a sample of step "login", and
// the next Do tries again); every other Do picks a step by weight (among
// the steps whose captured values its session has), fills its
// templates, sends it, reads the body (up to MaxBody kept for checks, the
// rest read and counted), checks it, takes its captures, and then, when PlanOptions.ThinkTime
// is set, pauses for the step's think time (returning early when the run
// stops; the sample's End tells loadgen the request itself was over). Each request is bounded by PlanOptions.Timeout, or by the run's
// timeout (loadgen.RequestTimeout) when that is 0. Latency counts from the
// intended time loadgen passes to Do.
//
// Failures are classified into loadgen error kinds: a refused dial or a
// DNS failure is ErrConnect; no complete response within the timeout is
// ErrTimeout; a connection reset, or closed before the response or body was
// complete, is ErrReset; a malformed response is ErrProtocol; an unexpected
// status is ErrStatus ("status 500, want 200"); a failed substring or
// selector check, or a capture that does not match, is ErrCheck
// (`selector "#friends li" matched 0 elements, want at least 1`, `body lacks
// "Welcome, bob" (contains "Welcome, {{user}}")`, `capture csrf: selector
// "input[name=csrf]" matched no element`); anything else is ErrOther. Details are short and free
// of ephemeral ports, so loadgen's first-few-details lists stay readable.
//
// Score turns a loadgen.Result into points and a verdict (see Scoring):
//
//	Score = max(0, Σ_steps successes × success × score_weight − Σ_kinds failures × penalty(kind)
//	               − slow responses × penalties.slow)
//
// A run passes when something succeeded and no fail_if limit is crossed.
// The requests a run left unsent (the open model's backlog) or stalled in
// flight at its end (loadgen.Result.Unsent and Stalled: in flight for
// longer than the longest request the run completed, or when none
// completed) earn no points but count against the limits: as failed
// requests in the error rate, and on their own against fail_if.unfinished,
// so a saturated server cannot pass by answering a few requests slowly.
// Requests in flight at the end that are younger were cut by the end of
// the run (every connection of a closed run has one out): they are
// reported (InFlight) but count in neither. Score with nil weights scores a plain
// URL run (one step, weight 1).
//
// Slow responses (see Slow responses) are counted by the workloads of
// Plan.Run, one per run with its Tally, and scored by ScoreRun; Workload and
// Score leave them out.
//
// # Schema
//
// Every field but steps and each step's url is optional. Fields not listed
// here are errors, except top-level fields starting with "x-", which are
// ignored (a place for YAML anchors). YAML anchors, aliases and merge keys
// (<<) work anywhere; explicit fields win over merged ones.
//
//	name: isucon-like          # default: the file name without its extension
//	base_url: http://127.0.0.1:8080   # http or https; needed by relative step URLs
//	headers:                   # sent with every request (a step's own win)
//	  Accept-Language: ja      # values are templates, without {{user}} or captures
//	data:                      # lists for templates
//	  users: [alice, bob]      # inline: a list of scalars
//	  entry_ids: {file: ids.txt}   # one value per line, relative to this file;
//	                               # surrounding spaces trimmed, blank lines skipped;
//	                               # a missing file is reported with its path
//	session:
//	  login:                   # optional; sent once per user before its steps
//	    method: POST           # default POST with a form or body, else GET
//	    url: /login            # required
//	    form: {email: "{{users}}@example.com", password: "{{users}}"}
//	    body: ...              # instead of form: sent as is
//	    headers: {...}
//	    expect: {...}          # as for steps
//	    think: 0s
//	    score_weight: 1        # default 1
//	steps:                     # at least one
//	  - name: home             # default "METHOD url"; names are unique, "login" is taken
//	    weight: 10             # relative frequency, > 0; default 1
//	    score_weight: 10       # points multiplier, ≥ 0; default: weight
//	    method: GET            # GET HEAD POST PUT PATCH DELETE OPTIONS, any case;
//	                           # default POST with a form or body, else GET
//	    url: /                 # required; relative to base_url, or absolute
//	    form: {comment: hi}    # url-encoded, fields in file order; values are templates
//	    body: '{"a": 1}'       # a template sent as is; form and body are exclusive;
//	                           # set Content-Type in headers
//	    headers: {Content-Type: application/json}
//	    expect:
//	      status: 200          # an integer or a list; default: any status below 400
//	                           # (redirects are not followed: a 302 is a 302)
//	      contains: Welcome    # a substring, or a list that must all be in the body
//	      selector: "#friends li"   # CSS (cascadia); must match min_count elements
//	      min_count: 1         # default 1; needs selector
//	    think: 100ms           # pause after the step when think time is on; default 0
//	    slow_after: 3s         # a response taking longer is slow (see Slow
//	                           # responses); > 0; default none. Also on the login
//	    capture:               # session values from a successful response (see
//	      entry_id: {regexp: 'href="/entry/(\d+)"'}   # Captures); also on the login
//	      csrf: {selector: "input[name=csrf]", attr: value}
//	pre_run:                   # optional hook before each run (see Pre-run hook):
//	  method: POST             # an HTTP request with the fields of a step's
//	  url: /initialize         # request (method, url, form, body, headers,
//	  expect: {status: 200}    # expect), or
//	  command: [./init.sh, --all]   # a command: argv, run without a shell, or
//	                           # a string with shell: true (run by /bin/sh -c)
//	  shell: false             # default false
//	  timeout: 30s             # default 30s, at most 10m
//	scoring:                   # each field overrides DefaultScoring
//	  success: 1               # points per successful request × score_weight; default 1
//	  penalties:               # points per failed request, by kind, ≥ 0
//	    error: 10              # every kind without its own; default 10
//	    timeout: 20            # default 20
//	    check: 50              # default 50
//	    connect: 10            # also reset, protocol, status, other: default = error
//	    slow: 0                # points per slow response (on top of a failure's); default 0
//	  fail_if:                 # the run fails past any of these
//	    error_rate: 0.01       # a fraction or "1%"; default 0.01; 1 never fails;
//	                           # requests unsent or stalled at the end count as failed
//	    unfinished: 0.01       # share of requests unsent or stalled at the end;
//	                           # a fraction or "1%"; default 0.01; 1 never fails
//	    slow_rate: 5%          # share of slow responses among the requests of the
//	                           # steps with a slow_after; default 1 (never fails)
//	    p99: 2s                # also mean, p50, p90, max; default none
//
// Relative URLs resolve against base_url as links do in a browser: "/x"
// replaces base_url's path, "x" goes under its last "/". Durations are Go
// durations (100ms, 2s, 1m30s). TOML files use the same
// fields: [[steps]] tables, [session.login], inline tables for expect and
// form, durations as strings.
//
// # Templates
//
// url, form values, body, header values and expect.contains are templates:
//
//	{{users}}        a random value of list users; every {{users}} of one
//	                 request gets the same value (its checks too)
//	{{users.seq}}    the next value of users in order, round-robin shared by
//	                 all users of a plan (also one value per request)
//	{{user}}         the value this virtual user logged in with: in the login
//	                 request every list is bound to the user's own row (user
//	                 id N takes value N mod the list's length, so parallel lists
//	                 such as users and passwords stay aligned), and {{user}} is
//	                 the first list the login uses; needs a login using a list
//	{{user.nicks}}   list nicks' value of this virtual user's row: the value
//	                 its login used (or would use) for {{nicks}}
//	{{entry_id}}     the session's value of capture entry_id (see Captures)
//	{{rand 1 1000}}  a random integer in [1, 1000], fresh for each placeholder;
//	                 not in checks
//
// In a URL, values are escaped for where they land: path-escaped before the
// first '?', query-escaped after it; form values are form-encoded, and
// bodies, headers and checks get them as they are. A check is filled with
// the values of its own request: `contains: "Welcome, {{user}}"` on the step
// whose URL is /profile/{{users}} looks for the user logged in, and
// `contains: "{{users}}"` for the same random user as the URL. List and
// capture names are letters, digits, '_' and '-'; "user" and "rand" are
// reserved, and a capture cannot take a list's name. The login cannot use
// captured values (it is a session's first request), nor can the top-level
// headers or pre_run; pre_run cannot use {{user}} or {{user.LIST}} either.
//
// # Captures
//
// A step (or the login) may capture values from its response into the
// session, under a name its later requests' templates use:
//
//	capture:
//	  entry_id: {regexp: 'href="/diary/entry/(\d+)"'}  # RE2; group 1 when the regexp has
//	                                 # groups, else the whole match; group: N picks one
//	  token: {selector: "#post-form input[name=token]", attr: value}
//	  title: {selector: "h1"}        # the element's text, trimmed
//	  me: {json: data.user.id}       # a JSON path: keys, [N], ["a.b"], optional $.;
//	                                 # a string, a number or a boolean
//	  next: {header: Location}       # a response header
//
// Captures are taken from a response that passed its checks, in file
// order, and stored in the session (each virtual user's own: two sessions
// never see each other's values) only when they all match; one that does not
// match fails the step's check (ErrCheck: "capture entry_id: regexp ...
// matched nothing in the body") and the session keeps its former values. A
// value is at most MaxCapture bytes. A step's templates see the values as
// they were when it was sent, its own captures apply to later requests.
// A step that uses a captured value runs only once its session has it: a
// user picks by weight among the steps it can run, so "post a comment on
// the entry just viewed" follows a view. Load refuses a step that could
// never run (no step that can run before it captures what it uses).
//
// # Pre-run hook
//
// pre_run is called before each run of a bench, and before its warm-up, the
// way an ISUCON benchmarker calls POST /initialize: an HTTP request
// (method, url relative to base_url, form or body, headers, expect as a
// step's; the scenario's headers are sent too, no redirect is followed), or
// a command (command: an argv list run without a shell, in the scenario
// file's directory; with shell: true a string run by /bin/sh -c). It is
// bounded by its timeout (default 30s, at most 10m) and its process group
// is killed at the timeout. A hook that fails (no response, an unexpected
// status or failed check, a command that does not start or exits non-zero)
// fails the run with its message ("pre_run POST http://.../initialize:
// status 500, want 200") and no load is sent; the time it took is reported,
// never scored. See Scenario.RunPreRun.
//
// # Slow responses
//
// A step with slow_after counts its responses (whatever their status or
// check) that took longer, latency measured as for the run (from the
// intended send time in the open model), the login's too; timeouts are
// timeouts, not slow responses. Counts cover the measured phase as loadgen
// counts it (not the warm-up, not requests in flight at the end). Each costs
// penalties.slow (default 0), and past fail_if.slow_rate of the requests of
// the steps with a slow_after the run fails ("slow rate 12% > 5% (30 of 250
// requests slower than their step's slow_after)").
package scenario
