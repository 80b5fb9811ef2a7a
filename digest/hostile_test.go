package digest

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/slowlog"
)

// slowLog is a MariaDB slow log of n events.
func slowLog(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "# Time: 261122 10:%02d:%02d\n# User@Host: app[app] @ localhost []\n# Thread_id: %d  Schema: shop  QC_hit: No\n"+
			"# Query_time: 0.%06d  Lock_time: 0.000010  Rows_sent: 1  Rows_examined: %d\nSET timestamp=%d;\nSELECT c FROM t%d WHERE id=%d;\n",
			i/60%60, i%60, i%64, i*7919%1000000, i%5000, 1795860000+i, i%7, i*31%10007)
	}
	return b.Bytes()
}

// TestGzipCut digests a gzip slow log cut at several places: the events
// before the cut are kept, the error (an *input.ReadError) names the file
// and the compressed offset reached, and every byte read is accounted for.
func TestGzipCut(t *testing.T) {
	const events = 8000
	log := slowLog(events)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(log)
	zw.Close()
	full := z.Bytes()
	cases := []struct {
		name string
		data []byte
		kind error
	}{
		{"whole", full, nil},
		{"cut at 1/4", full[:len(full)/4], input.ErrTruncated},
		{"cut at 1/2", full[:len(full)/2], input.ErrTruncated},
		{"trailer missing", full[:len(full)-8], input.ErrTruncated},
		{"trailing junk", append(bytes.Clone(full), "junk\n"...), input.ErrTrailingData},
		{"bad checksum", append(bytes.Clone(full[:len(full)-8]), 1, 2, 3, 4, 5, 6, 7, 8), input.ErrCorrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "slow.log.gz")
			os.WriteFile(path, tc.data, 0o644)
			in, c, err := input.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, st, err := FromSlowLogs(context.Background(), []input.Input{in}, Options{Workers: 3, Split: chunk.Options{Size: 8192}})
			if tc.kind == nil {
				if err != nil || st.Events != events || st.Bytes != int64(len(log)) || st.SkippedTotal() != 0 {
					t.Fatalf("error %v, stats %+v", err, st)
				}
				return
			}
			var re *input.ReadError
			if !errors.Is(err, tc.kind) || !errors.As(err, &re) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Fatalf("error %v, want a *input.ReadError of kind %v naming the file", err, tc.kind)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("compressed byte %d of %d", re.Offset, len(tc.data))) {
				t.Errorf("error %q does not say the offset reached", err)
			}
			if st.Bytes != re.Out {
				t.Errorf("read %d bytes, the error says %d", st.Bytes, re.Out)
			}
			if st.Events == 0 || st.Events+st.Skipped[slowlog.ReasonUnread.Code()] > events || st.Skipped[slowlog.ReasonUnread.Code()] > 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// memChild is the environment variable that makes TestMemoryBound's child
// digest a stream instead of running the test.
const memChild = "STACKTUNE_DIGEST_MEMORY_CHILD"

// TestMemoryBound digests 50 MB streams in a child process (this test
// binary again) and checks its peak RSS: random bytes, which have no event
// boundary at all, must not be gathered into one huge chunk, and a
// well-formed log must stay within the same bound.
func TestMemoryBound(t *testing.T) {
	const size = 50 << 20
	if kind := os.Getenv(memChild); kind != "" {
		var r io.Reader
		switch kind {
		case "random":
			f, err := os.Open("/dev/urandom")
			if err != nil {
				t.Skip(err)
			}
			defer f.Close()
			r = io.LimitReader(f, size)
		case "slowlog":
			r = io.LimitReader(&repeatReader{data: slowLog(2000)}, size)
		}
		in, _, err := input.Open("-", r)
		if err != nil {
			t.Fatal(err)
		}
		_, st, err := FromSlowLogs(context.Background(), []input.Input{in}, Options{Workers: 2})
		if err != nil || st.Bytes != size {
			t.Fatalf("error %v, read %d of %d bytes", err, st.Bytes, size)
		}
		return
	}
	if testing.Short() || raceDetector {
		t.Skip("runs a child process over 50 MB; not with -short or -race")
	}
	// Peak RSS of the test binary reading 50 MB; the process itself (test
	// binary, runtime, chunk buffers for two workers) takes about 30 MiB.
	const limit = 96 << 20
	for _, kind := range []string{"random", "slowlog"} {
		t.Run(kind, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryBound$", "-test.count=1")
			cmd.Env = append(os.Environ(), memChild+"="+kind, "GOMAXPROCS=2")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if !ok {
				t.Skip("no rusage on this system")
			}
			peak := ru.Maxrss << 10 // kilobytes on Linux
			t.Logf("%s: peak RSS %.1f MiB", kind, float64(peak)/(1<<20))
			if peak > limit {
				t.Errorf("%s: peak RSS %.1f MiB, over %d MiB", kind, float64(peak)/(1<<20), limit>>20)
			}
		})
	}
}

// repeatReader repeats data forever.
type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.data[r.off:])
		n += c
		r.off = (r.off + c) % len(r.data)
	}
	return n, nil
}

// zeros reads zero bytes without end: /dev/zero, or a huge sparse log.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestCancelStopsJunk cancels a digest of a log that is nothing but
// binary junk without end: the splitter drops it as it reads and emits
// nothing, so only the reads themselves can see the cancellation (a
// SIGTERM used to be ignored until the file's end). It returns
// context.Canceled promptly.
func TestCancelStopsJunk(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := FromSlowLogs(ctx, []input.Input{{Name: "zeros", R: zeros{}}}, Options{Workers: 2})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("still reading 20 s after the cancellation")
	}
}
