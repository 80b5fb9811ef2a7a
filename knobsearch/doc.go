// Package knobsearch is stacktune's knob search: it looks for the MySQL
// or MariaDB configuration under which a workload (TPC-C, or an HTTP
// scenario) scores best, within rules it never breaks, and proves the
// answer against the server as found and against the audit's advice.
// It is the 2015 tpcc-mysql contest's five days of hand tuning, done by a loop.
//
// # The rules (Constraints)
//
//   - Fixed settings (--fix NAME=VALUE) are never touched: their knobs
//     are not in the space and no configuration writes them (the 2015 tpcc-mysql contest's
//     contest fixed innodb_doublewrite=1 and
//     innodb_flush_log_at_trx_commit=1).
//   - The memory budget is a hard limit: a candidate is tried only when
//     the audit's own budget (advise.BudgetWith: buffer pool, the other
//     global buffers, per-connection buffers × max_connections, the other
//     services the snapshot saw and the OS reserve) fits the RAM, or
//     MemoryLimit when that is smaller. The buffer pool's range ends at
//     what the budget leaves; a candidate over it (a large pool with a
//     larger log buffer) is counted in Result.Skipped and never applied.
//     The rules between variables the server enforces (mysqlvar.Conflicts:
//     the redo log at least the log buffer on MariaDB) are checked the
//     same way.
//   - Knobs that take a restart are known from the version table
//     (mysqlvar.Dynamic), and stay out when the server cannot be
//     restarted.
//   - Knobs that can lose commits on a crash are in the space only with
//     AllowDurabilityLoss.
//
// # The loop (Run)
//
// Every trial starts from the same bytes: the workload's Reset (a data
// dir restore for TPC-C: sandbox's RestoreData, or a stopped
// server's copy on a user's host), then the previous trial's
// configuration is undone and the trial's applied, through package
// apply's transaction (the my.cnf drop-in, SET GLOBAL or a restart, read
// back, rolled back on failure), then the workload runs once. A
// configuration the server refuses is a failed trial and the search goes
// on; a reset or an undo that fails stops it, since the next trial could
// not start from the same place. Whatever happens, the server is left as
// it was found: the last configuration is undone, even after Ctrl-C.
//
//  1. The server as found is measured while a snapshot is taken (package
//     collect): its variables are the base of every knob, its audit
//     (package advise) gives the audit's configuration, and its Linux
//     layer the memory budget.
//  2. Two starting points: the audit's configuration (its MySQL changes
//     but observability), and the 2015 tpcc-mysql contest's knobs (the buffer pool as large
//     as the budget allows, a large redo log and log buffer, 90% dirty
//     pages, an LRU scan depth of 2000, no neighbour flushing). The
//     audit's changes to variables outside the space are kept in every
//     later candidate: the search tunes on top of the audit.
//  3. Screening: Screen samples of a maximin Latin hypercube over every
//     knob (each knob's range cut in Screen strata, one sample in each),
//     a sample over the budget drawn again inside its cells. The knobs
//     are ranked by |Spearman's rho| between their value and the score
//     over every trial so far.
//  4. The model: the Top knobs are searched with TPE (below), Trials
//     times, the others held at the best starting point's values.
//     After every Options.Anchor trials of steps 2-4 (default 6), and
//     after the last, the server as found is measured again: an anchor.
//     Each trial's Relative is its score over the as-found score at its
//     time, interpolated between the anchors before and after it, and
//     the ranking, the model and the best use it, not the raw score. On
//     a shared host whose speed moves in steps or drifts (on this
//     project's 2-core VM, two model trials that differed in two minor
//     knobs scored 16,245 and 9,678 tpmC), a raw score ranks the host's
//     spells, not the knobs; the anchors cost a trial in seven.
//     A step between two anchors still mis-scores the trials between
//     the step and the next anchor; the comparison (step 5) judges the
//     answer in any case.
//  5. The best candidate (a starting point or a model trial: screening
//     samples carry random values of every knob and are never the
//     answer) is measured again against the server as found, the audit's
//     configuration and Options.Compare (MySQLTuner's advice, in the
//     benchmark), Repeats rounds, each round in the mirror order of the
//     one before (A B C, C B A: a drift adds as much to every arm), and
//     package abtest decides each pair: the bootstrap interval of the
//     ratio of medians and Mann-Whitney's U must agree at 95%.
//  6. The configuration the comparison supports becomes a change set
//     (package changeset) that stacktune apply takes: each variable
//     from its running value, how it takes effect, and the comparison
//     as its evidence. Of the best and the audit's configuration, those
//     abtest found better than the server as found, the one with the
//     higher median (choose); none when neither was, and the change set
//     is empty. A single trial picks the best, and on a noisy host a
//     lucky one: its rounds judge it, and an unattended search does not
//     hand apply what they did not confirm (Result.ChangeSetFrom says
//     which, ChangeSetWhy on what evidence).
//
// # Why TPE
//
// The model is the Tree-structured Parzen Estimator (Bergstra, Bardenet,
// Bengio and Kégl, 2011), not a Gaussian-process Bayesian optimiser:
//
//   - the knobs are of mixed kinds (sizes on a log scale, integers,
//     enums such as innodb_flush_method): TPE models each with its own
//     density (kernels on the unit interval, smoothed counts for an enum)
//     where a GP needs a kernel for each kind and tends to treat enums
//     as numbers;
//   - a trial is a minute of a noisy machine and a search has a few
//     dozen: a GP's kernel length scales and noise level, fitted by
//     maximum likelihood on twenty noisy points, are fragile, while TPE
//     only splits the trials at a quantile of the score (the best 25%
//     against the rest) and proposes where the good trials are dense and
//     the others are not, which a few lucky or unlucky runs move little;
//   - the hard constraint is simple to keep: candidates are drawn from
//     the good trials' density and those over the memory budget are
//     dropped before the best ratio is taken, so none is ever run;
//   - it needs nothing beyond the standard library, and is fast
//     whatever the number of trials.
//
// The price is that TPE models knobs one by one, blind to interactions
// (a larger log buffer only matters with a larger redo log); the screening
// keeps the search to the few knobs that matter, where that matters
// least.
//
// # Workloads and servers
//
// Workload and Server are the two small interfaces the loop needs. TPCC
// runs package tpcc (tpmC is the score); HTTP runs a scenario or URL
// with package benchrun (the bench score). MySQL applies configurations
// through package apply. Tests give fakes of both.
package knobsearch
