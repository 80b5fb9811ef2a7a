package knobsearch

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/mysqlvar"
)

// Constraints are the rules a search keeps. A candidate that breaks one
// is never tried.
type Constraints struct {
	// Fixed are settings never touched (--fix NAME=VALUE): their knobs
	// are not in the space, and no configuration writes them.
	Fixed map[string]string
	// AllowDurabilityLoss lets knobs that can lose commits on a crash
	// into the space (innodb_flush_log_at_trx_commit, innodb_doublewrite,
	// sync_binlog).
	AllowDurabilityLoss bool
	// MemoryLimit caps the RAM the memory budget counts
	// (advise.Options.MemoryLimitBytes); MemoryReserve and DedicatedDB
	// are the audit's options of the same names.
	MemoryLimit   int64
	MemoryReserve int64
	DedicatedDB   bool
	// CanRestart says the server can be restarted: without it, knobs that
	// take effect only at a restart stay out of the space.
	CanRestart bool
	// Only, when set, limits the space to these knobs.
	Only []string
}

// adviseOptions are the audit's options the budget is computed with.
func (c Constraints) adviseOptions() advise.Options {
	return advise.Options{AllowDurabilityLoss: c.AllowDurabilityLoss, Fixed: c.Fixed,
		MemoryLimitBytes: c.MemoryLimit, MemoryReserveBytes: c.MemoryReserve, DedicatedDB: c.DedicatedDB}
}

// Space is the knobs a search varies, on one server, with the
// constraints that bound it.
type Space struct {
	Knobs  []Knob           `json:"knobs"`
	Server mysqlvar.Server  `json:"server"`
	Left   []LeftOut        `json:"left_out"`
	Budget BudgetSummary    `json:"budget"`
	Fixed  map[string]Fixed `json:"fixed,omitempty"`

	snap    *collect.Snapshot
	opt     advise.Options
	running map[string]string
}

// LeftOut is a catalogue knob the space does not hold, and why.
type LeftOut struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

// Fixed is a --fix setting and what the server runs.
type Fixed struct {
	Want    string `json:"want"`
	Running string `json:"running"`
	Holds   bool   `json:"holds"`
}

// BudgetSummary is the memory budget of the server as found.
type BudgetSummary struct {
	RAM      int64  `json:"ram"`
	Total    int64  `json:"total"`
	Formula  string `json:"formula"`
	PoolRoom int64  `json:"buffer_pool_room"`
}

// ErrNoBudget says the memory budget cannot be computed: the snapshot
// does not know the RAM of the server's host.
var ErrNoBudget = errors.New("the memory budget needs the RAM of the database host: collect on that host, or give a memory budget")

// NewSpace builds the space of the catalogue's knobs that this server
// has, that the constraints allow, with each knob's running value as its
// base. The buffer pool may grow to what the memory budget leaves
// (advise.Budget's BufferPoolRoom) and never beyond.
func NewSpace(snap *collect.Snapshot, c Constraints) (*Space, error) {
	if snap == nil || snap.MySQL == nil || len(snap.MySQL.Variables) == 0 {
		return nil, errors.New("knobsearch: the snapshot has no MySQL variables")
	}
	my := snap.MySQL
	srv := mysqlvar.Server{Flavor: my.Flavor, Version: my.VersionNumber, Raw: my.Version}
	s := &Space{Server: srv, snap: snap, opt: c.adviseOptions(), running: my.Variables, Fixed: map[string]Fixed{}}
	budget, ok := advise.BudgetWith(snap, s.opt, nil)
	if !ok {
		return nil, fmt.Errorf("knobsearch: %w", ErrNoBudget)
	}
	s.Budget = BudgetSummary{RAM: budget.RAM, Total: budget.Total(), Formula: budget.Formula(), PoolRoom: budget.BufferPoolRoom()}
	fixed := map[string]string{}
	for k, v := range c.Fixed {
		n := mysqlvar.Norm(k)
		fixed[n] = v
		run, seen := my.Variables[n]
		s.Fixed[n] = Fixed{Want: v, Running: run, Holds: seen && mysqlvar.Equal(run, v)}
	}
	for _, k := range catalogue(srv) {
		why := s.admit(&k, c, fixed, budget)
		if why != "" {
			s.Left = append(s.Left, LeftOut{Name: k.Name, Why: why})
			continue
		}
		s.Knobs = append(s.Knobs, k)
	}
	return s, nil
}

// admit fills k from the server and says why it stays out ("" when it
// is in).
func (s *Space) admit(k *Knob, c Constraints, fixed map[string]string, budget *advise.Budget) string {
	if v, ok := fixed[k.Name]; ok {
		return "fixed at " + v + " (--fix): never touched"
	}
	if len(c.Only) > 0 && !slices.Contains(c.Only, k.Name) {
		return "not among the knobs asked for"
	}
	present, known := mysqlvar.Available(s.Server.Flavor, s.Server.Version, k.Name)
	if !known {
		return "not in the version table"
	}
	base, seen := s.running[k.Name]
	if !present || !seen {
		return s.Server.String() + " has no such variable"
	}
	if k.Durability && !c.AllowDurabilityLoss {
		return "can lose commits on a crash: searched only with --allow-durability-loss"
	}
	if k.Name == "sync_binlog" {
		if on, _ := mysqlvar.ParseBool(s.running["log_bin"]); !on {
			return "the binary log is off"
		}
	}
	dyn, _ := mysqlvar.Dynamic(s.Server.Flavor, s.Server.Version, k.Name)
	k.Restart = !dyn
	if k.Restart && !c.CanRestart {
		return "takes effect only at a restart, and there is no way to restart the server"
	}
	k.Base = base
	switch k.Kind {
	case Enum:
		found := false
		for _, v := range k.Values {
			found = found || mysqlvar.Equal(v, base)
		}
		if !found {
			k.Values = append([]string{base}, k.Values...)
		}
	default:
		if k.Name == "innodb_buffer_pool_size" {
			n, _ := mysqlvar.ParseInt(base)
			room := budget.BufferPoolRoom() / int64(k.Step) * int64(k.Step)
			if float64(room) < 1.1*float64(n) {
				return fmt.Sprintf("no room to grow it in the memory budget (%s)", budget.Formula())
			}
			k.Min, k.Max = float64(n), float64(room)
			break
		}
		// A running value outside the catalogue's range widens it, so the
		// base is a point of the space.
		if f, ok := number(base); ok {
			k.Min, k.Max = min(k.Min, f), max(k.Max, f)
			if k.Log && k.Min <= 0 {
				k.Log = false
			}
		}
	}
	return ""
}

// Config is a configuration: the variables that differ from the
// server's running values, with their values.
type Config map[string]string

// Keys are the variables, sorted.
func (c Config) Keys() []string { return slices.Sorted(maps.Keys(c)) }

// String is "name=value name=value" in name order, "(as found)" for none.
func (c Config) String() string {
	if len(c) == 0 {
		return "(as found)"
	}
	s := ""
	for i, k := range c.Keys() {
		if i > 0 {
			s += " "
		}
		s += k + "=" + c[k]
	}
	return s
}

// config is the configuration of point (one coordinate per knob of the
// space) over base: the knobs' values that differ from the running ones,
// and what they tie.
func (s *Space) config(point []float64, base Config) Config {
	out := maps.Clone(base)
	if out == nil {
		out = Config{}
	}
	for i := range s.Knobs {
		s.set(out, &s.Knobs[i], s.Knobs[i].value(point[i]))
	}
	return out
}

// set puts knob k at v in c (removing it when v is the running value),
// with the variables it ties.
func (s *Space) set(c Config, k *Knob, v string) {
	if mysqlvar.Equal(v, k.Base) {
		delete(c, k.Name)
	} else {
		c[k.Name] = v
	}
	if k.tied == nil {
		return
	}
	for name, tv := range k.tied(v) {
		if run, ok := s.running[name]; ok && mysqlvar.Equal(run, tv) {
			delete(c, name)
		} else if ok {
			c[name] = tv
		}
	}
}

// point is the coordinates of c: each knob's value in c, else its
// running value.
func (s *Space) point(c Config) []float64 {
	p := make([]float64, len(s.Knobs))
	for i := range s.Knobs {
		k := &s.Knobs[i]
		v, ok := c[k.Name]
		if !ok {
			v = k.Base
		}
		u, ok := k.unit(v)
		if !ok {
			u = 0.5
		}
		p[i] = u
	}
	return p
}

// Feasible says whether the server may run c: its memory budget (the
// audit's: buffer pool, global and per-connection buffers ×
// max_connections, other services and the reserve) fits the RAM, and no
// rule between variables that the server enforces is broken. why says
// what is wrong.
func (s *Space) Feasible(c Config) (ok bool, why string) {
	b, ok := advise.BudgetWith(s.snap, s.opt, c)
	if !ok {
		return false, ErrNoBudget.Error()
	}
	if b.Total() > b.RAM {
		return false, "over the memory budget: " + b.Formula()
	}
	values := maps.Clone(s.running)
	maps.Copy(values, c)
	if msgs := mysqlvar.Conflicts(s.Server, values); len(msgs) > 0 {
		return false, msgs[0]
	}
	return true, ""
}

// Knob returns the space's knob named name (nil when it is not in it).
func (s *Space) Knob(name string) *Knob { return find(s.Knobs, name) }

// Running is the server's value of a variable when the search started.
func (s *Space) Running(name string) string { return s.running[name] }

// budgetTotal is the budget's total for c, for reports.
func (s *Space) budgetTotal(c Config) string {
	b, ok := advise.BudgetWith(s.snap, s.opt, c)
	if !ok {
		return "?"
	}
	return gibText(b.Total()) + " of " + gibText(b.RAM)
}

// gibText is bytes in GiB with two decimals.
func gibText(n int64) string { return fmt.Sprintf("%.2f GiB", float64(n)/gib) }

// itoa is strconv.Itoa, for messages.
func itoa(n int) string { return strconv.Itoa(n) }
