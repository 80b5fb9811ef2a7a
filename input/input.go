// Package input opens the logs stacktune reads: files, "-" for standard
// input, and gzip data whatever the file is called.
package input

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// Input is one log to read.
type Input struct {
	Name string // shown in reports; "-" for standard input
	R    io.Reader
}

// Open opens a log path for reading: "-" is stdin, and gzip data is
// recognised by its magic bytes (whatever the file is called) and
// decompressed. The returned closer closes the file.
func Open(path string, stdin io.Reader) (Input, io.Closer, error) {
	var (
		r io.Reader
		c io.Closer = io.NopCloser(nil)
	)
	if path == "-" {
		r = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return Input{}, nil, fmt.Errorf("opening log: %w", err)
		}
		if st, err := f.Stat(); err == nil && st.IsDir() {
			f.Close()
			return Input{}, nil, fmt.Errorf("opening log %s: is a directory", path)
		}
		r, c = f, f
	}
	br := bufio.NewReaderSize(r, 1<<20)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			c.Close()
			return Input{}, nil, fmt.Errorf("reading gzip log %s: %w", path, err)
		}
		return Input{Name: path, R: zr}, c, nil
	}
	return Input{Name: path, R: br}, c, nil
}
