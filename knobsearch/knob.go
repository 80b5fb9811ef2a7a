package knobsearch

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stacktune/stacktune/mysqlvar"
)

// Kind is a knob's domain.
type Kind int

// Kinds of knob.
const (
	// Size is bytes, searched on a log scale and rounded to Step.
	Size Kind = iota
	// Int is an integer, rounded to Step (1 unless set).
	Int
	// Float is a number with two decimals.
	Float
	// Enum is one of Values.
	Enum
)

// Knob is one setting the search may change: a MySQL variable, its
// domain, and what is known about it.
type Knob struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Min and Max bound a numeric knob; Log searches it on a log scale.
	Min  float64 `json:"min,omitempty"`
	Max  float64 `json:"max,omitempty"`
	Log  bool    `json:"log,omitempty"`
	Step float64 `json:"step,omitempty"`
	// Values are an Enum's choices.
	Values []string `json:"values,omitempty"`
	// Durability marks a knob that can lose commits on a crash: in the
	// space only with Constraints.AllowDurabilityLoss.
	Durability bool `json:"durability,omitempty"`
	// Restart says a change takes effect only at a restart (from the
	// version table, mysqlvar.Dynamic).
	Restart bool `json:"restart"`
	// Base is the running value when the search started.
	Base string `json:"base"`
	// Source says why the knob is in the catalogue.
	Source string `json:"source"`
	// tied are variables set from this knob's value (innodb_io_capacity_max
	// follows innodb_io_capacity).
	tied func(v string) map[string]string
}

// value is the knob's value at u in [0, 1].
func (k *Knob) value(u float64) string {
	u = math.Min(math.Max(u, 0), 1)
	if k.Kind == Enum {
		i := min(int(u*float64(len(k.Values))), len(k.Values)-1)
		return k.Values[i]
	}
	var v float64
	if k.Log {
		v = math.Exp(math.Log(k.Min) + u*(math.Log(k.Max)-math.Log(k.Min)))
	} else {
		v = k.Min + u*(k.Max-k.Min)
	}
	switch k.Kind {
	case Float:
		return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	default:
		step := math.Max(k.Step, 1)
		r := math.Round(v/step) * step
		r = math.Min(math.Max(r, math.Ceil(k.Min/step)*step), math.Floor(k.Max/step)*step)
		return strconv.FormatInt(int64(r), 10)
	}
}

// unit is where value v lies in [0, 1] (the middle of its cell for an
// Enum); ok is false for a value outside the domain.
func (k *Knob) unit(v string) (float64, bool) {
	if k.Kind == Enum {
		for i, x := range k.Values {
			if mysqlvar.Equal(x, v) {
				return (float64(i) + 0.5) / float64(len(k.Values)), true
			}
		}
		return 0, false
	}
	f, ok := number(v)
	if !ok || f < k.Min*(1-1e-9) || f > k.Max*(1+1e-9) {
		return 0, false
	}
	if k.Log {
		return (math.Log(f) - math.Log(k.Min)) / (math.Log(k.Max) - math.Log(k.Min)), true
	}
	if k.Max == k.Min {
		return 0.5, true
	}
	return (f - k.Min) / (k.Max - k.Min), true
}

func number(v string) (float64, bool) {
	if n, ok := mysqlvar.ParseInt(v); ok {
		return float64(n), true
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return f, err == nil
}

// Describe is the knob's domain for people: "128 MiB..6 GiB (log)",
// "O_DIRECT | fsync | O_DSYNC".
func (k *Knob) Describe() string {
	if k.Kind == Enum {
		return strings.Join(k.Values, " | ")
	}
	f := func(v float64) string {
		if k.Kind == Size {
			return sizeText(int64(v))
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	s := f(k.Min) + ".." + f(k.Max)
	if k.Log {
		s += " (log)"
	}
	return s
}

// BaseText is the running value, sizes in binary units.
func (k *Knob) BaseText() string {
	if n, ok := mysqlvar.ParseInt(k.Base); ok && k.Kind == Size {
		return sizeText(n)
	}
	return k.Base
}

// sizeText is bytes in the largest binary unit that keeps them whole
// enough: 134217728 → "128M".
func sizeText(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.v && n%(u.v/16) == 0 {
			x := float64(n) / float64(u.v)
			return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

const (
	mib = 1 << 20
	gib = 1 << 30
)

// Catalogue facts: what the 2015 tpcc-mysql contest entry and the InnoDB manuals say matters for
// a write-heavy OLTP load, each with its domain. The buffer pool's upper
// bound comes from the memory budget (Space), the others are fixed.
func catalogue(srv mysqlvar.Server) []Knob {
	redo := mysqlvar.RedoCapacityVariable(srv.Flavor, srv.Version)
	redoMin := 48.0 * mib
	if redo == "innodb_redo_log_capacity" {
		redoMin = 100 * mib
	}
	ks := []Knob{
		{Name: "innodb_buffer_pool_size", Kind: Size, Log: true, Step: 128 * mib,
			Source: "the 2015 tpcc-mysql contest write-up (the first knob: 28 GB of 32 GB), the ISUCON5 qualifier write-up (~80% of RAM), the smartphone game backend's write-up"},
		{Name: redo, Kind: Size, Min: redoMin, Max: 2 * gib, Log: true, Step: mib,
			Source: "the 2015 tpcc-mysql contest write-up (4 GB log files), the smartphone game backend's write-up; fewer checkpoints under a write load"},
		{Name: "innodb_log_buffer_size", Kind: Size, Min: 8 * mib, Max: 256 * mib, Log: true, Step: mib,
			Source: "the 2015 tpcc-mysql contest write-up (64M)"},
		{Name: "innodb_io_capacity", Kind: Int, Min: 100, Max: 20000, Log: true, Step: 100,
			Source: "the smartphone game backend's write-up (raised for fast storage); the 2015 tpcc-mysql contest write-up had it set already",
			tied: func(v string) map[string]string {
				n, _ := strconv.ParseInt(v, 10, 64)
				return map[string]string{"innodb_io_capacity_max": strconv.FormatInt(max(2000, 2*n), 10)}
			}},
		{Name: "innodb_max_dirty_pages_pct", Kind: Float, Min: 50, Max: 99,
			Source: "the 2015 tpcc-mysql contest write-up (90)"},
		{Name: "innodb_adaptive_flushing_lwm", Kind: Float, Min: 0, Max: 70,
			Source: "InnoDB manual 'Configuring Buffer Pool Flushing'"},
		{Name: "innodb_lru_scan_depth", Kind: Int, Min: 128, Max: 8192, Log: true, Step: 1,
			Source: "the 2015 tpcc-mysql contest write-up (2000)"},
		{Name: "innodb_flush_neighbors", Kind: Enum, Values: []string{"0", "1", "2"},
			Source: "the 2015 tpcc-mysql contest write-up (tried 0: weak on ioDrive)"},
		{Name: "innodb_flush_method", Kind: Enum, Values: []string{"O_DIRECT", "fsync", "O_DSYNC"},
			Source: "the 2015 tpcc-mysql contest write-up (ALL_O_DIRECT weak); the smartphone game backend's write-up (O_DIRECT)"},
		{Name: "innodb_adaptive_hash_index", Kind: Enum, Values: []string{"OFF", "ON"},
			Source: "InnoDB manual 'Adaptive Hash Index' (contention under concurrent writes)"},
		{Name: "innodb_change_buffering", Kind: Enum, Values: []string{"none", "inserts", "all"},
			Source: "InnoDB manual 'Change Buffer'"},
		{Name: "innodb_thread_concurrency", Kind: Int, Min: 0, Max: 32, Step: 1,
			Source: "the 2015 tpcc-mysql contest write-up (tried: weak)"},
		{Name: "innodb_purge_threads", Kind: Int, Min: 1, Max: 8, Step: 1,
			Source: "InnoDB manual 'Purge Configuration'"},
		{Name: "innodb_spin_wait_delay", Kind: Int, Min: 0, Max: 32, Step: 1,
			Source: "InnoDB manual 'Configuring Spin Lock Polling' (spinning costs a small host its cores)"},
		// Durability: only with AllowDurabilityLoss.
		{Name: "innodb_flush_log_at_trx_commit", Kind: Enum, Values: []string{"1", "2", "0"}, Durability: true,
			Source: "the 2015 tpcc-mysql contest write-up (fixed at 1 by the contest), the smartphone game backend's write-up"},
		{Name: "innodb_doublewrite", Kind: Enum, Values: []string{"ON", "OFF"}, Durability: true,
			Source: "the 2015 tpcc-mysql contest write-up (fixed at 1 by the contest)"},
		{Name: "sync_binlog", Kind: Enum, Values: []string{"1", "0", "100"}, Durability: true,
			Source: "the 2015 tpcc-mysql contest write-up (sync_binlog=0)"},
	}
	if srv.IsMariaDB() {
		ks = append(ks, Knob{Name: "innodb_log_file_buffering", Kind: Enum, Values: []string{"OFF", "ON"},
			Source: "MariaDB KB 'innodb_log_file_buffering' (the redo log through the page cache or O_DIRECT: which commits faster depends on the storage)"})
		ks = append(ks, Knob{Name: "thread_handling", Kind: Enum, Values: []string{"one-thread-per-connection", "pool-of-threads"},
			Source: "MariaDB KB 'Thread Pool in MariaDB' (fewer threads than connections on a small host)"})
	}
	return ks
}

// contestValues are the settings a 2015 tpcc-mysql tuning contest's
// write-up (Server Festa 2015, TPC-C on ioDrive) found effective, the
// search's second starting point (the first is the audit's): the buffer
// pool as large as the budget allows, a large redo log and log buffer,
// 90% dirty pages, an LRU scan depth of 2000, no neighbour flushing.
func contestValues(space []Knob) map[string]string {
	out := map[string]string{}
	for i := range space {
		k := &space[i]
		switch k.Name {
		case "innodb_buffer_pool_size":
			out[k.Name] = k.value(1)
		case "innodb_log_file_size", "innodb_redo_log_capacity":
			out[k.Name] = k.value(1)
		case "innodb_log_buffer_size":
			out[k.Name] = clampValue(k, 64*mib)
		case "innodb_max_dirty_pages_pct":
			out[k.Name] = clampValue(k, 90)
		case "innodb_lru_scan_depth":
			out[k.Name] = clampValue(k, 2000)
		case "innodb_flush_neighbors":
			out[k.Name] = "0"
		}
	}
	return out
}

// clampValue is v inside the knob's range, as the knob writes it.
func clampValue(k *Knob, v float64) string {
	u, ok := k.unit(strconv.FormatFloat(math.Min(math.Max(v, k.Min), k.Max), 'f', -1, 64))
	if !ok {
		return k.Base
	}
	return k.value(u)
}

// Names lists knob names.
func names(ks []Knob) []string {
	out := make([]string, len(ks))
	for i := range ks {
		out[i] = ks[i].Name
	}
	return out
}

// find returns the knob named name.
func find(ks []Knob, name string) *Knob {
	i := slices.IndexFunc(ks, func(k Knob) bool { return k.Name == name })
	if i < 0 {
		return nil
	}
	return &ks[i]
}

func (k Kind) String() string {
	switch k {
	case Size:
		return "size"
	case Int:
		return "int"
	case Float:
		return "float"
	case Enum:
		return "enum"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}
