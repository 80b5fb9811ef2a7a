package reqtrace

import (
	"sort"
	"time"
)

// cutGrace is how long after a client cut a request its statements are
// still its own.
const cutGrace = time.Second

// join ties a trace run's statements to its requests by time: a statement
// that starts within one request's time belongs to it. With more
// than one request in flight, a statement within several requests' times
// goes to the request its connection's previous statement went to, if
// that one is among them (an app that holds one connection per request,
// as PHP does); else it is ambiguous and counted apart. slack widens each
// request's time on both sides (the error of a source's clock: 0 for the
// proxy, whose times come from the same clock as the front's).
func (b *builder) join(reqs []Request, sts []traceStmt, slack time.Duration) {
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].Start.Before(reqs[j].Start) })
	sort.SliceStable(sts, func(i, j int) bool { return sts[i].start < sts[j].start })
	built := make([]*request, len(reqs))
	for i := range reqs {
		r := &reqs[i]
		name := r.Method + " " + r.Path
		if r.Trace != "" {
			name += " (trace " + r.Trace + ")"
		}
		built[i] = b.newRequest(r.Endpoint, name, r.End.Sub(r.Start).Seconds())
	}
	sl := slack.Nanoseconds()
	// end is the end of a request's time: a request the client cut keeps
	// the statements the app still starts before it notices (for
	// cutGrace), unless another request holds them.
	end := func(i int) int64 {
		if reqs[i].Cut {
			return reqs[i].End.UnixNano() + sl + cutGrace.Nanoseconds()
		}
		return reqs[i].End.UnixNano() + sl
	}
	owner := map[uint64]int{}
	var active []int
	next := 0
	for _, s := range sts {
		for next < len(reqs) && reqs[next].Start.UnixNano()-sl <= s.start {
			active = append(active, next)
			next++
		}
		// Requests that ended before this statement started hold no
		// later statement either.
		keep := active[:0]
		for _, i := range active {
			if end(i) >= s.start {
				keep = append(keep, i)
			}
		}
		active = keep
		// The requests whose time holds the statement's start. (Its
		// end can be a little later than the request's: a server's timer
		// counts the statement's cleanup after its result went out.)
		var cands []int
		for _, i := range active {
			if s.start <= end(i) {
				cands = append(cands, i)
			}
		}
		if len(cands) > 1 {
			var whole []int
			for _, i := range cands {
				if !reqs[i].Cut || s.start <= reqs[i].End.UnixNano()+sl {
					whole = append(whole, i)
				}
			}
			if len(whole) > 0 {
				cands = whole
			}
		}
		if len(cands) > 1 && sl > 0 {
			// Within the slack of several: those that hold it without
			// the slack, when that tells.
			var exact []int
			for _, i := range cands {
				if reqs[i].Start.UnixNano() <= s.start && s.start <= reqs[i].End.UnixNano() {
					exact = append(exact, i)
				}
			}
			if len(exact) > 0 {
				cands = exact
			}
		}
		pick := -1
		switch {
		case len(cands) == 1:
			pick = cands[0]
		case len(cands) > 1:
			if o, ok := owner[s.conn]; ok {
				for _, i := range cands {
					if i == o {
						pick = o
					}
				}
			}
		}
		st := stmt{class: s.class, dur: float64(s.end-s.start) / 1e9, rowsSent: s.rowsSent, rowsEx: s.rowsEx, exKnown: s.exKnown}
		if s.class < 0 {
			// A command that runs no statement: its time is the
			// request's DB time.
			if pick >= 0 {
				built[pick].dbTime += st.dur
			}
			continue
		}
		switch {
		case pick >= 0 && reqs[pick].Cut:
			owner[s.conn] = pick
			b.cutStmt(built[pick], st)
			b.skip(ReasonCutStatements, 1)
		case pick >= 0:
			owner[s.conn] = pick
			b.add(built[pick], st)
		case len(cands) > 1:
			b.ambiguous++
			b.unattributedStmt(st)
		default:
			b.unattributedStmt(st)
		}
	}
	for i, r := range built {
		if !reqs[i].Cut {
			b.finish(r)
		}
	}
	// The cut requests after the counted ones, so that an endpoint only
	// cut requests reached takes no place before them under MaxEndpoints.
	for i, r := range built {
		if reqs[i].Cut {
			b.skip(ReasonCutRequests, 1)
			b.cut(r)
		}
	}
}
