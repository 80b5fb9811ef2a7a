package collect

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stacktune/stacktune/input"
)

// SchemaVersion is the version of the Snapshot JSON layout.
const SchemaVersion = 1

// Snapshot is everything collected from one host at one time: the input of
// `stacktune audit`, saved as JSON by `stacktune collect -o snap.json` so it
// can be audited, diffed or reported on another machine. A layer the run did
// not or could not collect is nil (absent from Layers); why is in Errors.
//
// Each layer is a top-level JSON key named by its collector's
// Registration.Layer: the typed fields below, or an entry of Layers for a
// collector that has no field of its own.
type Snapshot struct {
	Version int       `json:"version"`
	Taken   time.Time `json:"taken"`
	Host    string    `json:"host"`

	MySQL     *MySQL     `json:"mysql,omitempty"`
	Linux     *Linux     `json:"linux,omitempty"`
	Nginx     *Nginx     `json:"nginx,omitempty"`
	Memcached *Memcached `json:"memcached,omitempty"`
	Redis     *Redis     `json:"redis,omitempty"`

	// Layers holds the layers that have no field above, by layer name,
	// as JSON (set with SetLayer, read with LayerOf). In the snapshot
	// JSON each is a top-level key beside "mysql" and the others, so a
	// layer can later become a typed field without changing the files.
	// Loading keeps every unknown top-level key here, so a snapshot taken
	// by a newer stacktune keeps its layers.
	Layers map[string]json.RawMessage `json:"-"`

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

// Starter is a collector that measures over the run's interval: Run calls
// Start on every Starter before any collector's Collect, so the first
// reading of its counters is taken when the MySQL collector's first status
// reading is, and its Collect takes the second (waiting for what is left of
// its interval). A Start that fails is not recorded by Run: the
// collector's Collect says what it could not measure.
type Starter interface {
	Start(ctx context.Context) error
}

// waitSince waits until interval has passed since start (at once when it
// has, or when start is zero), or ctx ends: a Starter's Collect calls it
// before its second reading.
func waitSince(ctx context.Context, start time.Time, interval time.Duration) error {
	if start.IsZero() || interval <= 0 {
		return nil
	}
	left := interval - time.Since(start)
	if left <= 0 {
		return nil
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("interrupted before the second reading: %w", ctx.Err())
	case <-t.C:
	}
	return nil
}

// Run runs every collector in order and records failures in the snapshot.
// Take starts the registered collectors from a Config and calls it.
func Run(ctx context.Context, cs []Collector) *Snapshot {
	host, _ := os.Hostname()
	s := &Snapshot{Version: SchemaVersion, Taken: time.Now().UTC(), Host: host, Errors: []CollectorError{}}
	for _, c := range cs {
		if st, ok := c.(Starter); ok {
			_ = st.Start(ctx)
		}
	}
	for _, c := range cs {
		if err := c.Collect(ctx, s); err != nil {
			s.Errors = append(s.Errors, CollectorError{Collector: c.Name(), Error: err.Error(), Partial: s.Has(layerOf(c.Name()))})
		}
	}
	return s
}

// Has reports whether the snapshot holds the layer (a Registration.Layer).
func (s *Snapshot) Has(layer string) bool {
	if i, ok := typedLayers()[layer]; ok {
		return !reflect.ValueOf(s).Elem().Field(i).IsNil()
	}
	_, ok := s.Layers[layer]
	return ok
}

// SetLayer stores v as the layer (a collector's Registration.Layer) in
// Layers. It refuses a layer that is a field of Snapshot: set the field.
func (s *Snapshot) SetLayer(layer string, v any) error {
	if isSnapshotKey(layer) {
		return fmt.Errorf("collect: %q is a field of Snapshot, not an entry of Layers", layer)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("collect: layer %s: %w", layer, err)
	}
	if s.Layers == nil {
		s.Layers = map[string]json.RawMessage{}
	}
	s.Layers[layer] = b
	return nil
}

// LayerOf returns the layer of Layers as a *T: nil, nil when the snapshot
// does not hold it. Rules read a layer without a field of its own with it.
func LayerOf[T any](s *Snapshot, layer string) (*T, error) {
	b, ok := s.Layers[layer]
	if !ok {
		return nil, nil
	}
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("collect: layer %s: %w", layer, err)
	}
	return v, nil
}

// snapshotFields is Snapshot without its JSON methods.
type snapshotFields Snapshot

// snapshotKeys are the JSON keys of Snapshot's fields.
var snapshotKeys = sync.OnceValue(func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[Snapshot]()
	for i := range t.NumField() {
		if name := jsonName(t.Field(i)); name != "" {
			keys[name] = true
		}
	}
	return keys
})

// typedLayers are the layers with a field of their own (the pointer
// fields of Snapshot), by JSON key, to their field index.
var typedLayers = sync.OnceValue(func() map[string]int {
	layers := map[string]int{}
	t := reflect.TypeFor[Snapshot]()
	for i := range t.NumField() {
		if f := t.Field(i); f.Type.Kind() == reflect.Pointer {
			if name := jsonName(f); name != "" {
				layers[name] = i
			}
		}
	}
	return layers
})

// isSnapshotKey reports whether a JSON key is a field's: encoding/json
// matches keys to fields without regard to case.
func isSnapshotKey(k string) bool { return snapshotKeys()[strings.ToLower(k)] }

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

// MarshalJSON writes the fields as encoding/json would, with the entries
// of Layers as top-level keys (sorted) just before "collector_errors".
// Without Layers the bytes are those of the plain struct.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// The caller's encoder applies its own HTML escaping to what we return.
	enc.SetEscapeHTML(false)
	if err := enc.Encode((*snapshotFields)(&s)); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(s.Layers) == 0 {
		return b, nil
	}
	// "collector_errors" is the last field; its value (an array of
	// CollectorError) has no such key, and a key inside a string would
	// have its quotes escaped, so the last match is the top-level one.
	const errorsKey = `,"collector_errors":`
	at := bytes.LastIndex(b, []byte(errorsKey))
	if at < 0 {
		return nil, fmt.Errorf("collect: snapshot JSON without %s", errorsKey)
	}
	var out bytes.Buffer
	out.Write(b[:at])
	for _, k := range slices.Sorted(maps.Keys(s.Layers)) {
		if isSnapshotKey(k) {
			return nil, fmt.Errorf("collect: Layers entry %q is a field of Snapshot", k)
		}
		key, _ := json.Marshal(k)
		out.WriteByte(',')
		out.Write(key)
		out.WriteByte(':')
		out.Write(s.Layers[k])
	}
	out.Write(b[at:])
	return out.Bytes(), nil
}

// UnmarshalJSON reads the fields as encoding/json would and keeps every
// other top-level key in Layers.
func (s *Snapshot) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	var f snapshotFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for k, v := range all {
		if isSnapshotKey(k) {
			delete(all, k)
			continue
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return err
		}
		all[k] = c.Bytes()
	}
	*s = Snapshot(f)
	s.Layers = nil
	if len(all) > 0 {
		s.Layers = all
	}
	return nil
}

// MaxSnapshotFile bounds a snapshot read from disk: far above a real one
// (tens of KB), and what a fleet host may send.
const MaxSnapshotFile = 64 << 20

// Load reads a snapshot saved as JSON: a regular file (a FIFO is refused
// without blocking) of at most MaxSnapshotFile bytes, decoded as it is
// read.
func Load(path string) (*Snapshot, error) {
	f, fi, err := input.OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	defer f.Close()
	if fi.Size() > MaxSnapshotFile {
		return nil, fmt.Errorf("reading snapshot: %w (collect.MaxSnapshotFile)", &input.TooLargeError{Path: path, Limit: MaxSnapshotFile})
	}
	var s Snapshot
	dec := json.NewDecoder(bufio.NewReader(io.LimitReader(f, MaxSnapshotFile)))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s is not a stacktune snapshot: %w", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s is not a stacktune snapshot: data after its JSON value", path)
	}
	if s.Version == 0 || s.Version > SchemaVersion {
		return nil, fmt.Errorf("%s: snapshot version %d, this stacktune reads up to %d", path, s.Version, SchemaVersion)
	}
	return &s, nil
}
