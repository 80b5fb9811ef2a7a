package mysqlconf

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Search is what a server binary says about its option files in the
// head of its --help --verbose output: the files it reads, in order, and
// the groups it reads in them.
type Search struct {
	// Files are the option files in the order the binary reads them, as
	// it prints them ("~/.my.cnf" unexpanded); a later file overrides an
	// earlier one.
	Files []string `json:"files"`
	// Groups are the [groups] it reads (mysqld server mysqld-10.11
	// mariadb ...), with the group suffix's own groups when it was given
	// one.
	Groups []string `json:"groups"`
}

// The lines of --help --verbose that ParseHelp reads (MariaDB and MySQL
// print both).
const (
	filesHeader  = "Default options are read from the following files in the given order:"
	groupsPrefix = "The following groups are read:"
)

// Bounds of ParseHelp: the head it needs is a few lines near the top of
// a help text of a few hundred KiB.
const (
	maxHelpLines    = 200
	maxHelpLineSize = 64 << 10
	maxSearchFiles  = 32
	maxGroups       = 64
)

// ParseHelp reads the search order and groups from the output of `mariadbd
// --help --verbose` (or mysqld's). It looks only at the first 200 lines;
// an output without the files header (not a server binary, or a server
// that failed before printing its help) is an error naming what was
// expected.
func ParseHelp(out []byte) (Search, error) {
	var s Search
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), maxHelpLineSize)
	filesNext, sawFiles, sawGroups := false, false, false
	for n := 0; n < maxHelpLines && sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case filesNext:
			filesNext = false
			s.Files = strings.Fields(line)
			if len(s.Files) > maxSearchFiles {
				return Search{}, fmt.Errorf("--help line %d: %d option files in the search order, more than the %d any server reads", n+1, len(s.Files), maxSearchFiles)
			}
		case line == filesHeader:
			filesNext, sawFiles = true, true
		case strings.HasPrefix(line, groupsPrefix):
			sawGroups = true
			s.Groups = strings.Fields(strings.TrimPrefix(line, groupsPrefix))
			if len(s.Groups) > maxGroups {
				return Search{}, fmt.Errorf("--help line %d: %d groups, more than %d", n+1, len(s.Groups), maxGroups)
			}
		}
		if sawFiles && !filesNext && sawGroups {
			break
		}
	}
	if !sawFiles {
		return Search{}, fmt.Errorf("no %q line in the first %d lines of its --help --verbose output", filesHeader, maxHelpLines)
	}
	if len(s.Files) == 0 {
		return Search{}, fmt.Errorf("%q is followed by no file", filesHeader)
	}
	return s, nil
}
