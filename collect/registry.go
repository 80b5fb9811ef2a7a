package collect

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Registration is one collector in the registry: everything the CLI, the
// demo and Take need to offer it, reach it and start it. Each collector's
// file registers its own from an init function (see register and the
// package documentation), so nothing else is edited to add a collector.
type Registration struct {
	// Name is the collector's name: what Collector.Name returns and what
	// CollectorError.Collector says.
	Name string
	// Layer is the snapshot layer the collector fills and its key in the
	// snapshot JSON: the json name of a Snapshot field ("mysql"), or else
	// an entry of Snapshot.Layers that the collector sets with SetLayer.
	Layer string
	// Order places the collector in a run: lower first, ties by Name.
	// MySQL runs first (10) so the others' work is not in its status
	// rates; the others follow in tens (linux 20, nginx 30, memcached 40,
	// redis 50).
	Order int
	// Needs are the connections the caller opens for the collector
	// (NeedMySQL: Config.DB). A collector whose need is not met is not
	// asked for; one whose connection failed has that failure recorded.
	Needs Need
	// Flags are the collector's own settings: command-line flags in the
	// CLI, keys of Config.Values for everyone else. Their names are unique
	// across the registry.
	Flags []Flag
	// AskedBy names the string flag (one of Flags) whose non-empty value
	// asks for the collector ("memcached": --memcached host:port).
	AskedBy string
	// DisabledBy names the bool flag (one of Flags) that turns off a
	// collector that otherwise runs ("no-linux").
	DisabledBy string
	// New starts the collector from cfg; it is only called when cfg asks
	// for the collector (see Config). An error is recorded as the
	// collector's CollectorError and the other collectors go on; nil, nil
	// means there is nothing to collect after all.
	New func(cfg Config) (Collector, error)
}

// Need is a connection a collector needs from its caller.
type Need uint

const (
	// NeedMySQL: the caller opens the MySQL/MariaDB server it was told
	// about (the CLI's --dsn flags, with dbconn) and passes it as
	// Config.DB, or why it could not as Config.DBError.
	NeedMySQL Need = 1 << iota
)

// FlagKind is the type of a Flag's value.
type FlagKind int

const (
	FlagString   FlagKind = iota // any text
	FlagBool                     // strconv.ParseBool
	FlagDuration                 // time.ParseDuration
)

// Flag is one setting of a collector: a command-line flag
// (--Name) in the CLI and a key of Config.Values.
type Flag struct {
	Name    string
	Kind    FlagKind
	Default string // as text: "/proc", "10s", "false"; "" for none
	Usage   string // the flag's help
}

// Config is what the collectors are started from: their settings by flag
// name, and the connections the caller opened for them. A registered
// collector is asked for when its needs are met (NeedMySQL: DB or DBError
// is set), its AskedBy flag is not empty and its DisabledBy flag is not
// true; one with none of these always runs.
type Config struct {
	// Values are flag values by flag name, as text. A flag missing here
	// has its Default; a name no registered collector declares is an
	// error of Take.
	Values map[string]string
	// DB is the MySQL/MariaDB server for collectors that need one; the
	// caller opened it and closes it. Nil when no server was named.
	DB *sql.DB
	// DBError, when set, is why the named server could not be opened; it
	// is recorded as the error of each collector that needs it.
	DBError error
	// Getenv reads the environment (default os.Getenv), for settings
	// that name a variable rather than hold a secret.
	Getenv func(string) string
}

// Value returns the text of the flag name.
func (c Config) Value(name string) string { return c.Values[name] }

// Bool returns the flag name as a bool (false when it is not one).
func (c Config) Bool(name string) bool {
	b, _ := strconv.ParseBool(c.Values[name])
	return b
}

// Duration returns the flag name as a duration (0 when it is not one).
func (c Config) Duration(name string) time.Duration {
	d, _ := time.ParseDuration(c.Values[name])
	return d
}

// Env returns the environment variable name ("" for no name).
func (c Config) Env(name string) string {
	if name == "" {
		return ""
	}
	if c.Getenv != nil {
		return c.Getenv(name)
	}
	return os.Getenv(name)
}

// registry holds every registration, in init order; Registered sorts.
var registry []Registration

// register adds a collector to the registry; call it from an init
// function in the collector's file. A malformed registration does not
// panic: Take returns it as an error, and TestRegistry fails on it.
func register(r Registration) { registry = append(registry, r) }

// Registered returns every registered collector in run order (Order,
// then Name): the CLI builds its flags from it.
func Registered() []Registration {
	rs := slices.Clone(registry)
	for i := range rs {
		rs[i].Flags = slices.Clone(rs[i].Flags)
	}
	slices.SortStableFunc(rs, func(a, b Registration) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), strings.Compare(a.Name, b.Name))
	})
	return rs
}

// layerOf returns the layer the collector name fills: its registration's,
// or its name for a collector built by hand and not registered.
func layerOf(name string) string {
	for _, r := range registry {
		if r.Name == name {
			return r.Layer
		}
	}
	return name
}

// ErrNothingAsked is returned by Take when its Config asks for no
// collector.
var ErrNothingAsked = errors.New("nothing to collect")

// Take starts every registered collector cfg asks for, in run order, runs
// them (Run) and returns the snapshot. A collector that cannot start (its
// server could not be opened, a setting is malformed, New failed) is
// recorded in the snapshot's Errors, before those that failed while
// collecting, and the others still run. Take's own error is for the
// caller's mistakes: ErrNothingAsked, a Config.Values key no collector
// declares, or a malformed registration.
func Take(ctx context.Context, cfg Config) (*Snapshot, error) {
	cs, failed, err := start(cfg)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 && len(failed) == 0 {
		return nil, ErrNothingAsked
	}
	s := Run(ctx, cs)
	// Never nil: "collector_errors" is a list even when empty, as Run
	// leaves it.
	s.Errors = append(append([]CollectorError{}, failed...), s.Errors...)
	return s, nil
}

// start builds the collectors cfg asks for and records those that cannot
// start.
func start(cfg Config) ([]Collector, []CollectorError, error) {
	if err := validate(registry); err != nil {
		return nil, nil, err
	}
	regs := Registered()
	values := map[string]string{}
	declared := map[string]bool{}
	for _, r := range regs {
		for _, f := range r.Flags {
			values[f.Name] = f.Default
			declared[f.Name] = true
		}
	}
	for k, v := range cfg.Values {
		if !declared[k] {
			return nil, nil, fmt.Errorf("collect: no collector has a setting %q", k)
		}
		values[k] = v
	}
	cfg.Values = values

	var cs []Collector
	var failed []CollectorError
	fail := func(r Registration, err error) {
		failed = append(failed, CollectorError{Collector: r.Name, Error: err.Error()})
	}
	for _, r := range regs {
		if err := checkValues(r, values); err != nil {
			fail(r, err)
			continue
		}
		if r.Needs&NeedMySQL != 0 {
			if cfg.DBError != nil {
				fail(r, cfg.DBError)
				continue
			}
			if cfg.DB == nil {
				continue
			}
		}
		if r.AskedBy != "" && values[r.AskedBy] == "" {
			continue
		}
		if r.DisabledBy != "" && cfg.Bool(r.DisabledBy) {
			continue
		}
		c, err := r.New(cfg)
		switch {
		case err != nil:
			fail(r, err)
		case c != nil:
			cs = append(cs, c)
		}
	}
	return cs, failed, nil
}

// checkValues reports a value of r's flags that is not of its kind.
func checkValues(r Registration, values map[string]string) error {
	for _, f := range r.Flags {
		if err := checkValue(f.Kind, values[f.Name]); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	return nil
}

func checkValue(k FlagKind, v string) error {
	var err error
	switch k {
	case FlagBool:
		_, err = strconv.ParseBool(v)
	case FlagDuration:
		_, err = time.ParseDuration(v)
	case FlagString:
	default:
		err = fmt.Errorf("unknown flag kind %d", k)
	}
	return err
}

// namePattern is what collector, layer and flag names look like.
var (
	namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	flagPattern = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// validate checks a registry: names, layers and flags unique and well
// formed, AskedBy and DisabledBy naming flags of the right kind, defaults
// of their kind, a New function.
func validate(regs []Registration) error {
	var errs []error
	names, layers, flags := map[string]bool{}, map[string]bool{}, map[string]string{}
	for _, r := range regs {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("collect: registration %q: %s", r.Name, fmt.Sprintf(format, args...)))
		}
		if !namePattern.MatchString(r.Name) {
			bad("name must match %s", namePattern)
		}
		if names[r.Name] {
			bad("registered twice")
		}
		names[r.Name] = true
		_, typed := typedLayers()[r.Layer]
		switch {
		case !namePattern.MatchString(r.Layer):
			bad("layer %q must match %s", r.Layer, namePattern)
		case layers[r.Layer]:
			bad("layer %q is filled by another collector", r.Layer)
		case snapshotKeys()[r.Layer] && !typed:
			bad("layer %q is a snapshot field that is not a layer", r.Layer)
		}
		layers[r.Layer] = true
		if r.New == nil {
			bad("no New function")
		}
		kinds := map[string]FlagKind{}
		for _, f := range r.Flags {
			if !flagPattern.MatchString(f.Name) {
				bad("flag %q must match %s", f.Name, flagPattern)
			}
			if other, ok := flags[f.Name]; ok {
				bad("flag %q is also %q's", f.Name, other)
			}
			flags[f.Name] = r.Name
			kinds[f.Name] = f.Kind
			if err := checkValue(f.Kind, f.Default); err != nil {
				bad("flag %q default %q: %v", f.Name, f.Default, err)
			}
			if f.Usage == "" {
				bad("flag %q has no usage", f.Name)
			}
		}
		if k, ok := kinds[r.AskedBy]; r.AskedBy != "" && (!ok || k != FlagString) {
			bad("AskedBy %q is not one of its string flags", r.AskedBy)
		}
		if k, ok := kinds[r.DisabledBy]; r.DisabledBy != "" && (!ok || k != FlagBool) {
			bad("DisabledBy %q is not one of its bool flags", r.DisabledBy)
		}
	}
	return errors.Join(errs...)
}

// splitAddr splits a server address as the flags take it into network and
// address: a path (or unix:path) is a unix socket, anything else host:port.
func splitAddr(addr string) (network, address string) {
	if strings.HasPrefix(addr, "/") || strings.HasPrefix(addr, "unix:") {
		return "unix", strings.TrimPrefix(addr, "unix:")
	}
	return "tcp", addr
}

// JoinAddr is the inverse of the address flags' parsing (--memcached,
// --redis): a "unix" socket path becomes unix:path, a TCP address stays
// host:port. Callers configuring a collector from a net.Dial pair use it.
func JoinAddr(network, addr string) string {
	if network == "unix" {
		return "unix:" + addr
	}
	return addr
}

// The nginx collector's registration lives here until nginx.go is
// rewritten; it belongs in nginx.go, like the others in their files.
func init() {
	register(Registration{
		Name:  "nginx",
		Layer: "nginx",
		Order: 30,
		Flags: []Flag{
			{Name: "nginx-conf", Kind: FlagString, Usage: "nginx config to read (includes are followed)"},
		},
		AskedBy: "nginx-conf",
		New:     func(cfg Config) (Collector, error) { return NewNginx(cfg.Value("nginx-conf")), nil },
	})
}
