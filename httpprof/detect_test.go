package httpprof

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/input"
)

// junkReader is n bytes of junk without a line end, generated as read:
// a line of hundreds of MB costs no disk and no memory.
type junkReader struct{ n int64 }

var junkBlock = bytes.Repeat([]byte("\x16\x03junk "), 8<<10)

func (r *junkReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(int64(len(p)), r.n)], junkBlock)
	r.n -= int64(k)
	return k, nil
}

// combinedLines are n nginx combined lines with request and upstream
// times.
func combinedLines(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `192.0.2.%d - - [01/Nov/2026:12:00:%02d +0900] "GET /item/%d HTTP/1.1" 200 512 "-" "bench/1.0" 0.%03d 0.%03d`+"\n", i%250, i%60, i, i%1000, i%1000)
	}
	return b.String()
}

// gzipped compresses r as it is read.
func gzipped(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		zw, _ := gzip.NewWriterLevel(pw, gzip.BestSpeed)
		_, err := io.Copy(zw, r)
		if err == nil {
			err = zw.Close()
		}
		pw.CloseWithError(err)
	}()
	zr, err := gzip.NewReader(pr)
	if err != nil {
		return io.MultiReader(&errReader{err})
	}
	return zr
}

type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }

const timedFormat = "nginx combined+request_time+upstream_response_time"

// TestFromLogsDetects: a log whose format FromLogs detects from the lines
// it reads. Lines longer than a parser reads (a first line of 200 MB of
// junk, as a log overwritten by a binary dump starts) are skipped and
// counted, not taken as the sample, and the valid lines after them are
// profiled; plain, gzip, and in two inputs. A log with nothing to detect
// from says what it sampled.
func TestFromLogsDetects(t *testing.T) {
	const big = 200 << 20
	lines := combinedLines(50)
	long := strings.Repeat("x", 2<<20) + "\n" // longer than MaxLineBytes, shorter than a chunk
	cases := []struct {
		name     string
		inputs   func() []io.Reader
		requests int64
		long     int64
		wantErr  string
	}{
		{name: "a 200 MB first line", requests: 50, long: 1,
			inputs: func() []io.Reader {
				return []io.Reader{io.MultiReader(&junkReader{big}, strings.NewReader("\n"+lines))}
			}},
		{name: "a 200 MB first line, gzip", requests: 50, long: 1,
			inputs: func() []io.Reader {
				return []io.Reader{gzipped(io.MultiReader(&junkReader{big}, strings.NewReader("\n"+lines)))}
			}},
		{name: "long lines among the first", requests: 50, long: 3,
			inputs: func() []io.Reader {
				return []io.Reader{strings.NewReader(long + lines[:len(lines)/2] + long + long + lines[len(lines)/2:])}
			}},
		{name: "20 MB of empty lines first", requests: 50,
			inputs: func() []io.Reader {
				return []io.Reader{io.MultiReader(strings.NewReader(strings.Repeat("\n", 20<<20)), strings.NewReader(lines))}
			}},
		{name: "the first input all junk", requests: 50, long: 1,
			inputs: func() []io.Reader {
				return []io.Reader{&junkReader{big}, strings.NewReader(lines)}
			}},
		{name: "only a long line", long: 1,
			inputs: func() []io.Reader {
				return []io.Reader{io.MultiReader(&junkReader{big}, strings.NewReader("\n\n"))}
			},
			wantErr: "accesslog: in0: cannot detect the format: no non-empty lines (1 line longer than 1 MiB skipped)"},
		{name: "junk after a long line",
			inputs: func() []io.Reader {
				return []io.Reader{io.MultiReader(&junkReader{big}, strings.NewReader("\n<html>502</html>\n"))}
			},
			wantErr: "accesslog: in0: no known format reads these lines: 1 line (1 line longer than 1 MiB skipped), tried json (line 2: not JSON; reads 0 of 1)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ins []input.Input
			for i, r := range tc.inputs() {
				ins = append(ins, input.Input{Name: fmt.Sprintf("in%d", i), R: r})
			}
			res, err := FromLogs(context.Background(), ins, nil, LogOptions{Workers: 2})
			if tc.wantErr != "" {
				var de *accesslog.DetectError
				if res != nil || !errors.As(err, &de) || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("result %v, error %v, want %s...", res, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Parser.Format() != timedFormat || res.Profiler.requests != tc.requests || res.Skipped[ReasonLineTooLong.Code()] != tc.long {
				t.Errorf("format %s, %d requests, skipped %v; want %s, %d requests, %d too long",
					res.Parser.Format(), res.Profiler.requests, res.Skipped, timedFormat, tc.requests, tc.long)
			}
			var n int64
			for _, v := range res.Skipped {
				n += v
			}
			if n != tc.long {
				t.Errorf("skipped %v, want only the %d long lines", res.Skipped, tc.long)
			}
		})
	}
}

// The memory test's processes, as in nginxconf's TestLoadMemory: the test
// runs a launcher, which runs the child that profiles the log and reports
// the child's peak RSS (an exec'd process inherits the peak RSS of the
// one it replaced, so the child is not run from the test itself).
const (
	memLaunchEnv = "STACKTUNE_HTTPPROF_MEM_LAUNCH"
	memChildEnv  = "STACKTUNE_HTTPPROF_MEM_CHILD"
)

// memBound is the most resident memory the child may reach profiling a
// log whose first line is memJunk bytes: the test binary, the chunk
// buffers (a line growing past a chunk is read into at most
// MaxRecord + 4 MiB, then dropped as read) and what detection holds.
const (
	memBound = 100_000_000
	memJunk  = 1 << 30
)

// TestFromLogsDetectMemory: profiling a log whose first line is 1 GiB of
// junk (generated as read) detects its format from the lines after it
// with a peak RSS under memBound: the line is dropped as it is read, never
// held. A bound, not a timing.
func TestFromLogsDetectMemory(t *testing.T) {
	if os.Getenv(memChildEnv) != "" {
		res, err := FromLogs(context.Background(), []input.Input{{Name: "junk", R: io.MultiReader(&junkReader{memJunk}, strings.NewReader("\n"+combinedLines(1000)))}}, nil, LogOptions{})
		if err != nil {
			fmt.Printf("result: error: %v\n", err)
			return
		}
		fmt.Printf("result: %s, %d requests, %d too long\n", res.Parser.Format(), res.Profiler.requests, res.Skipped[ReasonLineTooLong.Code()])
		return
	}
	if os.Getenv(memLaunchEnv) != "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFromLogsDetectMemory$", "-test.count=1")
		cmd.Env = append(os.Environ(), memChildEnv+"=1")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		fmt.Printf("maxrss_kib: %d\n%s", cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, out)
		return
	}
	if testing.Short() {
		t.Skip("reads 1 GiB")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFromLogsDetectMemory$", "-test.count=1")
	cmd.Env = append(os.Environ(), memLaunchEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("launcher: %v\n%s%s", err, out, stderr.String())
	}
	rss, result := int64(-1), ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "maxrss_kib: "); ok {
			rss, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(sc.Text(), "result: "); ok {
			result = v
		}
	}
	t.Logf("child peak RSS %.1f MB; %s", float64(rss)*1024/1e6, result)
	if want := timedFormat + ", 1000 requests, 1 too long"; result != want {
		t.Errorf("child: %s, want %s", result, want)
	}
	if rss < 0 || rss*1024 >= memBound {
		t.Errorf("peak RSS %d KiB, want under %d MB", rss, memBound/1_000_000)
	}
}
