package nginxconf

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// The bounds on what Load and Parse read, so that a configuration that
// is wrong or hostile (include /dev/zero, a FIFO, a file that includes
// itself, blocks nested thousands deep) ends with an error naming the
// file and line instead of taking the memory of the host it runs on. Each
// is far above what real configurations use; nginx itself accepts more of
// some (blocks deeper than 100, /dev/zero read as empty) and crashes on
// others (20,000 nested blocks, an include loop).
const (
	// MaxFileBytes is the most read of one file: a larger one, or one
	// that grows past it while read, is an error.
	MaxFileBytes = 16 << 20
	// MaxTotalBytes is the most parsed in all, a file as many times as
	// it is included.
	MaxTotalBytes = 64 << 20
	// MaxBlockDepth is the deepest nesting of blocks, counted from the
	// main context across includes: http{} is 1, http{server{}} 2.
	MaxBlockDepth = 100
	// MaxIncludeDepth is the deepest nesting of includes, so a file that
	// includes itself ends.
	MaxIncludeDepth = 32
	// MaxIncludeReads is the most files include directives read in all
	// (a file included N times counts N times), and the most one glob
	// include may match.
	MaxIncludeReads = 10000
	// MaxDirectives is the most directives in all.
	MaxDirectives = 500_000
	// MaxWords is the most words (directive names and arguments) in all.
	MaxWords = 2_000_000
	// MaxContextEntries is the most entries of the block paths of a
	// configuration, one path (the Path of its blocks, a directive's
	// context) per block that holds directives, as long as the block is
	// deep: it bounds many blocks nested deep for a reader that names
	// every directive's context.
	MaxContextEntries = 2_000_000
)

// readFunc reads the file at path, refusing anything but a regular file
// and a file larger than limit bytes (a *tooLargeError) without reading
// more than limit+1 bytes of it.
type readFunc func(path string, limit int64) ([]byte, error)

// tooLargeError is a file larger than the bytes left to read.
type tooLargeError struct {
	path  string
	limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s", e.path, sizeText(e.limit))
}

// sizeText writes a byte count the way the bounds are given.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// fileKind names what a file that is not regular is.
func fileKind(m fs.FileMode) string {
	switch {
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
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// readFile is the readFunc of Load. It opens only what stat says is a
// regular file: opening a device can act (a watchdog arms, a tape
// rewinds), opening a FIFO blocks until someone writes. It opens without
// blocking and without taking a terminal, and looks again at what it
// opened, so a file swapped for another kind in between is refused too.
func readFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, &tooLargeError{path: path, limit: limit}
	}
	data, err := readLimited(f, fi.Size(), limit)
	if err != nil {
		var tl *tooLargeError
		if errors.As(err, &tl) {
			tl.path = path
			return nil, tl
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// regular is an error naming what path is unless it is a regular file.
func regular(path string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	kind := fileKind(fi.Mode())
	if strings.HasPrefix(kind, "not ") {
		return fmt.Errorf("%s is %s", path, kind)
	}
	return fmt.Errorf("%s is %s, not a regular file", path, kind)
}

// readLimited reads r to its end, expecting size bytes (a hint: files
// in /proc say 0), and fails with a *tooLargeError once it has more than
// limit, having read at most limit+1 bytes.
func readLimited(r io.Reader, size, limit int64) ([]byte, error) {
	lr := io.LimitReader(r, limit+1)
	buf := make([]byte, 0, min(max(size, 0), limit)+1)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(max(cap(buf), 4096), int(limit+1)-len(buf)))
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, &tooLargeError{limit: limit}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// hasMeta reports whether an include path is a glob.
func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// errTooManyMatches is a glob that matches more than its limit.
var errTooManyMatches = errors.New("too many matches")

// glob is filepath.Glob (names sorted in each directory; I/O errors
// ignored, as there) that stops with errTooManyMatches past limit
// matches, rather than listing everything a pattern such as /*/*/*/*
// reaches.
func glob(pattern string, limit int) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	return globIn(pattern, limit, 0)
}

func globIn(pattern string, limit, depth int) ([]string, error) {
	if !hasMeta(pattern) {
		if _, err := os.Lstat(pattern); err != nil {
			return nil, nil
		}
		return []string{pattern}, nil
	}
	if depth > 1000 {
		return nil, filepath.ErrBadPattern
	}
	dir, file := filepath.Split(pattern)
	switch dir {
	case "":
		dir = "."
	case string(filepath.Separator):
	default:
		dir = dir[:len(dir)-1]
	}
	if !hasMeta(dir) {
		return globDir(dir, file, nil, limit)
	}
	if dir == pattern {
		return nil, filepath.ErrBadPattern
	}
	dirs, err := globIn(dir, limit, depth+1)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		if out, err = globDir(d, file, out, limit); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// globDir appends the names in dir that match pattern, sorted.
func globDir(dir, pattern string, out []string, limit int) ([]string, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return out, nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return out, nil
	}
	defer d.Close()
	var names []string
	for {
		batch, err := d.Readdirnames(1024)
		for _, n := range batch {
			ok, err := filepath.Match(pattern, n)
			if err != nil {
				return nil, err
			}
			if ok {
				if len(out)+len(names) >= limit {
					return nil, errTooManyMatches
				}
				names = append(names, n)
			}
		}
		if err != nil {
			break
		}
	}
	slices.Sort(names)
	for _, n := range names {
		out = append(out, filepath.Join(dir, n))
	}
	return out, nil
}
