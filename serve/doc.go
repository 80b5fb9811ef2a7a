// Package serve is `stacktune serve`: a local web UI and JSON API over
// the history's run ledger, one binary, nothing loaded from elsewhere
// (pages from package report, the one script embedded).
//
// Pages (each URL a permalink): / lists the runs (filters label, commit,
// scenario; the score transitions; check two runs and compare), /runs/ID
// is a run (endpoints, query classes, per-request SQL, findings, flame
// graph), /diff?a=ID&b=ID compares two (ledger.Compare: the largest
// change first, the verdict, the session's decision), /sessions and
// /sessions/ID a tune's or ab's runs and decisions; while a session runs
// its page follows /api/sessions/ID/events (server-sent events: the
// server polls the database for the session's new runs and pushes each,
// then an end event).
//
// The API under /api/ serves the same data as JSON (docs/serve.md).
//
// Listening: CheckListen refuses an address that is not loopback without
// a token. With a token every request must carry it (Authorization:
// Bearer TOKEN, or ?token=TOKEN once, which sets an HttpOnly cookie and
// redirects to the page without it); it is compared in constant time.
package serve
