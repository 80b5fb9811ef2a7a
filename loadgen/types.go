package loadgen

import (
	"context"
	"time"
)

// ErrKind classifies a failed request. The zero value means success.
type ErrKind string

// Error kinds, counted separately in results.
const (
	OK          ErrKind = ""
	ErrConnect  ErrKind = "connect"  // dial failed or refused
	ErrTimeout  ErrKind = "timeout"  // no complete response within Options.Timeout
	ErrReset    ErrKind = "reset"    // connection reset or closed mid-response
	ErrProtocol ErrKind = "protocol" // malformed response
	ErrStatus   ErrKind = "status"   // unexpected HTTP status (scenario expectation)
	ErrCheck    ErrKind = "check"    // content check failed (substring, CSS selector)
	ErrOther    ErrKind = "other"    // anything else
)

// Sample is the outcome of one request (or one scenario step).
type Sample struct {
	// Step indexes Workload.Steps (0 for a plain URL run).
	Step int
	// Latency is measured from the intended send time in the open model
	// (so a stalled server cannot hide its latency: coordinated omission is
	// corrected) and from the actual send time in the closed model.
	Latency time.Duration
	Status  int
	Bytes   int64
	Err     ErrKind
	// Detail is a short human message for the first errors of a kind
	// (e.g. "expected status 200, got 500"); may be empty.
	Detail string
	// End is when the request completed, for a User whose Do goes on
	// after it (a scenario's think time); zero means when Do returned.
	// Run counts a sample whose End is before the end of the measured
	// phase even when Do returns after it.
	End time.Time
}

// User is one virtual user: in the closed model it holds one connection
// (or one session) and issues requests back to back; in the open model the
// engine hands it each scheduled request. Do performs the next request or
// scenario step and reports its outcome; sent is when it was meant to start
// (the engine passes the intended time; Do measures latency from it). A
// User is used by one goroutine at a time.
type User interface {
	Do(ctx context.Context, intended time.Time) Sample
	Close() error
}

// Workload describes what a run does: the step names for reporting and a
// factory for users. Plain URL runs have one step.
type Workload struct {
	Steps   []string
	NewUser func(id int) (User, error)
	// Check, when set, is called by Run with the defaulted options before
	// any user is created; an error refuses the run (for example a URL
	// plan built with another keep-alive setting than the options).
	Check func(Options) error

	// url is set by URLWorkload: Run then drives the closed model with event
	// loops instead of one goroutine per user.
	url *urlWorkload
}
