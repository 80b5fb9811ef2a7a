package measure

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteAtomic writes dst through fill into a temporary file beside it and
// renames it into place, so an interrupted write never leaves a truncated
// file behind.
func WriteAtomic(dst string, fill func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".tmp-*")
	if err != nil {
		return fmt.Errorf("creating %s: %w", dst, err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("creating %s: %w", dst, err)
	}
	bw := bufio.NewWriterSize(tmp, 1<<20)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return nil
}

// CopyFile copies src to dst through WriteAtomic.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("opening %s: %w", src, err)
	}
	defer in.Close()
	return WriteAtomic(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// ReadJSON decodes the JSON file at path into v.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

// Stage copies each file named by *paths (those not "") into a new
// directory under dir whose name starts with prefix, and points *paths at
// the copies, for timed runs that must not depend on the page cache.
// cleanup removes the copies. On error the paths are left unchanged.
func Stage(dir, prefix string, paths ...*string) (cleanup func(), err error) {
	tmp, err := os.MkdirTemp(dir, prefix)
	if err != nil {
		return nil, fmt.Errorf("--tmpfs: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	staged := make([]string, len(paths))
	for i, p := range paths {
		if *p == "" {
			continue
		}
		staged[i] = filepath.Join(tmp, filepath.Base(*p))
		if err := CopyFile(*p, staged[i]); err != nil {
			cleanup()
			return nil, err
		}
	}
	for i, p := range paths {
		if *p != "" {
			*p = staged[i]
		}
	}
	return cleanup, nil
}

// WorkDir creates the work directory of benchmark name. With keep it says
// on stderr where the directory is and cleanup leaves it; otherwise
// cleanup removes it.
func WorkDir(name string, keep bool, stderr io.Writer) (dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", name+"-")
	if err != nil {
		return "", nil, fmt.Errorf("creating the work directory: %w", err)
	}
	if keep {
		fmt.Fprintf(stderr, "%s: outputs kept in %s\n", name, dir)
		return dir, func() {}, nil
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// metaPath names the metadata file written beside a generated log.
func metaPath(log string) string { return log + ".meta.json" }

// ReadMeta decodes the metadata file beside log into m, and reports
// whether there was one that decoded.
func ReadMeta(log string, m any) bool {
	b, err := os.ReadFile(metaPath(log))
	if err != nil {
		return false
	}
	return json.Unmarshal(b, m) == nil
}

// WriteMeta writes m as indented JSON into the metadata file beside log.
func WriteMeta(log string, m any) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding log metadata: %w", err)
	}
	return WriteAtomic(metaPath(log), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}
