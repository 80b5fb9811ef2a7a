package diagnose

import "github.com/stacktune/stacktune/history"

// LedgerRun is the diagnosis as a run of the history's ledger: its bench
// run (the first, when there are several) with what it saw as artefacts:
// the digest, the access-log profile of the window, the per-request SQL,
// the snapshot and the audit. Nil when the bench did not run.
func (r *Result) LedgerRun(label string) *history.Run {
	if r == nil || r.Bench == nil {
		return nil
	}
	runs := history.FromSummary(r.Bench)
	if len(runs) == 0 {
		return nil
	}
	run := runs[0]
	run.Label, run.Command = label, history.CommandDiagnose
	if r.Server != "" {
		run.Versions = map[string]string{"mysql": r.Server}
	}
	for _, a := range []struct {
		kind string
		v    any
		ok   bool
	}{
		{history.ArtefactDigest, r.Digest, r.Digest != nil},
		{history.ArtefactHTTP, r.HTTP, r.HTTP != nil},
		{history.ArtefactRequests, r.Requests, r.Requests != nil},
		{history.ArtefactSnapshot, r.Snapshot, r.Snapshot != nil},
		{history.ArtefactFindings, r.Audit, r.Audit != nil},
	} {
		if !a.ok {
			continue
		}
		if art, ok := history.JSONArtefact(a.kind, a.v); ok {
			run.Artefacts = append(run.Artefacts, art)
		}
	}
	return &run
}
