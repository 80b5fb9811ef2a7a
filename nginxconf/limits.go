package nginxconf

import (
	"errors"
	"github.com/stacktune/stacktune/input"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
// and a file larger than limit bytes (an *input.TooLargeError) without reading
// more than limit+1 bytes of it.
type readFunc func(path string, limit int64) ([]byte, error)

// readFile is the readFunc of Load: package input's ReadFile, which
// opens only a regular file (opening a device can act, opening a FIFO
// blocks until someone writes), without blocking, and bounded.
func readFile(path string, limit int64) ([]byte, error) { return input.ReadFile(path, limit) }

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
