package mysqlvar

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Flavours. Percona Server has MySQL's variables (the version table knows
// only MySQL and MariaDB).
const (
	MySQL   = "mysql"
	MariaDB = "mariadb"
	Percona = "percona"
)

// Version is a parsed server version.
type Version struct {
	Major int `json:"major"`
	Minor int `json:"minor"`
	Patch int `json:"patch"`
}

// V is major.minor.patch.
func V(major, minor, patch int) Version { return Version{major, minor, patch} }

// AtLeast reports whether v is major.minor.patch or later.
func (v Version) AtLeast(major, minor, patch int) bool {
	if v.Major != major {
		return v.Major > major
	}
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch >= patch
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// IsZero reports whether no version was parsed.
func (v Version) IsZero() bool { return v == Version{} }

var versionRE = regexp.MustCompile(`^(\d+)(?:\.(\d+))?(?:\.(\d+))?`)

// ParseVersion tells MariaDB, Percona Server and MySQL apart from
// VERSION() and @@version_comment, and parses the version number.
// MariaDB's old "5.5.5-" replication prefix is skipped.
func ParseVersion(version, comment string) (string, Version) {
	flavor := MySQL
	lv, lc := strings.ToLower(version), strings.ToLower(comment)
	switch {
	case strings.Contains(lv, "mariadb") || strings.Contains(lc, "mariadb"):
		flavor = MariaDB
		version = strings.TrimPrefix(version, "5.5.5-")
	case strings.Contains(lc, "percona") || strings.Contains(lv, "percona"):
		flavor = Percona
	}
	var v Version
	if g := versionRE.FindStringSubmatch(version); g != nil {
		v.Major, _ = strconv.Atoi(g[1])
		v.Minor, _ = strconv.Atoi(g[2])
		v.Patch, _ = strconv.Atoi(g[3])
	}
	return flavor, v
}

// Server is a running server's flavour and version.
type Server struct {
	Flavor  string  `json:"flavor"`
	Version Version `json:"version"`
	// Raw is VERSION() as the server gave it.
	Raw string `json:"raw,omitempty"`
}

// IsMariaDB reports whether the server is MariaDB.
func (s Server) IsMariaDB() bool { return tableFlavor(s.Flavor) == MariaDB }

// String is "MariaDB 10.11.19", "MySQL 8.0.36" or "Percona Server 8.0.35".
func (s Server) String() string {
	switch s.Flavor {
	case MariaDB:
		return "MariaDB " + s.Version.String()
	case Percona:
		return "Percona Server " + s.Version.String()
	}
	return "MySQL " + s.Version.String()
}

// Queryer is what this package needs of a connection: *sql.DB, *sql.Conn
// and *sql.Tx have it.
type Queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

const versionSQL = "SELECT VERSION(), COALESCE(@@version_comment, '')"

// Detect asks the server what it is.
func Detect(ctx context.Context, q Queryer) (Server, error) {
	var s Server
	var comment string
	if err := q.QueryRowContext(ctx, versionSQL).Scan(&s.Raw, &comment); err != nil {
		return s, fmt.Errorf("reading the server's version: %w", err)
	}
	s.Flavor, s.Version = ParseVersion(s.Raw, comment)
	return s, nil
}
