package accesslog

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Main is the "main" log_format of nginx's sample nginx.conf and of the
// official Docker image: Combined and the X-Forwarded-For header.
const Main = Combined + ` "$http_x_forwarded_for"`

// ApacheVhostCombined is Debian's vhost_combined LogFormat.
const ApacheVhostCombined = `%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"`

// candidate is a format Detect tries.
type candidate struct {
	name   string
	apache bool
	format string
}

// candidates are tried in order; the first that reads the sample wins. An
// Apache %D is an integer (microseconds) and nginx's $request_time always
// has three decimals; the candidates insist on that to tell them apart. The
// plain combined and common layouts are the same in nginx and Apache, so
// they are named without a server and read as Apache does (a "-" size is 0).
var candidates = []candidate{
	{"apache combined_d", true, ApacheCombinedD},
	{"nginx combined+request_time+upstream_response_time", false, CombinedTimed},
	{"nginx combined+request_time", false, Combined + ` $request_time`},
	{"nginx main+request_time", false, Main + ` $request_time`},
	{"apache vhost_combined", true, ApacheVhostCombined},
	{"nginx main", false, Main},
	{"combined", true, ApacheCombined},
	{"apache common_d", true, ApacheCommon + ` %D`},
	{"nginx common+request_time", false, Common + ` $request_time`},
	{"common", true, ApacheCommon},
}

// DetectMajority is the share of the sample lines the detected format must
// read. A few bad lines among the first ones (a TLS handshake sent to a
// plain HTTP port, a line cut by a crash, an HTML error page) do not stop
// detection; they are counted as skipped when the log is read, like any bad
// line.
const DetectMajority = 2.0 / 3

// Detect picks a Parser for a log from its first lines: the format that
// reads the most of them, among JSON lines, LTSV and these layouts, tried in
// this order (the first that reads every line wins; on a tie the earlier
// one): Apache combined + %D, nginx combined + $request_time
// $upstream_response_time, combined + $request_time, nginx's "main" (with
// X-Forwarded-For) + $request_time, Apache vhost_combined, nginx main,
// combined, Apache common + %D, nginx common + $request_time, common. It
// must read at least DetectMajority of the lines. The error names every
// format tried, how many lines it read and why the first one failed.
func Detect(lines [][]byte) (Parser, error) {
	var sample [][]byte
	for _, l := range lines {
		l = bytes.TrimRight(l, "\r\n")
		if len(bytes.TrimSpace(l)) > 0 {
			sample = append(sample, l)
		}
	}
	if len(sample) == 0 {
		return nil, errors.New("accesslog: cannot detect the format: no non-empty lines")
	}
	var (
		best     Parser
		bestN    int
		bestName string
		tried    []string
	)
	try := func(name string, p Parser) bool {
		n, why := fit(p, sample)
		if n > bestN {
			best, bestN, bestName = p, n, name
		}
		if n < len(sample) {
			tried = append(tried, fmt.Sprintf("%s (%s; reads %d of %d)", name, why, n, len(sample)))
		}
		return n == len(sample)
	}
	if try("json", NewJSON()) || try("ltsv", NewLTSV()) {
		return best, nil
	}
	for _, c := range candidates {
		p, err := c.compile()
		if err != nil {
			return nil, err
		}
		if try(c.name, p) {
			return p, nil
		}
	}
	if bestN > 0 && float64(bestN) >= float64(len(sample))*DetectMajority {
		return best, nil
	}
	head := "no known format reads these lines"
	if bestN > 0 {
		head = fmt.Sprintf("no known format reads most of these lines (%s reads %d)", bestName, bestN)
	}
	return nil, fmt.Errorf("accesslog: %s: %d lines, tried %s; for a custom nginx log_format use its format string",
		head, len(sample), strings.Join(tried, ", "))
}

func (c candidate) compile() (Parser, error) {
	var p Parser
	var err error
	if c.apache {
		p, err = NewApache(c.format)
	} else {
		p, err = NewNginx(c.name, c.format)
	}
	if err != nil {
		return nil, err
	}
	s := p.(*seqParser)
	s.name = c.name
	for i := range s.items {
		if s.items[i].role == rSeconds {
			// nginx writes $request_time as seconds with three
			// decimals; an integer is Apache's %D.
			s.items[i].flags |= fMillis
		}
	}
	return p, nil
}

// fit counts the sample lines p reads and describes the first failure.
func fit(p Parser, sample [][]byte) (n int, why string) {
	var r Record
	for i, l := range sample {
		if ok, reason := p.Parse(l, &r); ok {
			n++
		} else if why == "" {
			why = fmt.Sprintf("line %d: %s", i+1, reason)
		}
	}
	return n, why
}
