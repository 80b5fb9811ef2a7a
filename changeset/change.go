package changeset

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stacktune/stacktune/mysqlvar"
)

// Kind is what a change sets.
type Kind string

// Kinds of change.
const (
	// MySQLVariable is a server system variable: written to my.cnf under
	// its option name (Change.Option, else Name) and, when dynamic, set
	// with SET GLOBAL under Name.
	MySQLVariable Kind = "mysql-variable"
	// MySQLOption is a startup option that is no system variable
	// (performance-schema-consumer-...): my.cnf only, read at a restart.
	MySQLOption Kind = "mysql-option"
	// Sysctl is a kernel setting (net.core.somaxconn).
	Sysctl Kind = "sysctl"
	// Nginx is a directive; Target names its context as package
	// nginxconf reads it ("nginx http {}", "nginx upstream app {}").
	Nginx Kind = "nginx-directive"
	// Systemd is a [Service] setting of the unit Target (LimitNOFILE).
	Systemd Kind = "systemd-limit"
	// Memcached is a command-line option of memcached (-c, -m, -s).
	Memcached Kind = "memcached-flag"
	// Redis is a redis.conf setting (maxmemory).
	Redis Kind = "redis-config"
	// Mount is a mount option of a file system: Target is its mount
	// point, Name "options", To the option to add ("noatime"). Written
	// in /etc/fstab and applied with mount -o remount by a person: apply
	// says so and does not make it.
	Mount Kind = "mount-option"
	// PHPFPM is a setting of a PHP-FPM pool (pm.max_children): Target is
	// "php-fpm pool NAME" (PHPFPMTarget), Name the setting as the pool
	// file spells it.
	PHPFPM Kind = "php-fpm-pool"
	// Index adds, ignores or drops a secondary index: Target is
	// schema.table, Name the index, From and To its states (indexstate.go):
	// "absent", its key parts ("(`one`, `created_at`)"), or its key parts
	// followed by "ignored" (MariaDB's IGNORED, MySQL's INVISIBLE).
	Index Kind = "ddl"
	// App is a change to the application (its code or its settings): an
	// N+1 query made one, a cache client that batches. From and To
	// describe it in words.
	App Kind = "code"
)

// Codes lists the kinds (docs/json.md). They are older than the rule of
// snake_case codes and stay as they are: change sets on disk name them.
func (Kind) Codes() []string {
	return []string{string(MySQLVariable), string(MySQLOption), string(Sysctl), string(Nginx), string(Systemd),
		string(Memcached), string(Redis), string(Mount), string(PHPFPM), string(Index), string(App)}
}

// Absent is the From (or To) of something that does not exist: an index
// not yet there, a directive not set.
const Absent = "absent"

// phpfpmTargetPrefix starts the Target of a PHPFPM change.
const phpfpmTargetPrefix = "php-fpm pool "

// PHPFPMTarget is the Target of a change to the PHP-FPM pool named pool.
func PHPFPMTarget(pool string) string { return phpfpmTargetPrefix + pool }

// PHPFPMPool is the pool a PHPFPM change's Target names ("" when it
// names none).
func PHPFPMPool(target string) string {
	p, _ := strings.CutPrefix(target, phpfpmTargetPrefix)
	if p == target {
		return ""
	}
	return p
}

// Activation is how a change takes effect.
type Activation string

// Activations.
const (
	// Dynamic: at once, on the running service (SET GLOBAL, /proc/sys,
	// CONFIG SET, an online ALTER TABLE).
	Dynamic Activation = "dynamic"
	// Reload: the service rereads its files without dropping work (nginx
	// -s reload).
	Reload Activation = "reload"
	// Restart: only a restart that reads the files applies it.
	Restart Activation = "restart"
	// Manual: a person makes it (application code).
	Manual Activation = "manual"
)

// Codes lists the activations (docs/json.md).
func (Activation) Codes() []string {
	return []string{string(Dynamic), string(Reload), string(Restart), string(Manual)}
}

// Risk is what a change costs or endangers.
type Risk struct {
	// Durability is what a crash can lose after the change, in words;
	// empty when the change does not touch durability.
	Durability string `json:"durability,omitempty"`
	// Memory is what the change adds (or frees), in words.
	Memory string `json:"memory,omitempty"`
	// Restart is true when the change takes effect only after a restart
	// of the service.
	Restart bool   `json:"restart"`
	Note    string `json:"note,omitempty"`
}

// Change is one typed setting.
type Change struct {
	Kind Kind `json:"kind"`
	// Target is where it applies: "mysqld", "/etc/sysctl.d", "nginx http
	// {}", "nginx upstream app {} (FILE:LINE)", "mariadb.service",
	// "memcached", "redis", "app.relations" (an index's table).
	Target string `json:"target"`
	// Name is the variable, sysctl, directive, limit, flag or index;
	// Option is its my.cnf spelling when it differs (MariaDB before 11.1
	// has the variable tx_isolation but the option
	// transaction-isolation).
	Name   string `json:"name"`
	Option string `json:"option,omitempty"`
	// From is the value the advice was made from (what the snapshot
	// saw); "" when it was not seen. To is the value to set.
	From string `json:"from"`
	To   string `json:"to"`
	// Direction is "increase", "decrease" or "set", for people reading
	// it.
	Direction string `json:"direction,omitempty"`
	// Activation is how it takes effect (from the version table for
	// MySQL variables).
	Activation Activation `json:"activation,omitempty"`
	// Apply says how a person would make it on the running system ("SET
	// GLOBAL tmp_table_size = 67108864", "sysctl -w ..."): the same
	// statement apply runs.
	Apply string `json:"apply,omitempty"`
	// Finding is the id of the finding that proposes it, Title that
	// finding's title; Risk its risk. In a finding they are the
	// finding's own and left empty here.
	Finding string `json:"finding,omitempty"`
	Title   string `json:"title,omitempty"`
	Risk    *Risk  `json:"risk,omitempty"`
	// Evidence are the measured facts behind the change, one per line
	// ("rows examined 100,000 → 12 for q3"), written as comments above
	// it in its view.
	Evidence []string `json:"evidence,omitempty"`
}

// Key identifies the setting a change writes: two changes with one Key
// set the same thing.
func (c *Change) Key() string {
	name := c.Name
	if c.Kind == MySQLVariable || c.Kind == MySQLOption {
		name = mysqlvar.Norm(name)
	}
	return string(c.Kind) + "\x00" + c.Target + "\x00" + name
}

// FileName is the name the change has in its file: a MySQL variable's
// option name, else its name.
func (c *Change) FileName() string {
	if c.Option != "" {
		return c.Option
	}
	return c.Name
}

// Set is a change set: what one producer advises, at one time, for one
// host.
type Set struct {
	// Format is the layout version (FormatVersion).
	Format int `json:"format"`
	// Source is what produced it ("stacktune audit", "stacktune
	// indexes").
	Source string `json:"source"`
	// Host and Taken are the host and time of the snapshot the advice
	// was made from.
	Host  string    `json:"host,omitempty"`
	Taken time.Time `json:"taken,omitzero"`
	// Server is the MySQL server the advice was made for ("MariaDB
	// 10.11.19"), when there was one.
	Server  string   `json:"server,omitempty"`
	Changes []Change `json:"changes"`
}

// FormatVersion is the layout version this package writes and reads.
const FormatVersion = 1

// Of returns the changes of the given kinds, in order.
func (s *Set) Of(ks ...Kind) []Change {
	var out []Change
	for _, c := range s.Changes {
		if slices.Contains(ks, c.Kind) {
			out = append(out, c)
		}
	}
	return out
}

// Without returns a copy of s without the changes of the given findings
// (or of the given kinds).
func (s *Set) Without(ids ...string) *Set {
	out := *s
	out.Changes = slices.DeleteFunc(slices.Clone(s.Changes), func(c Change) bool {
		return slices.Contains(ids, c.Finding) || slices.Contains(ids, string(c.Kind))
	})
	return &out
}

// ErrInvalid marks a change set that cannot be applied as it is.
var ErrInvalid = errors.New("invalid change set")

// Validate checks what a change set read from a file (which a person may
// have edited) must hold before anything renders or applies it: known
// kinds, names that are names (no statement or path hidden in one),
// values on one line, and no setting changed twice to two values.
func (s *Set) Validate() error {
	if s.Format > FormatVersion {
		return fmt.Errorf("%w: format %d is from a newer stacktune (this one reads %d)", ErrInvalid, s.Format, FormatVersion)
	}
	seen := map[string]string{}
	var errs []error
	for i, c := range s.Changes {
		if err := c.Check(); err != nil {
			errs = append(errs, fmt.Errorf("change %d (%s %s): %w", i+1, c.Kind, c.Name, err))
			continue
		}
		k := c.Key()
		if prev, ok := seen[k]; ok && !sameTo(c, prev) {
			errs = append(errs, fmt.Errorf("change %d: %s is set twice, to %q and %q", i+1, c.Name, prev, c.To))
		}
		seen[k] = c.To
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return nil
}

func sameTo(c Change, prev string) bool {
	if c.Kind == MySQLVariable || c.Kind == MySQLOption {
		return mysqlvar.Equal(c.To, prev)
	}
	return strings.Join(strings.Fields(c.To), " ") == strings.Join(strings.Fields(prev), " ")
}

// plainName: letters, digits and the extra bytes.
func plainName(s, extra string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}
