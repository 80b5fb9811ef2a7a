// Package tune is stacktune's tuning loop (`stacktune tune` on a user's
// stack; `stacktune demo` is the same loop on the embedded stack, with the
// reference app's own steps added), with decisions a statistician would
// sign.
//
// Run measures the stack as it is against itself (abtest.NoiseFloor: the
// baseline, and the interval a step's effect must clear; NoiseFloor alone
// measures only that), diagnoses it (package diagnose: one bench run with
// the slow log captured, the access log of that window, the snapshot, the
// audit, indexes proven on a copy), then takes its steps in order.
//
// # Steps
//
// A Step plans its Work from the diagnosis through a Pick, which hands
// each audit finding and each N+1 pattern to the first step that takes it:
// typed changes (turned into apply targets by apply.FromChangeSet and
// Options.Services) and targets of the caller's own. DefaultSteps are a
// user's stack's: the server's settings (MyCnf: a my.cnf drop-in, SET
// GLOBAL or restart), nginx directives (Nginx), PHP-FPM pools
// (AppWorkers), the proven indexes (Indexes), the unused, duplicate and
// redundant ones (IndexDrops: ignored while the test measures, dropped
// only once the step is kept, by its Work.Then) and the host-wide settings
// when allowed (HostWide, with the my.cnf settings that go with them). The demo
// adds the reference app's code fixes as steps of its own.
//
// Each step's changes go through apply's transaction (backed up,
// validated, read back, rolled back on failure) and are decided by an
// interleaved A/B test (abtest.Run: runs of the state before and of the
// step in ABBA blocks, so drift hits both; a bootstrap interval of the
// ratio of medians with Mann-Whitney as the second opinion; more runs
// while undecided, up to a bound). A switch between the states is apply's
// rollback or a new transaction; after a switch that restarted the server
// its buffer pool is warmed (every index read once, as the 2015 tpcc-mysql contest entry did), and
// Options.WarmUp adds an unrecorded run after every switch. In state B
// each run is followed by a check that the step still holds (a pre-run
// hook that recreates the schema would drop a new index: B would measure
// A). A step that is worse is rolled back; one that is better or within
// noise is kept (sound advice is not undone on noise) and said to be
// within noise.
//
// Then the tuned stack is diagnosed again and the steps run again on what
// that diagnosis finds new ("(2nd audit)"). At the end the services the
// kept steps changed are restarted (the server, the app), one cold run and
// one run after the buffer pool is warmed are measured, and every kept
// value is read back (the ISUCON5 runner-up's restart test: files, not runtime only).
//
// What the loop cannot change itself (application code: N+1 patterns with
// their endpoint, caches, connection pools; memcached and Redis settings;
// durability and observability trade-offs) is listed with its evidence
// and why.
//
// The Result is data only: every step with both arms' runs, its decision
// and interval, the noise floor, the restart check and both diagnoses;
// report.Loop renders it.
package tune
