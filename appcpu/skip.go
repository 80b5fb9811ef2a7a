package appcpu

import (
	"strconv"

	"github.com/stacktune/stacktune/internal/skip"
)

// Reasons a sample, a frame or a line of perf script is not kept: their
// codes are the keys of Capture.Skipped and Profile.Skipped.
var (
	ReasonFramesPastBound  = skip.Define("frame_names_past_bound", "frame names past the bound (named "+OtherFrame+")")
	ReasonSamplesPastBound = skip.Define("samples_past_bound", "samples past the bound of a capture")
	ReasonStackCut         = skip.Define("stack_cut", "stacks cut to their "+strconv.Itoa(MaxDepth)+" leaf-side frames")
	ReasonNoStack          = skip.Define("perf_sample_without_stack", "perf samples without a stack")
	ReasonPerfLineTooLong  = skip.Define("perf_line_too_long", "perf script lines longer than "+strconv.Itoa(MaxPerfLine)+" bytes")
	ReasonFrameOutside     = skip.Define("perf_frame_outside_sample", "perf script frames outside a sample")
	ReasonFrameUnread      = skip.Define("perf_frame_line_unread", "perf script frame lines not read")
	ReasonSampleUnread     = skip.Define("perf_sample_line_unread", "perf script sample lines not read")
	// SkippedUnlabelled is the reason labelledOnly counts what it drops.
	SkippedUnlabelled = skip.Define("unlabelled_samples", "samples without a request's trace label (the program's own work around the app)")
)
