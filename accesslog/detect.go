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

// DetectTolerance is the share of sample lines a detected format may fail
// to read (junk such as TLS handshakes sent to a plain HTTP port); all
// others must parse.
const DetectTolerance = 0.1

// Detect picks a Parser for a log from its first lines: JSON when the first
// non-empty line starts with '{', LTSV when it is tab-separated label:value
// fields, and otherwise the first of these that reads every line:
// Apache combined + %D, nginx combined + $request_time
// $upstream_response_time, combined + $request_time, nginx's "main" (with
// X-Forwarded-For) + $request_time, Apache vhost_combined, nginx main,
// combined, Apache common + %D, nginx common + $request_time, common. Up to
// DetectTolerance of the lines may fail, as long as no format reads more of
// them. The error names every format tried and why it failed.
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
	first := bytes.TrimLeft(sample[0], " \t")
	switch {
	case first[0] == '{':
		return pickLabeled(NewJSON(), sample)
	case looksLTSV(first):
		return pickLabeled(NewLTSV(), sample)
	}
	var best Parser
	bestN := -1
	var tried []string
	for _, c := range candidates {
		p, err := c.compile()
		if err != nil {
			return nil, err
		}
		n, why := fit(p, sample)
		if n == len(sample) {
			return p, nil
		}
		if n > bestN {
			best, bestN = p, n
		}
		tried = append(tried, c.name+" ("+why+")")
	}
	if float64(bestN) >= float64(len(sample))*(1-DetectTolerance) {
		return best, nil
	}
	return nil, fmt.Errorf("accesslog: no known format reads these %d lines; tried json and ltsv (the first line is neither), %s; for a custom nginx log_format use its format string",
		len(sample), strings.Join(tried, ", "))
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

func pickLabeled(p Parser, sample [][]byte) (Parser, error) {
	n, why := fit(p, sample)
	if n > 0 && float64(n) >= float64(len(sample))*(1-DetectTolerance) {
		return p, nil
	}
	return nil, fmt.Errorf("accesslog: the log looks like %s but %d of %d lines do not parse (%s)", p.Format(), len(sample)-n, len(sample), why)
}

// looksLTSV reports whether line has at least two tab-separated fields
// and its first field is label:value.
func looksLTSV(line []byte) bool {
	t := bytes.IndexByte(line, '\t')
	if t < 0 {
		return false
	}
	c := bytes.IndexByte(line[:t], ':')
	return c > 0 && isLabel(line[:c])
}
