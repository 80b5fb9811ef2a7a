// Package input opens the logs stacktune reads: files, "-" for standard
// input, and gzip data whatever the file is called.
//
// Nothing is lost in silence: a reader from Open checks, when its data ends,
// that it has read the whole file (for a regular file, every byte of the
// size it had when opened), and a gzip stream that ends early, fails its
// checksum, is corrupt or is followed by junk is an error (*ReadError) that
// names the file and the compressed byte offset reached, never an early end
// of file.
package input

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Input is one log to read.
type Input struct {
	Name string // shown in reports; "-" for standard input
	R    io.Reader
	// Size is the file's size in bytes when it was opened (compressed
	// bytes for gzip) if it is a regular file, else -1. An Input built by
	// hand (Size 0, no counter) is read without checks.
	Size int64
	// Gzip is true when the data is gzip and R decompresses it.
	Gzip bool

	src *source
}

// Offset is how many bytes of the file (compressed bytes for gzip) the
// reader has consumed so far, or -1 for an Input not made by Open.
func (in Input) Offset() int64 {
	if in.src == nil {
		return -1
	}
	return in.src.offset()
}

// Sentinels a *ReadError wraps, for errors.Is.
var (
	// ErrTruncated: the data ends before its end (a gzip stream cut short,
	// or a file that shrank while it was read).
	ErrTruncated = errors.New("data ends early")
	// ErrCorrupt: gzip data that does not decompress or fails its checksum.
	ErrCorrupt = errors.New("corrupt gzip data")
	// ErrTrailingData: bytes after the end of the gzip data that are not
	// another gzip member.
	ErrTrailingData = errors.New("junk after the gzip data")
)

// ReadError is an input that could not be read to its end. Offset is the
// byte of the file reached (compressed bytes for gzip), Size the file's
// size (-1 if unknown), Out the bytes delivered to the reader's caller
// (decompressed bytes for gzip).
type ReadError struct {
	Name   string
	Gzip   bool
	Offset int64
	Size   int64
	Out    int64
	Kind   error // ErrTruncated, ErrCorrupt, ErrTrailingData, or nil for an I/O error
	Err    error // the underlying error
}

func (e *ReadError) Error() string {
	of := ""
	if e.Size >= 0 {
		of = fmt.Sprintf(" of %d", e.Size)
	}
	switch {
	case e.Gzip && e.Kind == ErrTruncated:
		return fmt.Sprintf("%s: gzip data ends early at compressed byte %d%s (%d bytes decompressed): the file is truncated (%v)", e.Name, e.Offset, of, e.Out, e.Err)
	case e.Gzip && e.Kind == ErrCorrupt:
		return fmt.Sprintf("%s: corrupt gzip data at compressed byte %d%s (%d bytes decompressed): %v", e.Name, e.Offset, of, e.Out, e.Err)
	case e.Gzip && e.Kind == ErrTrailingData:
		return fmt.Sprintf("%s: junk after the gzip data at compressed byte %d%s (%d bytes decompressed): %v", e.Name, e.Offset, of, e.Out, e.Err)
	case e.Kind == ErrTruncated:
		return fmt.Sprintf("%s: read %d%s bytes: %v", e.Name, e.Offset, of, e.Err)
	case e.Gzip:
		return fmt.Sprintf("%s: reading at compressed byte %d%s (%d bytes decompressed): %v", e.Name, e.Offset, of, e.Out, e.Err)
	}
	return fmt.Sprintf("%s: reading at byte %d%s: %v", e.Name, e.Offset, of, e.Err)
}

func (e *ReadError) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

// Open opens a log path for reading: "-" is stdin, and gzip data is
// recognised by its magic bytes (whatever the file is called) and
// decompressed. The returned closer closes the file. Reading the Input
// fails with a *ReadError rather than ending early (see the package doc).
func Open(path string, stdin io.Reader) (Input, io.Closer, error) {
	var (
		r    io.Reader
		c    io.Closer = io.NopCloser(nil)
		size int64     = -1
	)
	if path == "-" {
		r = stdin
	} else {
		f, err := openLog(path)
		if err != nil {
			return Input{}, nil, err
		}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		r, c = f, f
	}
	src := &source{name: path, size: size}
	src.cr = &countReader{r: r}
	src.br = bufio.NewReaderSize(src.cr, 1<<20)
	magic, err := src.br.Peek(2)
	if len(magic) < 2 && err != nil && err != io.EOF {
		c.Close()
		return Input{}, nil, src.fail(nil, err)
	}
	in := Input{Name: path, Size: size, src: src}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		src.gzip = true
		zr, err := gzip.NewReader(src.br)
		if err != nil {
			c.Close()
			return Input{}, nil, src.classify(err)
		}
		zr.Multistream(false) // members are read one by one, to check what lies between them
		src.zr = zr
		in.Gzip = true
	}
	in.R = src
	return in, c, nil
}

// openLog opens a log: a regular file, or a pipe (a FIFO, or a shell's
// process substitution), opened without blocking so that a FIFO nobody
// writes reads as empty instead of hanging the open. Devices (/dev/zero
// never ends), directories and sockets are refused.
func openLog(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("opening log: %w", err)
	}
	if !logKind(fi.Mode()) {
		return nil, fmt.Errorf("opening log: %w", &NotRegularError{Path: path, Mode: fi.Mode()})
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("opening log: %w", err)
	}
	if fi, err = f.Stat(); err != nil || !logKind(fi.Mode()) {
		f.Close()
		if err == nil {
			err = &NotRegularError{Path: path, Mode: fi.Mode()}
		}
		return nil, fmt.Errorf("opening log: %w", err)
	}
	return f, nil
}

func logKind(m fs.FileMode) bool { return m.IsRegular() || m&fs.ModeNamedPipe != 0 }

// countReader counts the bytes read from the file.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// source is the reader an Input reads: the file (through a counting
// reader and a buffer), decompressed when it is gzip, with the checks at
// its end.
type source struct {
	name string
	size int64
	cr   *countReader
	br   *bufio.Reader
	gzip bool
	zr   *gzip.Reader
	out  int64 // bytes delivered
	err  error // sticky: once failed or ended, every Read returns it
}

// offset is the bytes of the file consumed: read from it, minus what
// still waits in the buffer.
func (s *source) offset() int64 { return s.cr.n - int64(s.br.Buffered()) }

// trailingData is what readGzip found after a member.
type trailingData struct{ n int64 }

func (t trailingData) Error() string {
	return fmt.Sprintf("%d more bytes that are not a gzip member", t.n)
}

func (s *source) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	var (
		n   int
		err error
	)
	if s.zr == nil {
		n, err = s.br.Read(p)
	} else {
		n, err = s.readGzip(p)
	}
	s.out += int64(n)
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF:
		err = s.atEnd()
	default:
		err = s.classify(err)
	}
	s.err = err
	return n, err
}

// readGzip reads decompressed data, going from one gzip member to the next
// and stopping at anything else after one.
func (s *source) readGzip(p []byte) (int, error) {
	for {
		n, err := s.zr.Read(p)
		if err != io.EOF {
			return n, err
		}
		// The end of a member: the file must end here or hold another.
		next, perr := s.br.Peek(2)
		switch {
		case len(next) == 0 && perr == io.EOF:
			return n, io.EOF
		case len(next) == 2 && next[0] == 0x1f && next[1] == 0x8b:
			if err := s.zr.Reset(s.br); err != nil {
				return n, err
			}
			s.zr.Multistream(false)
			if n > 0 {
				return n, nil
			}
		case perr != nil && perr != io.EOF:
			return n, perr
		default:
			left := int64(s.br.Buffered())
			if s.size >= 0 {
				left = s.size - s.offset()
			}
			return n, trailingData{left}
		}
	}
}

// classify turns a read or decompression error into a *ReadError.
func (s *source) classify(err error) error {
	var (
		re      *ReadError
		corrupt flate.CorruptInputError
		junk    trailingData
	)
	switch {
	case errors.As(err, &re):
		return err
	case !s.gzip:
		return s.fail(nil, err)
	case errors.As(err, &junk):
		return s.fail(ErrTrailingData, err)
	case err == io.EOF, errors.Is(err, io.ErrUnexpectedEOF):
		return s.fail(ErrTruncated, io.ErrUnexpectedEOF)
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.As(err, &corrupt):
		return s.fail(ErrCorrupt, err)
	}
	return s.fail(nil, err)
}

// atEnd checks, when the data ends, that the whole file was read.
func (s *source) atEnd() error {
	if s.size >= 0 && s.offset() < s.size {
		return s.fail(ErrTruncated, fmt.Errorf("the file ended %d bytes short of its size when opened (truncated or rotated while being read)", s.size-s.offset()))
	}
	return io.EOF
}

func (s *source) fail(kind, err error) error {
	return &ReadError{Name: s.name, Gzip: s.gzip, Offset: s.offset(), Size: s.size, Out: s.out, Kind: kind, Err: err}
}

// OpenAll opens every path as Open does ("-", standard input, at most
// once) and returns a function closing them all; on an error, those
// already open are closed.
func OpenAll(paths []string, stdin io.Reader) ([]Input, func(), error) {
	var inputs []Input
	var closers []io.Closer
	closeAll := func() {
		for _, c := range closers {
			c.Close()
		}
	}
	stdinUsed := false
	for _, path := range paths {
		if path == "-" {
			if stdinUsed {
				closeAll()
				return nil, nil, errors.New(`standard input ("-") given twice`)
			}
			stdinUsed = true
		}
		in, c, err := Open(path, stdin)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		closers = append(closers, c)
		inputs = append(inputs, in)
	}
	return inputs, closeAll, nil
}
