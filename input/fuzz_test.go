package input_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stacktune/stacktune/accesslog"
	"github.com/stacktune/stacktune/chunk"
	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/httpprof"
	"github.com/stacktune/stacktune/input"
)

func gz(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// reference decompresses data the way compress/gzip reads it (every
// member, nothing after), or says it cannot.
func reference(data []byte) ([]byte, bool) {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data, true
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, false
	}
	out, err := io.ReadAll(zr)
	return out, err == nil
}

// FuzzOpenAndRead feeds bytes, as a file and as standard input, through
// input.Open and then the slow-log and access-log readers: no panic; the
// data read is compress/gzip's reading of it, or, where that fails, a
// *input.ReadError; and the readers account for every byte read.
func FuzzOpenAndRead(f *testing.F) {
	logs, _ := filepath.Glob("../testdata/slowlogs/slow0*.log")
	for _, p := range logs[:min(len(logs), 4)] {
		if data, err := os.ReadFile(p); err == nil {
			z := gz(data)
			f.Add(data)
			f.Add(z)
			f.Add(z[:len(z)/2])
			f.Add(z[:len(z)-8])
			f.Add(append(bytes.Clone(z), "junk"...))
		}
	}
	if data, err := os.ReadFile("../accesslog/testdata/logs/nginx-timed.log"); err == nil {
		z := gz(data)
		f.Add(z)
		f.Add(z[:len(z)/4])
		f.Add(append(bytes.Clone(z), gz([]byte("a\n"))...))
	}
	f.Add([]byte{0x1f, 0x8b})
	f.Add([]byte("\x00\x01\x02\n# Time: 2024-05-01T10:00:00Z\n"))
	parser, err := accesslog.NewNginx("combined", accesslog.CombinedTimed)
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		want, ok := reference(data)
		path := filepath.Join(dir, "log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{path, "-"} {
			open := func() input.Input {
				in, c, err := input.Open(name, bytes.NewReader(data))
				if err != nil {
					var re *input.ReadError
					if ok || !errors.As(err, &re) {
						t.Fatalf("%s: Open: %v (gzip reads it: %v)", name, err, ok)
					}
					return input.Input{}
				}
				t.Cleanup(func() { c.Close() })
				return in
			}
			in := open()
			if in.R == nil {
				continue
			}
			got, err := io.ReadAll(in.R)
			var re *input.ReadError
			switch {
			case ok && (err != nil || !bytes.Equal(got, want)):
				t.Fatalf("%s: read %d bytes, error %v; gzip reads %d bytes", name, len(got), err, len(want))
			case !ok && !errors.As(err, &re):
				t.Fatalf("%s: read %d bytes, error %v; gzip fails", name, len(got), err)
			case !ok && re.Out != int64(len(got)):
				t.Fatalf("%s: the error says %d bytes were read, the reader gave %d", name, re.Out, len(got))
			}
			read := int64(len(got))

			in = open()
			_, st, err := digest.FromSlowLogs(context.Background(), []input.Input{in}, digest.Options{Workers: 2, Split: chunk.Options{Size: 64}})
			if (err == nil) != ok || st.Bytes != read {
				t.Fatalf("%s: digest read %d of %d bytes, error %v (gzip reads it: %v)", name, st.Bytes, read, err, ok)
			}
			in = open()
			res, err := httpprof.FromLogs(context.Background(), []input.Input{in}, parser, httpprof.LogOptions{Workers: 2, Split: chunk.Options{Size: 64}})
			if (err == nil) != ok || res.Bytes != read {
				t.Fatalf("%s: http read %d of %d bytes, error %v (gzip reads it: %v)", name, res.Bytes, read, err, ok)
			}
		}
	})
}
