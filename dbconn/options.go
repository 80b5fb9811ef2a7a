package dbconn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/input"
)

// Source is where a server's connection settings come from, as the
// mysql client takes them: a DSN, or the name of an environment variable
// holding one (so no password is on the command line, visible in ps), and
// the [client] groups of the MySQL option files, which fill in what the
// DSN leaves out (user, password, socket or host and port, database).
type Source struct {
	// DSN is a go-sql-driver DSN given on the command line.
	DSN string
	// DSNEnv names the environment variable holding the DSN.
	DSNEnv string
	// DefaultsFile, when set, is the only option file read (the mysql
	// client's --defaults-file); it must exist.
	DefaultsFile string
	// NoDefaults reads no option file (--no-defaults).
	NoDefaults bool
	// Home is the directory of ~/.my.cnf ($HOME when empty).
	Home string
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
}

// Limits of option-file reading: a hostile or looping !include cannot
// take memory or time without bound.
const (
	// MaxOptionFileBytes bounds one option file.
	MaxOptionFileBytes = 1 << 20
	// MaxOptionFiles bounds the files read, !include and !includedir
	// included.
	MaxOptionFiles = 64
)

// Asked reports whether the source names a server at all: a DSN, its
// variable, or a defaults file.
func (s Source) Asked() bool { return s.DSN != "" || s.DSNEnv != "" || s.DefaultsFile != "" }

// Resolve returns the DSN to connect with ("" when the source names no
// server): the given DSN, with what it leaves out taken from the option
// files. Errors never hold the password.
func (s Source) Resolve() (string, error) {
	if !s.Asked() {
		return "", nil
	}
	if s.DSN != "" && s.DSNEnv != "" {
		return "", fmt.Errorf("%w: give --dsn or --dsn-env, not both", ErrBadDSN)
	}
	dsn := s.DSN
	if s.DSNEnv != "" {
		getenv := s.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		if dsn = getenv(s.DSNEnv); dsn == "" {
			return "", fmt.Errorf("%w: --dsn-env %s: the variable is not set or empty", ErrBadDSN, s.DSNEnv)
		}
	}
	cfg := mysql.NewConfig()
	addressGiven := false
	if dsn != "" {
		var err error
		if cfg, err = mysql.ParseDSN(dsn); err != nil {
			return "", fmt.Errorf("%w: %s (expected user:pass@unix(/path/mysqld.sock)/db or user:pass@tcp(host:3306)/db)", ErrBadDSN, redact(err.Error(), dsn))
		}
		// ParseDSN fills in tcp(127.0.0.1:3306) when no address is given.
		at := strings.LastIndex(dsn, "@")
		slash := strings.Index(dsn[at+1:], "/")
		addressGiven = slash > 0
	}
	opts, err := s.options()
	if err != nil {
		return "", err
	}
	if cfg.User == "" {
		cfg.User = opts["user"]
	}
	if cfg.Passwd == "" {
		cfg.Passwd = opts["password"]
	}
	if cfg.DBName == "" {
		cfg.DBName = opts["database"]
	}
	if !addressGiven {
		switch {
		case opts["socket"] != "" && (opts["host"] == "" || opts["host"] == "localhost"):
			cfg.Net, cfg.Addr = "unix", opts["socket"]
		case opts["host"] != "" && opts["host"] != "localhost":
			port := opts["port"]
			if port == "" {
				port = "3306"
			}
			cfg.Net, cfg.Addr = "tcp", opts["host"]+":"+port
		}
	}
	return cfg.FormatDSN(), nil
}

// options reads the client groups of the option files: DefaultsFile
// alone, or /etc/my.cnf, /etc/mysql/my.cnf and ~/.my.cnf in that order
// (later values win), following !include and !includedir.
func (s Source) options() (map[string]string, error) {
	out := map[string]string{}
	if s.NoDefaults && s.DefaultsFile == "" {
		return out, nil
	}
	r := &optionReader{values: out}
	if s.DefaultsFile != "" {
		if err := r.read(s.DefaultsFile, true); err != nil {
			return nil, err
		}
		return out, nil
	}
	home := s.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	paths := []string{"/etc/my.cnf", "/etc/mysql/my.cnf"}
	if home != "" {
		paths = append(paths, filepath.Join(home, ".my.cnf"))
	}
	for _, p := range paths {
		if err := r.read(p, false); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// optionReader reads option files into values, bounded in files and
// bytes.
type optionReader struct {
	values map[string]string
	files  int
}

// read reads one option file; a missing file is an error only when must.
func (r *optionReader) read(path string, must bool) error {
	r.files++
	if r.files > MaxOptionFiles {
		return fmt.Errorf("option files: more than %d read (dbconn.MaxOptionFiles; an !include loop?) at %s", MaxOptionFiles, path)
	}
	data, err := input.ReadFile(path, MaxOptionFileBytes)
	var tl *input.TooLargeError
	switch {
	case err == nil:
	case !must && errors.Is(err, os.ErrNotExist):
		return nil
	case !must && errors.Is(err, os.ErrPermission):
		return nil // as the mysql client: an unreadable global file is skipped
	case errors.As(err, &tl):
		return fmt.Errorf("option file %s: larger than %s (dbconn.MaxOptionFileBytes)", path, input.SizeText(MaxOptionFileBytes))
	default:
		return fmt.Errorf("option file: %w", err)
	}
	settings, err := changeset.ClientCnf.Parse(data)
	if err != nil {
		return fmt.Errorf("option file %s: %w", path, err)
	}
	for _, st := range settings {
		r.values[st.Key] = st.Value
	}
	// Includes are read after the file's own settings, as the server
	// reads them where they stand; for the few client keys the order
	// rarely matters.
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "!includedir "):
			dir := strings.TrimSpace(strings.TrimPrefix(t, "!includedir "))
			names, _ := filepath.Glob(filepath.Join(dir, "*.cnf"))
			sort.Strings(names)
			for _, n := range names {
				if err := r.read(n, false); err != nil {
					return err
				}
			}
		case strings.HasPrefix(t, "!include "):
			if err := r.read(strings.TrimSpace(strings.TrimPrefix(t, "!include ")), true); err != nil {
				return err
			}
		}
	}
	return nil
}
