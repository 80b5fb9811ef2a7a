// Package history remembers every benchmark run and turns the runs into the
// score transitions ISUCON teams keep by hand: one step per change
// (label), how many runs it had, their median, and the change against the
// first and the previous step. It holds the data only: package report
// renders the steps as a table (report.Transitions) and a chart
// (report.TransitionsChart).
//
// # Store
//
// Open opens (creating when missing) an SQLite database through the pure-Go
// driver modernc.org/sqlite ("sqlite"), so stacktune needs no cgo.
// DefaultPath picks $STACKTUNE_HISTORY, else
// $XDG_DATA_HOME/stacktune/history.db, else
// ~/.local/share/stacktune/history.db.
//
// Several stacktune processes may append to one database at once (two
// terminals benchmarking two things, or a benchmark while another reads the
// table). Every connection sets, in this order, a busy timeout (10 s: a
// writer waits for the lock instead of failing with SQLITE_BUSY), WAL
// journaling (readers never block the writer, and the writer never blocks
// readers) and synchronous=NORMAL (safe with WAL; a crash of the machine can
// lose the last runs but never corrupts the file). Transactions begin
// IMMEDIATE, taking the write lock at the start, so a transaction that reads
// and then writes cannot deadlock against another process doing the same.
// Add is one INSERT in such a transaction. Where waiting could deadlock,
// SQLite answers SQLITE_BUSY at once instead of waiting (it happens when
// two processes create the same new file at the same moment, about one
// open in thirty in the two-process test); Open, Add and Runs then try
// again with backoff until the busy timeout has passed.
//
// The schema is versioned. The schema_version table holds one row per
// applied migration; Open applies the missing ones of the append-only list
// in migrate.go in one IMMEDIATE transaction, so when two processes create
// the same new database, one migrates and the other then finds nothing to
// do. Opening a database whose version is newer than the build fails with
// ErrNewerSchema rather than writing rows an older schema might not
// describe. Version 1 has one table, runs: times are Unix nanoseconds,
// durations nanoseconds, the full result JSON is kept as text in details.
//
// # The run ledger
//
// Version 2 makes the table a ledger of every run: the command that
// recorded it (Command* codes: bench, diagnose, tune, ab, tpcc,
// knob_search), its failure, the hash of its load (ScenarioHash), the data
// reset used, the stack's versions, the app's git commit (GitCommit reads
// .git itself, asking git only when it cannot), its duration, and the tune
// or ab session and arm it belongs to. A Session holds that session's
// state (running until EndSession), its noise floor and its Decisions.
// Artefacts (the digest, the access-log profile, the per-request SQL, the
// profile, the snapshot, the change set, the audit) are stored with a run
// gzipped, each at most MaxArtefactBytes before compression (a larger one
// is recorded as too large, without its data); Add prunes them to
// Store.Retention (the artefacts of runs beyond a count or an age go, the
// runs stay). List reads runs without their details for pages and
// filters (label, commit prefix, scenario name or hash, command, session,
// an ID to start after). Runs, which the score transitions are made of,
// leaves diagnose's runs out (the capture slows the server down) unless
// asked for them.
//
// Credentials are never stored: Add removes URL user information
// (user:password@, token@) from the target and from every string in the
// details JSON (StripCredentials). Details without any are stored byte for
// byte; details that needed scrubbing are re-encoded (keys then sorted).
// Only URLs with a scheme are recognised; secrets in query strings,
// headers or DSNs without a scheme are the caller's to leave out.
//
// # Transitions
//
// Transitions groups consecutive runs with the same label into a Step, in
// the order given (Runs returns them oldest first). A label that comes back
// after another one starts a new step marked Again: re-measuring the
// baseline after a revert is a row of its own, where it happened. A step
// has the median (the mean of the middle two for an even count), minimum
// and maximum score, the runs that passed, XFirst (median over the first
// step's median) and relative changes against the first and previous step,
// and the medians of the runs' requests per second and p99 latency. When
// the first step's median is 0 (a failed baseline), ratios against it are
// undefined: HasFirst is false, they are left 0, tables show "-", and JSON
// has null (never NaN, which JSON cannot carry). HasPrev does the same for
// the previous step.
//
// # Rendering
//
// Tables (text, Markdown, JSON) and charts (SVG and PNG via gonum/plot,
// offline HTML via go-echarts) of the steps are package report's:
// report.Transitions and report.TransitionsChart, with report.Score
// formatting a score. Step.MarshalJSON is the JSON shape of a step, used
// by report's JSON table.
package history
