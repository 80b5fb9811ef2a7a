package refapp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/pprof"
	"runtime"
	rpprof "runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Config.Profiling serves what the app-CPU profiler's tests (package
// appcpu, `stacktune endpoints --profile`) measure the app with:
//
//   - GET /work/burn: CPU in one named function, burnCPU (a hash chain
//     of BurnRounds rounds, about 20 ms, or Config.BurnRounds), no SQL;
//   - GET /work/wait: one statement that waits on the server (SELECT
//     SLEEP(WaitSeconds): long enough that the app's own timer, which
//     counts its wake-up on a busy host, is within a few percent), almost
//     no CPU;
//   - GET /work/self: the app's own measure of those pages, per route:
//     requests, the handler's CPU (its thread's clock, the goroutine
//     locked to it) and the time of its statements (JSON, SelfReport);
//   - /debug/pprof/ (Go's handlers), every request's samples labelled
//     with its trace ID (trace_id, from its traceparent) and its route.

// BurnRounds and WaitSeconds size the two pages.
const (
	BurnRounds  = 12_000_000
	WaitSeconds = 0.2
)

// SelfRoute is the app's own measure of one route's requests.
type SelfRoute struct {
	Requests int64   `json:"requests"`
	CPUMs    float64 `json:"cpu_ms"`
	DBMs     float64 `json:"db_ms"`
}

// SelfReport is GET /work/self: route pattern → its measure.
type SelfReport map[string]SelfRoute

type selfMeter struct {
	mu     sync.Mutex
	routes SelfReport
}

func (m *selfMeter) add(route string, cpu, db time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.routes[route]
	r.Requests++
	r.CPUMs += float64(cpu) / 1e6
	r.DBMs += float64(db) / 1e6
	m.routes[route] = r
}

// profilingRoutes adds the pages and handlers of Config.Profiling.
func (s *Server) profilingRoutes(mux *http.ServeMux) {
	m := &selfMeter{routes: SelfReport{}}
	measured := func(route string, h func(w http.ResponseWriter, r *http.Request) (db time.Duration)) {
		mux.HandleFunc(route, labelled(route, func(w http.ResponseWriter, r *http.Request) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start := threadCPU()
			db := h(w, r)
			m.add(route, threadCPU()-start, db)
		}))
	}
	measured("GET /work/burn", func(w http.ResponseWriter, r *http.Request) time.Duration {
		rounds := BurnRounds
		if s.burnRounds > 0 {
			rounds = s.burnRounds
		}
		sum := burnCPU(rounds)
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("burnt " + strconv.FormatUint(sum, 16) + "\n"))
		return 0
	})
	measured("GET /work/wait", func(w http.ResponseWriter, r *http.Request) time.Duration {
		start := time.Now()
		var v int
		err := s.db.QueryRowContext(r.Context(), "SELECT SLEEP(?)", WaitSeconds).Scan(&v)
		db := time.Since(start)
		if err != nil {
			s.fail(w, err)
			return db
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("waited\n"))
		return db
	})
	mux.HandleFunc("GET /work/self", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		b, _ := json.Marshal(m.routes)
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
}

// labelled runs h with its request's pprof labels: the trace ID of its
// traceparent and its route.
func labelled(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tp := r.Header.Get("traceparent")
		trace := ""
		if validTraceparent(tp) {
			trace = tp[3:35]
		}
		rpprof.Do(r.Context(), rpprof.Labels("trace_id", trace, "route", route), func(ctx context.Context) {
			h(w, r.WithContext(ctx))
		})
	}
}

// burnCPU is the CPU of GET /work/burn: a chain of multiply-xor rounds
// the compiler cannot fold.
//
//go:noinline
func burnCPU(rounds int) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < rounds; i++ {
		h ^= uint64(i)
		h *= 1099511628211
		h ^= h >> 29
	}
	return h
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
