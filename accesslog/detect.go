package accesslog

import (
	"bytes"
	"fmt"
	"strings"
)

// Main is the "main" log_format of nginx's sample nginx.conf and of the
// official Docker image: Combined and the X-Forwarded-For header.
const Main = Combined + ` "$http_x_forwarded_for"`

// ApacheVhostCombined is Debian's vhost_combined LogFormat.
const ApacheVhostCombined = `%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"`

// DetectMajority is the share of the sample lines the detected format must
// read. A few bad lines among the first ones (a TLS handshake sent to a
// plain HTTP port, a line cut by a crash, an HTML error page) do not stop
// detection; they are counted as skipped when the log is read, like any bad
// line.
const DetectMajority = 2.0 / 3

// DetectLines is how many lines a Sample keeps: the lines a log's format
// is detected from.
const DetectLines = 20

// Sample gathers the lines a log's format is detected from while the log
// is read, so detection needs no second read of the input (standard input,
// gzip) and holds no more than it keeps: the first DetectLines lines that
// are not blank and no longer than MaxLine, each copied. A longer line is
// counted, never kept; a reader that drops such lines itself (package
// chunk) says how many with SkipLong, where they were. Every reader that
// detects a format (stacktune http, diagnose, collect's http_log) gathers
// its lines here and detects with Sample.Detect.
type Sample struct {
	// MaxLine is the longest line kept (the reader's own bound, so the
	// sample holds lines the parser will read); 0 keeps any line.
	MaxLine int

	lines  []sampleLine
	inputs []string
	seen   int64 // lines offered in the current input, kept or not
	long   int64
}

// sampleLine is a kept line and where it was.
type sampleLine struct {
	text  []byte
	input int // index in inputs; -1 when the reader named none
	line  int64
}

// Begin says the lines that follow are those of the input name, numbered
// from 1 again.
func (s *Sample) Begin(name string) {
	s.inputs = append(s.inputs, name)
	s.seen = 0
}

// Add offers the input's next line (its line end may be included) and
// reports whether the sample is full.
func (s *Sample) Add(line []byte) bool {
	s.seen++
	if s.Full() {
		return true
	}
	line = bytes.TrimRight(line, "\r\n")
	if s.MaxLine > 0 && len(line) > s.MaxLine {
		s.long++
		return false
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return false
	}
	s.lines = append(s.lines, sampleLine{text: bytes.Clone(line), input: len(s.inputs) - 1, line: s.seen})
	return s.Full()
}

// SkipLong counts n lines longer than MaxLine that the reader dropped
// before the next line it offers.
func (s *Sample) SkipLong(n int64) {
	if n > 0 && !s.Full() {
		s.long += n
	}
	s.seen += n
}

// Full reports whether the sample has its DetectLines lines.
func (s *Sample) Full() bool { return len(s.lines) >= DetectLines }

// Lines are the kept lines, in order (without their line ends).
func (s *Sample) Lines() [][]byte {
	out := make([][]byte, len(s.lines))
	for i, l := range s.lines {
		out[i] = l.text
	}
	return out
}

// Long is the number of lines skipped as longer than MaxLine while the
// sample was not full.
func (s *Sample) Long() int64 { return s.long }

// DetectError is a log whose format was not detected: what was sampled
// and what each format made of it. Its message says so; the caller adds
// how to name the format (a command's flag).
type DetectError struct {
	// Inputs are the logs sampled.
	Inputs []string
	// Lines is the number of lines sampled, Long the lines skipped as
	// longer than MaxLine (bytes) on the way.
	Lines   int
	Long    int64
	MaxLine int
	// Best is the format that read the most lines (BestN of them), if
	// any read one.
	Best  string
	BestN int
	// Tried says, per format tried, why it did not fit.
	Tried []string
}

func (e *DetectError) Error() string {
	var b strings.Builder
	b.WriteString("accesslog: ")
	if len(e.Inputs) > 0 {
		b.WriteString(strings.Join(e.Inputs, ", ") + ": ")
	}
	if e.Lines == 0 {
		b.WriteString("cannot detect the format: no non-empty lines")
	} else {
		if e.BestN > 0 {
			fmt.Fprintf(&b, "no known format reads most of these lines (%s reads %d)", e.Best, e.BestN)
		} else {
			b.WriteString("no known format reads these lines")
		}
		fmt.Fprintf(&b, ": %s", plural(int64(e.Lines), "line"))
	}
	if e.Long > 0 {
		fmt.Fprintf(&b, " (%s longer than %s skipped)", plural(e.Long, "line"), sizeText(e.MaxLine))
	}
	if len(e.Tried) > 0 {
		b.WriteString(", tried " + strings.Join(e.Tried, ", "))
	}
	return b.String()
}

// Empty reports whether the sample held nothing at all: no line to detect
// from and none skipped (a log nothing was written to).
func (e *DetectError) Empty() bool { return e.Lines == 0 && e.Long == 0 }

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Detect picks a Parser for a log from its first lines: Sample.Detect on
// these lines (blank ones left out).
func Detect(lines [][]byte) (Parser, error) {
	s := Sample{}
	for _, l := range lines {
		if s.Add(l) {
			break
		}
	}
	return s.Detect()
}

// Detect picks a Parser for the sampled lines: the format that reads the
// most of them, among JSON lines, LTSV and these layouts, tried in this
// order (the first that reads every line wins; on a tie the earlier one):
// Apache combined + %D, nginx combined + $request_time
// $upstream_response_time, combined + $request_time, nginx's "main" (with
// X-Forwarded-For) + $request_time, Apache vhost_combined, nginx main,
// combined, Apache common + %D, nginx common + $request_time, common. It
// must read at least DetectMajority of the lines. Otherwise the error is a
// *DetectError naming every format tried, how many lines it read and why
// the first one failed, with the line's place in its input.
func (s *Sample) Detect() (Parser, error) {
	e := &DetectError{Inputs: s.inputs, Lines: len(s.lines), Long: s.long, MaxLine: s.MaxLine}
	if len(s.lines) == 0 {
		return nil, e
	}
	var best Parser
	try := func(name string, p Parser) bool {
		n, why := s.fit(p)
		if n > e.BestN {
			best, e.BestN, e.Best = p, n, name
		}
		if n < len(s.lines) {
			e.Tried = append(e.Tried, fmt.Sprintf("%s (%s; reads %d of %d)", name, why, n, len(s.lines)))
		}
		return n == len(s.lines)
	}
	for _, f := range detectOrder {
		p, err := f.New()
		if err != nil {
			return nil, err
		}
		if try(f.Label, p) {
			return p, nil
		}
	}
	if e.BestN > 0 && float64(e.BestN) >= float64(len(s.lines))*DetectMajority {
		return best, nil
	}
	return nil, e
}

// fit counts the sample lines p reads and describes the first failure.
func (s *Sample) fit(p Parser) (n int, why string) {
	var r Record
	for _, l := range s.lines {
		if ok, reason := p.Parse(l.text, &r); ok {
			n++
		} else if why == "" {
			why = fmt.Sprintf("line %d: %s", l.line, reason.Words())
			if l.input >= 0 && len(s.inputs) > 1 {
				why = fmt.Sprintf("%s line %d: %s", s.inputs[l.input], l.line, reason.Words())
			}
		}
	}
	return n, why
}
