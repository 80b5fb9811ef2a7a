// Package tune is stacktune's tuning loop on a user's own stack (`stacktune
// tune`): the same loop the demo runs on its embedded stack, with a
// decision a statistician would sign.
//
// Run measures the stack as it is against itself (abtest.NoiseFloor: the
// baseline, and the interval a step's effect must clear), diagnoses it
// (package diagnose: one bench run with the slow log captured, the access
// log of that window, the snapshot, the audit, indexes proven on a copy),
// then takes its steps in order: the server's settings (my.cnf, SET GLOBAL
// or restart), nginx directives, the proven indexes, and the host-wide
// settings when allowed. Each step's changes go through apply's transaction
// (backed up, validated, read back, rolled back on failure) and are decided
// by an interleaved A/B test (abtest.Run: runs of the state before and of
// the step in ABBA blocks, so drift hits both; a bootstrap interval of the
// ratio of medians with Mann-Whitney as the second opinion; more runs while
// undecided, up to a bound). A step that is worse is rolled back; one that
// is better or within noise is kept (sound advice is not undone on noise)
// and said to be within noise. Then the tuned stack is diagnosed again.
//
// What the loop cannot change itself (application code: N+1 patterns with
// their endpoint, caches, connection pools; memcached and Redis settings;
// durability and observability trade-offs) is listed with its evidence.
//
// The result is the demo's loop result (report.Loop renders it) with each
// step's interval and the noise floor, and both diagnoses.
package tune
