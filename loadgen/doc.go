// Package loadgen is the load generator of `stacktune bench`: it drives a
// Workload's users against a server, bounded in time and count, and reports
// throughput, errors by kind and latency percentiles per step.
//
// # Models
//
// Closed model (Options.Rate == 0, like wrk and ab): Options.Connections
// goroutines each own one User (Workload.NewUser(i)) and issue requests back
// to back. Each request's latency runs from its actual send time. A slow
// server slows the client down with it, so a stall shows as one slow
// request, however many requests the stall held back: the "coordinated
// omission" of closed-loop generators.
//
// Open model (Rate > 0, like wrk2): requests are scheduled at evenly spaced
// intended times, start + k/Rate for ticket k = 0, 1, 2, ... The schedule is
// a clock, not a goroutine: a worker takes the next ticket from an atomic
// counter, sleeps until its intended time if that is still ahead, and
// sends; it never sends before the intended time, so the client cannot
// bunch requests up or free-run. Connections workers (each with its own
// User) serve the tickets. Latency is measured from the intended time, so
// when the server (or the client) falls behind, the requests that queue up
// carry their waiting time in their latency: coordinated omission is
// corrected. The queue is bounded: a ticket already late by more than the
// timeout when a worker takes it (the queue holds more than Rate×Timeout
// tickets) is not sent but counted as a timeout, its latency being its
// lateness. Result.Unsent counts the measured tickets due before the run
// stopped (and before the end of Duration) that were never sent: the
// backlog a server too slow for the rate leaves behind.
//
// # Bounds
//
// Run refuses an unbounded run: Duration or Requests must be set.
// Requests is exact: tickets are counted, so exactly Requests requests are
// started, and the run ends when the last of them completes (successful or
// not); nothing is sent beyond them. Duration bounds the measured window
// [start, start+Duration): a request that completes after the end is not
// counted, and the requests in flight at the end are aborted through the
// context handed to User.Do. Those are counted in Result.InFlight (in both
// models, warm-up requests still out included), so a server that never
// answers shows as requests in flight rather than as nothing at all; a
// sample whose Sample.End is before the end counts normally even when Do
// returns after it (a scenario user's think time). In the open model
// without warm-up, Requests + InFlight + Unsent is the number of tickets
// due in the measured window. Of the requests in flight, Result.Stalled
// counts those older at the end (end minus the origin of their latency)
// than the longest latency of the requests completed in the run
// (Result.StalledAfter), or all of them when none completed: the others
// were merely cut by the end, as every connection of a closed run
// normally has a request out when it ends. WarmUp runs the same load first; requests
// started during it are counted only in Result.WarmUpRequests (they are a
// separate phase, discarded), and the measured phase's start, counts and
// histograms are clean of them. MaxDuration (default 10m) bounds the whole
// run whatever else is set; ctx cancellation stops it too. Both return the
// partial result with an error (ErrMaxDuration, or ctx's cause); a caller
// running several runs passes each the time left of its own bound.
// Result.Stopped names the bound that ended a run. Connections is capped at
// MaxConnections and at what the open-files limit allows (CheckConnections).
//
// # Recording
//
// Each worker records into its own shard (with more than 64 users, users
// share 64 shards): per step an HDR histogram (hdrhistogram-go, 1µs to 60s,
// 3 significant digits), counts, bytes, errors by ErrKind and the first 5
// distinct details per kind. Samples are never kept; shards are merged at
// the end, and for Progress once a second. Latency percentiles cover the
// requests that got a response (whatever its status) and the timeouts;
// connect, reset and protocol errors have no meaningful latency and are
// only counted.
//
// # Concurrency contract for users
//
// Run calls NewUser for every user before starting, from one goroutine,
// and Close for every user after the last Do returns. A User's Do is
// called from one goroutine at a time (its worker), so a User needs no
// locking of its own state; different users run concurrently. Do must
// return within the timeout (RequestTimeout(ctx)) and promptly once ctx is
// canceled, which happens when the run stops; its result is then
// discarded. KeepAlive(ctx) gives Options.KeepAlive. Workload.Check, when set,
// can refuse options the plan was not built for.
//
// # The URL client
//
// URLWorkload is the fast path, a plain HTTP/1.1 client instead of net/http.
// The request is serialised once per plan; a connection is kept alive
// unless KeepAlive is false, in which case it is dialled per request and
// the request says "Connection: close". Responses are parsed in place from
// a 16 KiB buffer per connection by an incremental parser (status line,
// Content-Length, Transfer-Encoding chunked, Connection close/keep-alive,
// HTTP/1.0, interim 1xx, no body for HEAD, 204 and 304) that skips bodies
// without copying them anywhere and allocates nothing per request. A
// reused connection that the server had closed before answering is
// redialled and the request retried once; only a failed retry counts as
// an error. Errors are classified as connect, timeout, reset or protocol;
// statuses of 400 and above count as ErrStatus. https is refused.
//
// In the closed model on Linux, Run drives URL plans on event loops, as
// wrk does, instead of one goroutine per user: max(1, GOMAXPROCS-1) loops,
// each owning its share of the connections as non-blocking sockets in a
// level-triggered epoll set (TCP_NODELAY). A request is then one write,
// one read and a share of an epoll_wait, with no goroutine to wake per
// response: the netpoller's wake-ups and the runtime's thread hand-offs are
// what made a goroutine per connection cost noticeably more CPU per request
// than wrk. A loop reads every response an epoll_wait reported before it
// writes the next requests, in a burst, as wrk does through its EPOLLOUT
// round, so the server wakes once for several requests (no pipelining: a
// connection has one request in flight). One P is left to the runtime
// because a loop blocks in epoll_wait as a system call: with every P held
// so, sysmon keeps handing the Ps off between threads. Loops check the stop
// flag and the request deadlines every 10ms. No User is created then
// (Workload.NewUser is not called).
//
// The open model, and plans of other users, run on the goroutine users.
// For a URL plan each user owns one net.Conn and writes the request from
// inside the RawConn read of the response (after the runtime has reset the
// descriptor's readiness, so no wake-up can be lost), which saves the read
// that would otherwise find no response yet. The request timeout is a
// socket deadline, moved only when less than the timeout remains (moving
// it costs a runtime timer update), so it fires between 1× and 1.125× the
// timeout; any response slower than the timeout counts as a timeout all
// the same.
package loadgen
