package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// SchemaVersion is the version of the Snapshot JSON layout.
const SchemaVersion = 1

// Snapshot is everything collected from one host at one time: the input of
// `stacktune audit`, saved as JSON by `stacktune collect -o snap.json` so it
// can be audited, diffed or reported on another machine. A layer the run did
// not or could not collect is nil; why is in Errors.
type Snapshot struct {
	Version int       `json:"version"`
	Taken   time.Time `json:"taken"`
	Host    string    `json:"host"`

	MySQL     *MySQL     `json:"mysql,omitempty"`
	Linux     *Linux     `json:"linux,omitempty"`
	Nginx     *Nginx     `json:"nginx,omitempty"`
	Memcached *Memcached `json:"memcached,omitempty"`
	Redis     *Redis     `json:"redis,omitempty"`

	// Errors records collectors that failed or saw only part of what they
	// wanted (a wrong password, a missing privilege, an unreadable file).
	// A failure never aborts the other collectors.
	Errors []CollectorError `json:"collector_errors"`
}

// CollectorError is one collector's failure.
type CollectorError struct {
	Collector string `json:"collector"`
	Error     string `json:"error"`
	// Partial is true when the collector still filled part of its layer.
	Partial bool `json:"partial"`
}

// Collector gathers one layer into a Snapshot. Collect fills its part of s
// and returns an error for what it could not get; it may have filled part of
// its layer even then (see CollectorError.Partial). Collectors only read.
type Collector interface {
	Name() string
	Collect(ctx context.Context, s *Snapshot) error
}

// Run runs every collector in order and records failures in the snapshot.
func Run(ctx context.Context, cs []Collector) *Snapshot {
	host, _ := os.Hostname()
	s := &Snapshot{Version: SchemaVersion, Taken: time.Now().UTC(), Host: host, Errors: []CollectorError{}}
	for _, c := range cs {
		if err := c.Collect(ctx, s); err != nil {
			s.Errors = append(s.Errors, CollectorError{Collector: c.Name(), Error: err.Error(), Partial: s.has(c.Name())})
		}
	}
	return s
}

// has reports whether the layer a collector fills is present.
func (s *Snapshot) has(collector string) bool {
	switch collector {
	case "mysql":
		return s.MySQL != nil
	case "linux":
		return s.Linux != nil
	case "nginx":
		return s.Nginx != nil
	case "memcached":
		return s.Memcached != nil
	case "redis":
		return s.Redis != nil
	}
	return false
}

// Load reads a snapshot saved as JSON.
func Load(path string) (*Snapshot, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s is not a stacktune snapshot: %w", path, err)
	}
	if s.Version == 0 || s.Version > SchemaVersion {
		return nil, fmt.Errorf("%s: snapshot version %d, this stacktune reads up to %d", path, s.Version, SchemaVersion)
	}
	return &s, nil
}
