package appcpu

import (
	"context"
	"time"

	"github.com/stacktune/stacktune/internal/skip"
)

// Bounds of a capture and of what an endpoint keeps.
const (
	// MaxSamples is the most samples a capture keeps: about 8 minutes
	// of 999 Hz on two busy cores.
	MaxSamples = 1_000_000
	// MaxDepth is the most frames kept of one stack (the leaf side).
	MaxDepth = 128
	// MaxFrameName cuts a frame's name (C++ templates can run long).
	MaxFrameName = 256
	// MaxFrames is the most distinct frame names a capture interns;
	// further ones are named OtherFrame.
	MaxFrames = 200_000
	// MaxStacks is the most distinct stacks an endpoint keeps.
	MaxStacks = 2000
	// TopFunctions is how many functions an endpoint lists.
	TopFunctions = 10
)

// OtherFrame names frames past MaxFrames, OtherStacks the stacks past
// MaxStacks.
const (
	OtherFrame  = "(other frames)"
	OtherStacks = "(other stacks)"
)

// Symbols says how a capture's frames are named (stable codes).
const (
	// SymbolsNative: native code and Go, named from the binaries' symbol
	// tables.
	SymbolsNative = "native"
	// SymbolsPerfMap: some frames named from a runtime's perf map
	// (/tmp/perf-PID.map: Node --perf-basic-prof, PHP's JIT).
	SymbolsPerfMap = "perf_map"
	// SymbolsInterpreter: the app runs in an interpreter that publishes
	// no perf map: the frames are the interpreter's (execute_ex,
	// zend_*), not the script's functions.
	SymbolsInterpreter = "interpreter"
	// SymbolsGo: Go's own profiler (pprof).
	SymbolsGo = "go_pprof"
)

// Sample is one on-CPU stack.
type Sample struct {
	// Time is when it was taken (zero for a pprof sample: see Window).
	Time time.Time
	PID  int
	// Stack are frame IDs (Capture.Frames), the root first.
	Stack []int32
	// Weight is the CPU time it stands for.
	Weight time.Duration
	// Window is, for a sample without a time, the profile's window.
	WindowStart, WindowEnd time.Time
	// Trace and Route are its pprof labels, when the app set them.
	Trace, Route string
}

// Capture is what a sampler took.
type Capture struct {
	// Sampler is "perf" or "pprof".
	Sampler string
	// Symbols is one of the Symbols* codes.
	Symbols string
	// PIDs are the processes sampled (perf).
	PIDs    []int
	Frames  []string
	Samples []Sample
	// Skipped counts what was not kept, by reason.
	Skipped skip.Counts
	// Notes say what to read the capture with.
	Notes []string

	index map[string]int32
}

// NewCapture returns an empty capture.
func NewCapture(sampler string) *Capture {
	return &Capture{Sampler: sampler, Skipped: skip.Counts{}, index: map[string]int32{}}
}

func (c *Capture) skip(reason skip.Reason, n int64) { c.Skipped.Add(reason, n) }

// Frame interns a frame name.
func (c *Capture) Frame(name string) int32 {
	if len(name) > MaxFrameName {
		name = name[:MaxFrameName]
	}
	if id, ok := c.index[name]; ok {
		return id
	}
	if c.index == nil {
		c.index = map[string]int32{}
		for i, f := range c.Frames {
			c.index[f] = int32(i)
		}
		if id, ok := c.index[name]; ok {
			return id
		}
	}
	if len(c.Frames) >= MaxFrames {
		if name != OtherFrame {
			c.skip(ReasonFramesPastBound, 1)
		}
		return c.Frame0(OtherFrame)
	}
	id := int32(len(c.Frames))
	c.Frames = append(c.Frames, name)
	c.index[name] = id
	return id
}

// Frame0 interns name past the bound (the one overflow name).
func (c *Capture) Frame0(name string) int32 {
	if id, ok := c.index[name]; ok {
		return id
	}
	id := int32(len(c.Frames))
	c.Frames = append(c.Frames, name)
	c.index[name] = id
	return id
}

// Add keeps a sample (false past MaxSamples: counted as skipped).
func (c *Capture) Add(s Sample) bool {
	if len(c.Samples) >= MaxSamples {
		c.skip(ReasonSamplesPastBound, 1)
		return false
	}
	if len(s.Stack) > MaxDepth {
		s.Stack = s.Stack[len(s.Stack)-MaxDepth:]
		c.skip(ReasonStackCut, 1)
	}
	c.Samples = append(c.Samples, s)
	return true
}

// Sampler takes the app's on-CPU stacks between Start and Stop.
type Sampler interface {
	// Name is "perf" or "pprof".
	Name() string
	// Start begins sampling; it returns once samples are being taken.
	Start(ctx context.Context) error
	// Stop ends sampling and returns what was taken.
	Stop(ctx context.Context) (*Capture, error)
}
