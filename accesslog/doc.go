// Package accesslog reads web server access logs one line at a time into
// Records, for the HTTP profiler (package httpprof, `stacktune http`). It is
// the hot path of a profiler that reads hundreds of MB/s on two cores, so a
// Parser scans bytes by hand, allocates nothing per line, and uses no
// regular expressions; Records alias the line.
//
// # Formats
//
//   - nginx: NewNginx compiles any log_format string (Combined, Common,
//     Main, CombinedTimed, or one read from nginx.conf with
//     NginxFormatFromConfig), including escape=json formats.
//   - Apache httpd: NewApache compiles a LogFormat string (ApacheCommon,
//     ApacheCombined, ApacheCombinedD, ApacheVhostCombined, or any other).
//   - LTSV (NewLTSV) and JSON lines (NewJSON), read by label or key.
//   - Detect picks one of these from a log's first lines: the one that
//     reads most of them, which must read at least DetectMajority; the
//     bad lines are counted as skipped when the log is read. A Sample
//     gathers those lines as the log is read: the first DetectLines that
//     are not blank and not longer than the reader's line bound (longer
//     ones are counted and never kept, so a first line of gigabytes of
//     junk does not hide the log behind it). Every reader that detects a
//     format uses it; a failure is a *DetectError saying what was sampled.
//   - The registry (formats.go) lists every format stacktune names or
//     detects, each once: its name (FormatNames, Named, Lookup), whether
//     and in what order detection tries it, its parser and its
//     request-time hint. The commands' flags and messages read it, and
//     each format has a sample in testdata/formats that TestRegistry
//     detects.
//
// # Compiled formats
//
// nginx and Apache formats compile to one engine: a sequence of literals and
// variables. A variable's value runs up to the literal that follows it in
// the format: the first occurrence of that literal, except that
//
//   - a value between '"' literals ("$request", "%{User-Agent}i") ends at
//     the first '"' not escaped by a backslash, which covers Apache's \"
//     and escape=json's \", while nginx's default escaping writes \x22 and
//     has no raw quotes at all;
//   - a value followed by the format's last literal runs to that literal
//     at the end of the line, and a value at the end of the format runs to
//     the end of the line;
//   - $time_local is 26 bytes even when a space follows it, Apache's %t
//     runs to its ']', and nginx's upstream lists ($upstream_response_time
//     "0.010, 0.020 : 0.005", and every other $upstream_* but headers) go
//     on past ", " and " : ";
//   - two variables with nothing between them are split at the next space,
//     or at the '/' that starts a URI ("$host$request_uri"); a path
//     followed by its query string ("$uri?$args", "$uri$is_args$args",
//     "%U%q") is read as one URI.
//
// Variables that fill no Record field are consumed and ignored, so any
// format compiles. When a format has several sources of a field, the most
// precise wins: $request_uri or $request's target (as sent) over $uri?$args
// over $uri (which nginx normalises and rewrites), $request_method over
// $request's method, $msec over $time_iso8601 over $time_local,
// $body_bytes_sent over $bytes_sent (and %b/%B over %O), %D over %{ms}T
// over %T.
// nginx writes "-" for a missing value (and "" with escape=json): such a
// value leaves its field absent (its Has bit unset), except Apache's %b,
// where "-" means 0 bytes. Values are kept as logged (nginx's \xHH escapes
// stay in a URI) except in escape=json formats, whose method and URI are
// JSON-decoded.
//
// $time_local and %t are parsed by hand and the last second parsed is
// cached, so a line costs one 26-byte comparison for its time; numbers are
// parsed without strconv in the common forms.
//
// # Labeled formats
//
// LTSV and JSON lines name their fields. Both read the same labels (keys);
// when several are present the first listed wins:
//
//	time          msec (epoch seconds), time_iso8601, time_local, time, @timestamp, timestamp
//	              (time, @timestamp and timestamp may be any of the three forms;
//	              $time_local may be in brackets as Apache's %t writes it)
//	method        method, request_method; or from the request line
//	URI           request_uri, uri (with args or query_string appended), path; or
//	              from the request line
//	request line  req (ltsv.org, alp), request
//	status        status
//	bytes         body_bytes_sent, body_bytes, size (ltsv.org), bytes, bytes_sent
//	request time  request_time, reqtime (seconds, as alp), reqtime_microsec (ltsv.org)
//	upstream time upstream_response_time, apptime (alp), upstream_time
//	request length request_length, reqsize (ltsv.org): the bytes received, as
//	              nginx's $request_length and Apache's %I (mod_logio)
//
// Other labels (host, ua, referer, vhost, runtime, ...) are ignored. A line
// must say what was requested: one without a URI is rejected with "missing
// field". JSON values may be strings or numbers; null, "" and "-" are
// absent. The JSON scanner is hand-written: it checks the structure (so a
// truncated line is told from one that is not JSON), decodes string escapes
// including \u surrogate pairs, and skips nested objects and arrays with a
// depth counter. Only top-level keys are read.
//
// # Bad input
//
// Parse sets every field of the Record but Offset, which is the caller's
// (the line's position in its input). It never panics; a line it cannot
// use gives ok=false and one of the
// Reason constants, a stable string to count: "empty line", "binary junk"
// (a NUL byte), "truncated line" (the line ends before its format does),
// "line does not match format", "malformed request line" (including the
// "-" nginx logs for a request it could not read, and TLS handshakes sent
// to an HTTP port), "bad status", "bad time", "bad bytes", "bad request
// time", "bad upstream time", "bad request length", "not JSON", "not
// LTSV", "missing field". A
// trailing '\r' is ignored. Lines of any length are read in time linear in
// their length. A raw '"' inside a quoted value, which only nginx's
// escape=none writes, makes the line "line does not match format": it
// cannot be told from a line with more fields than the format.
//
// # nginx configuration
//
// NginxFormatFromConfig finds a log_format in nginx.conf and the files it
// includes. The configuration is read by package nginxconf, the one nginx
// configuration reader of stacktune (it also edits configurations), whose
// tokenizer follows nginx's own (ngx_conf_read_token): quoting, escapes,
// comments, blocks, include globs relative to the configuration's
// directory. The log_format lookup itself is nginxconf's
// (Config.LogFormat), the one the audit's snapshot uses too, with nginx's
// rules: a snippet's top level is the http context, and a name defined
// twice, the predefined combined included, is an error.
// github.com/tufanbarisyildirim/gonginx was considered; it keeps quotes and
// escapes in its tokens and reports lines but not files, both of which
// matter here.
//
// # Request time hints
//
// NoRequestTimeHint gives the configuration lines that make nginx or Apache
// log the request time, for a profile of a log that has none, and Fields
// says which fields a parser's format can fill.
package accesslog
