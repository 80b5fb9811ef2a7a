package input

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"
)

// The files a user names (scenarios, inventories, change sets, imported
// results, configurations) are read through OpenFile and ReadFile, never
// os.Open or os.ReadFile: a path may name a FIFO (whose open blocks until
// someone writes, and no signal ends it), a device (/dev/zero never
// ends, and opening some devices acts), a directory or a file far larger
// than anything real. OpenFile opens without blocking and without taking
// a terminal, and keeps only a regular file; ReadFile adds a size limit,
// checked before reading and again while reading (a file may grow).

// NotRegularError is a path that is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, FileKind(e.Mode))
}

// TooLargeError is a file larger than its reader's limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s", e.Path, SizeText(e.Limit))
}

// ErrNotRegular and ErrTooLarge are what the two errors match with
// errors.Is.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("file too large")
)

func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }
func (e *TooLargeError) Is(target error) bool   { return target == ErrTooLarge }

// FileKind names the kind of file a mode is ("a directory", "a named
// pipe (FIFO)", "a regular file").
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a " + m.Type().String() + " file"
}

// SizeText writes a byte count the way limits are given ("16 MiB").
func SizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// OpenFile opens path for reading if it is a regular file, without
// blocking on a FIFO or taking a terminal: what stat says before the open
// and what the open file says after it must both be a regular file, so a
// file swapped for another kind in between is refused too. Anything else
// is a *NotRegularError. The file is in blocking mode when returned.
func OpenFile(path string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, fi, nil
}

// ReadFile reads the regular file at path whole, refusing one larger
// than limit bytes (a *TooLargeError) without reading more than limit+1
// bytes of it, and anything but a regular file (a *NotRegularError).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, fi, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	data, err := ReadLimited(f, fi.Size(), limit)
	if err != nil {
		var tl *TooLargeError
		if errors.As(err, &tl) {
			tl.Path = path
			return nil, tl
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// ReadLimited reads r to its end, expecting size bytes (a hint: files in
// /proc say 0), and fails with a *TooLargeError (without a path) once it
// has more than limit, having read at most limit+1 bytes.
func ReadLimited(r io.Reader, size, limit int64) ([]byte, error) {
	lr := io.LimitReader(r, limit+1)
	buf := make([]byte, 0, min(max(size, 0), limit)+1)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(int64(max(cap(buf), 4096)), limit+1-int64(len(buf)))))
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{Limit: limit}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
