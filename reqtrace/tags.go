package reqtrace

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/slowlog"
	"github.com/stacktune/stacktune/sqltag"
)

// Bounds of the tag grouping.
const (
	// maxOpenRequests bounds the requests being built at once; past it
	// the least recently seen half are finished.
	maxOpenRequests = 100000
	// requestIdle finishes a request whose last statement is this much
	// older (in the log's time) than the latest statement read.
	requestIdle = time.Minute
	// sweepEvery is how many statements go between two sweeps.
	sweepEvery = 20000
)

// tagMethod says how tags tie statements to requests.
const tagMethod = "each statement's SQL comment tags (sqlcommenter, marginalia) name its request (the trace ID of traceparent, or request_id) " +
	"and its endpoint (route, or controller#action): statements with the same request are one request, at any concurrency"

// openReq is a request being built from tags.
type openReq struct {
	r       *request
	first   int64 // order first seen
	lastSeq int64 // order of its last statement
	last    time.Time
}

// tagSink groups statements by the request their tags name.
type tagSink struct {
	b        *builder
	open     map[string]*openReq
	seq      int64
	latest   time.Time
	n        int64
	untagged int64
	cut      int64 // texts cut by the source, without tags
}

func newTagSink(b *builder) *tagSink { return &tagSink{b: b, open: map[string]*openReq{}} }

func (t *tagSink) statement(s rawStmt) {
	tags := sqltag.Parse(s.text)
	st := stmt{class: t.b.classes.of(s.text), dur: s.end.Sub(s.start).Seconds(), rowsSent: s.rowsSent, rowsEx: s.rowsEx, exKnown: s.exKnown}
	if st.dur < 0 {
		st.dur = 0
	}
	if s.end.After(t.latest) {
		t.latest = s.end
	}
	key, ep := tags.Request(), tags.Endpoint()
	switch {
	case key != "":
		o, ok := t.open[key]
		if !ok {
			t.seq++
			o = &openReq{r: t.b.newRequest(ep, key, -1), first: t.seq}
			t.open[key] = o
		}
		if o.r.endpoint == "" && ep != "" {
			o.r.endpoint = ep
		}
		o.last, o.lastSeq = s.end, t.n
		t.b.add(o.r, st)
	case ep != "":
		t.b.untied(ep, st)
	default:
		t.untagged++
		if s.cut {
			t.cut++
		}
		t.b.unattributedStmt(st)
	}
	if t.n++; t.n%sweepEvery == 0 || len(t.open) > maxOpenRequests {
		t.sweep(len(t.open) > maxOpenRequests)
	}
}

// sweep finishes the requests idle for requestIdle of log time (and,
// when over the bound, the least recently seen half).
func (t *tagSink) sweep(half bool) {
	var idle []*openReq
	var keys []string
	for k, o := range t.open {
		if !t.latest.IsZero() && !o.last.IsZero() && t.latest.Sub(o.last) > requestIdle {
			idle = append(idle, o)
			keys = append(keys, k)
		}
	}
	for i, o := range idle {
		t.b.finish(o.r)
		delete(t.open, keys[i])
	}
	if half && len(t.open) > maxOpenRequests/2 {
		type kv struct {
			k string
			o *openReq
		}
		var all []kv
		for k, o := range t.open {
			all = append(all, kv{k, o})
		}
		sort.Slice(all, func(i, j int) bool { return all[i].o.last.Before(all[j].o.last) })
		for _, x := range all[:len(all)-maxOpenRequests/2] {
			t.b.finish(x.o.r)
			delete(t.open, x.k)
		}
		t.b.skip(ReasonFinishedEarly, int64(len(all)-maxOpenRequests/2))
	}
}

// close finishes every open request, in the order they were first seen,
// but the Options.DropLast whose statements came last: the requests in
// flight when a run ended, which its end may have cut.
func (t *tagSink) close() {
	all := make([]*openReq, 0, len(t.open))
	for _, o := range t.open {
		all = append(all, o)
	}
	var inFlight []*openReq
	if d := t.b.opt.DropLast; d > 0 {
		sort.Slice(all, func(i, j int) bool { return all[i].lastSeq < all[j].lastSeq })
		if d > len(all) {
			d = len(all)
		}
		for _, o := range all[len(all)-d:] {
			t.b.skip(ReasonInFlightRequests, 1)
			t.b.skip(ReasonInFlightStatements, o.r.stmts)
			t.b.attributed -= o.r.stmts
			t.b.unattributed += o.r.stmts
			for cls, a := range o.r.calls {
				t.b.unattrByCls[cls] += a.n
			}
		}
		inFlight = all[len(all)-d:]
		all = all[:len(all)-d]
	}
	sort.Slice(all, func(i, j int) bool { return all[i].first < all[j].first })
	for _, o := range all {
		t.b.finish(o.r)
	}
	// The requests left in flight, after the counted ones (as a trace
	// run's cut requests): their calls by endpoint, apart.
	for _, o := range inFlight {
		t.b.cut(o.r)
	}
	t.open = map[string]*openReq{}
	if t.untagged > 0 {
		t.b.note("%d of %d statements carry no request tags (no SQL comment with traceparent, request_id or route): they are tied to no request", t.untagged, t.n)
	}
	if t.cut > 0 {
		t.b.note("%d untagged statements had their text cut by the source: a tag at the end of a long statement is lost (performance_schema keeps performance_schema_max_sql_text_length bytes)", t.cut)
	}
}

// FromSlowLog groups the statements of slow logs by their tags: the
// per-request view of a run captured at long_query_time=0, whatever its
// concurrency (see the package documentation). Times and rows examined
// are the log's.
func FromSlowLog(ctx context.Context, inputs []input.Input, opt Options) (*Report, error) {
	b := newBuilder(opt)
	t := newTagSink(b)
	var p slowlog.Parser
	var perr error
	for _, in := range inputs {
		var skipped int64
		cs, err := slowlog.Split(chunk.WithContext(ctx, in.R), chunk.Options{}, func(c slowlog.Chunk) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			p.ParseSplit(c, func(ev *slowlog.Event) {
				if ev.Admin || len(ev.Query) == 0 {
					skipped++
					return
				}
				end := ev.Time
				start := end.Add(-time.Duration(ev.QueryTime * float64(time.Second)))
				t.statement(rawStmt{start: start, end: end, text: ev.Query, rowsSent: ev.RowsSent, rowsEx: ev.RowsExamined,
					exKnown: ev.Has&slowlog.HasRowsExamined != 0})
			})
			return nil
		})
		b.skip(ReasonAdminOrEmpty, skipped)
		p.Stats.AddSplit(cs)
		if err != nil {
			perr = fmt.Errorf("%s: %w", in.Name, err)
			break
		}
	}
	t.close()
	b.skipped.Merge(p.Stats.Skipped)
	rep := b.report(SourceSlowLogTags, tagMethod)
	return rep, perr
}
