package input

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample is a log-like text that compresses to a few kilobytes.
func sample() []byte {
	var b bytes.Buffer
	for i := 0; i < 4000; i++ {
		fmt.Fprintf(&b, "# Query_time: 0.%06d\nSELECT c FROM t%d WHERE id=%d;\n", i*7919%1000000, i%7, i*31%1009)
	}
	return b.Bytes()
}

func gz(data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func write(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAll opens path and reads it to the end.
func readAll(t *testing.T, path string) ([]byte, Input, error) {
	t.Helper()
	in, c, err := Open(path, nil)
	if err != nil {
		return nil, in, err
	}
	defer c.Close()
	data, err := io.ReadAll(in.R)
	return data, in, err
}

// TestOpen reads whole, cut and padded files: a gzip stream that ends
// early, fails its checksum or is followed by junk is a *ReadError naming
// the file and the compressed offset reached, never a quiet early end.
func TestOpen(t *testing.T) {
	plain := sample()
	z := gz(plain)
	two := append(gz(plain[:1000]), gz(plain[1000:])...)
	badCRC := bytes.Clone(z)
	badCRC[len(badCRC)-8] ^= 0xff
	cases := []struct {
		name     string
		data     []byte
		wantGzip bool
		want     []byte // everything read, when the read succeeds
		kind     error  // the *ReadError's Kind, nil for success
		offset   int64  // the offset the error names
		inMsg    []string
	}{
		{name: "plain", data: plain, want: plain},
		{name: "empty", data: nil, want: []byte{}},
		{name: "gzip", data: z, wantGzip: true, want: plain},
		{name: "gzip of two members", data: two, wantGzip: true, want: plain},
		{name: "gzip cut at 1/4", data: z[:len(z)/4], wantGzip: true, kind: ErrTruncated, offset: int64(len(z) / 4),
			inMsg: []string{"gzip data ends early at compressed byte", fmt.Sprintf("%d of %d", len(z)/4, len(z)/4), "truncated"}},
		{name: "gzip cut at 1/2", data: z[:len(z)/2], wantGzip: true, kind: ErrTruncated, offset: int64(len(z) / 2)},
		{name: "gzip without its 8-byte trailer", data: z[:len(z)-8], wantGzip: true, kind: ErrTruncated, offset: int64(len(z) - 8)},
		{name: "gzip missing the last trailer byte", data: z[:len(z)-1], wantGzip: true, kind: ErrTruncated, offset: int64(len(z) - 1)},
		{name: "gzip cut inside its header", data: z[:5], wantGzip: true, kind: ErrTruncated, offset: 5},
		{name: "gzip with a bad checksum", data: badCRC, wantGzip: true, kind: ErrCorrupt, inMsg: []string{"corrupt gzip data", "checksum"}},
		{name: "gzip followed by junk", data: append(bytes.Clone(z), "junk after it\n"...), wantGzip: true, kind: ErrTrailingData,
			offset: int64(len(z)), inMsg: []string{fmt.Sprintf("junk after the gzip data at compressed byte %d of %d", len(z), len(z)+14), "14 more bytes"}},
		{name: "gzip followed by zeros", data: append(bytes.Clone(z), make([]byte, 512)...), wantGzip: true, kind: ErrTrailingData, offset: int64(len(z))},
		{name: "gzip followed by a cut member", data: append(bytes.Clone(z), gz([]byte("more"))[:12]...), wantGzip: true, kind: ErrTruncated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, "log.gz", tc.data)
			got, in, err := readAll(t, path)
			if in.R != nil && in.Gzip != tc.wantGzip {
				t.Errorf("gzip %v, want %v", in.Gzip, tc.wantGzip)
			}
			if tc.kind == nil {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if !bytes.Equal(got, tc.want) {
					t.Errorf("read %d bytes, want %d", len(got), len(tc.want))
				}
				if in.Offset() != int64(len(tc.data)) || in.Size != int64(len(tc.data)) {
					t.Errorf("offset %d size %d, want %d", in.Offset(), in.Size, len(tc.data))
				}
				return
			}
			var re *ReadError
			if !errors.As(err, &re) || !errors.Is(err, tc.kind) {
				t.Fatalf("error %v (%T), want a *ReadError of kind %v", err, err, tc.kind)
			}
			if re.Name != path || !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("error does not name the file: %v", err)
			}
			if tc.offset > 0 && re.Offset != tc.offset {
				t.Errorf("offset %d, want %d: %v", re.Offset, tc.offset, err)
			}
			if re.Out != int64(len(got)) && in.R != nil {
				t.Errorf("the error says %d bytes decompressed, the reader gave %d", re.Out, len(got))
			}
			for _, w := range tc.inMsg {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if in.R != nil {
				// Sticky: reading on gives the same error, not io.EOF.
				if _, err2 := in.R.Read(make([]byte, 10)); err2 != err {
					t.Errorf("read after the error: %v", err2)
				}
			}
		})
	}
}

// TestShortRead checks a plain file that shrinks while it is read (a log
// truncated by copytruncate): the reader fails instead of ending quietly.
func TestShortRead(t *testing.T) {
	data := bytes.Repeat(sample(), 16) // larger than what Open buffers
	path := write(t, "slow.log", data)
	in, c, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := os.Truncate(path, 1000); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(in.R)
	var re *ReadError
	if !errors.As(err, &re) || !errors.Is(err, ErrTruncated) || len(got) >= len(data) || re.Offset != int64(len(got)) || re.Size != int64(len(data)) {
		t.Fatalf("read %d bytes, error %v", len(got), err)
	}
	if want := fmt.Sprintf("%s: read %d of %d bytes", path, len(got), len(data)); !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to start %q", err, want)
	}
}

// TestStdin reads gzip and plain data from a pipe, whose size is unknown.
func TestStdin(t *testing.T) {
	data := sample()
	z := gz(data)
	for name, tc := range map[string]struct {
		in   []byte
		kind error
	}{
		"plain": {data, nil},
		"gzip":  {z, nil},
		"cut":   {z[:len(z)/2], ErrTruncated},
	} {
		t.Run(name, func(t *testing.T) {
			in, _, err := Open("-", bytes.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(in.R)
			if tc.kind == nil && (err != nil || !bytes.Equal(got, data)) {
				t.Fatalf("read %d bytes, error %v", len(got), err)
			}
			if tc.kind != nil && !errors.Is(err, tc.kind) {
				t.Fatalf("error %v, want %v", err, tc.kind)
			}
			if in.Size != -1 {
				t.Errorf("size %d for a pipe", in.Size)
			}
		})
	}
}

// TestOpenAll: every path opened, standard input at most once, and a
// failure names the path.
func TestOpenAll(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "a.log")
	if err := os.WriteFile(log, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		paths   []string
		wantErr string
	}{
		{"a file and stdin", []string{log, "-"}, ""},
		{"stdin twice", []string{"-", log, "-"}, `standard input ("-") given twice`},
		{"a missing file", []string{log, filepath.Join(dir, "nope.log")}, "nope.log"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ins, closeAll, err := OpenAll(c.paths, strings.NewReader("y\n"))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer closeAll()
			if len(ins) != len(c.paths) {
				t.Errorf("%d inputs for %d paths", len(ins), len(c.paths))
			}
		})
	}
}
