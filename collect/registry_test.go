package collect

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRegistry checks the registry itself: valid, the first collectors in
// the run order they always had, each typed layer filled by a collector,
// and the flags the CLI has always had, with their defaults.
func TestRegistry(t *testing.T) {
	if err := validate(registry); err != nil {
		t.Fatal(err)
	}
	var names []string
	flags := map[string]string{}
	layers := map[string]bool{}
	for _, r := range Registered() {
		names = append(names, r.Name)
		layers[r.Layer] = true
		for _, f := range r.Flags {
			flags[f.Name] = f.Default
		}
	}
	// The first collectors keep their order; a new one may come anywhere.
	old := slices.DeleteFunc(slices.Clone(names), func(n string) bool {
		return !slices.Contains([]string{"mysql", "linux", "nginx", "memcached", "redis"}, n)
	})
	if want := []string{"mysql", "linux", "nginx", "memcached", "redis"}; !slices.Equal(old, want) {
		t.Errorf("run order %v, want %v", names, want)
	}
	for layer := range typedLayers() {
		if !layers[layer] {
			t.Errorf("Snapshot field %q is filled by no registered collector", layer)
		}
	}
	want := map[string]string{
		"interval": "10s", "proc-root": "/proc", "no-linux": "false", "nginx-conf": "",
		"memcached": "", "redis": "", "redis-password-env": "",
	}
	for k, v := range want {
		if got, ok := flags[k]; !ok || got != v {
			t.Errorf("flag %s: default %q (declared %v), want %q", k, got, ok, v)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := func(cfg Config) (Collector, error) { return nil, nil }
	good := Registration{Name: "x", Layer: "x", New: ok, Flags: []Flag{
		{Name: "x-addr", Kind: FlagString, Usage: "u"}, {Name: "no-x", Kind: FlagBool, Default: "false", Usage: "u"},
	}, AskedBy: "x-addr", DisabledBy: "no-x"}
	with := func(f func(r *Registration)) []Registration {
		r := good
		r.Flags = slices.Clone(good.Flags)
		f(&r)
		return []Registration{r}
	}
	cases := []struct {
		name string
		regs []Registration
		want string // "" means valid
	}{
		{"valid", []Registration{good}, ""},
		{"a second one beside the real ones", append(slices.Clone(registry), good), ""},
		{"a typed layer", with(func(r *Registration) { r.Layer = "redis" }), ""},
		{"twice", []Registration{good, good}, "registered twice"},
		{"no name", with(func(r *Registration) { r.Name = "" }), "name must match"},
		{"no layer", with(func(r *Registration) { r.Layer = "" }), "layer \"\" must match"},
		{"a field that is not a layer", with(func(r *Registration) { r.Layer = "collector_errors" }), "not a layer"},
		{"no New", with(func(r *Registration) { r.New = nil }), "no New"},
		{"a flag of another", append(slices.Clone(registry), with(func(r *Registration) { r.Flags[0].Name = "redis"; r.AskedBy = "redis" })...), `flag "redis" is also "redis"'s`},
		{"a bad flag name", with(func(r *Registration) { r.Flags[0].Name = "--x"; r.AskedBy = "--x" }), "must match"},
		{"a bad default", with(func(r *Registration) { r.Flags[1].Default = "maybe" }), `default "maybe"`},
		{"no usage", with(func(r *Registration) { r.Flags[0].Usage = "" }), "no usage"},
		{"AskedBy a bool", with(func(r *Registration) { r.AskedBy = "no-x" }), "AskedBy"},
		{"AskedBy nothing", with(func(r *Registration) { r.AskedBy = "y" }), "AskedBy"},
		{"DisabledBy a string", with(func(r *Registration) { r.DisabledBy = "x-addr" }), "DisabledBy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := validate(tc.regs)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestStart checks which collectors a Config asks for and that one that
// cannot start is recorded, never fatal.
func TestStart(t *testing.T) {
	db, err := sql.Open("mysql", "u@tcp(127.0.0.1:1)/") // never used
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cases := []struct {
		name    string
		cfg     Config
		started []string
		failed  map[string]string // collector: error substring
		err     string
	}{
		{name: "nothing: Linux alone", started: []string{"linux"}},
		{name: "no-linux", cfg: Config{Values: map[string]string{"no-linux": "true"}}},
		{name: "everything", cfg: Config{DB: db, Values: map[string]string{
			"nginx-conf": "/etc/nginx/nginx.conf", "memcached": "/run/memcached.sock", "redis": "127.0.0.1:6379",
		}}, started: []string{"mysql", "linux", "nginx", "memcached", "redis"}},
		{name: "a server that could not be opened", cfg: Config{DBError: errors.New("access denied"), Values: map[string]string{"memcached": "127.0.0.1:11211"}},
			started: []string{"linux", "memcached"}, failed: map[string]string{"mysql": "access denied"}},
		{name: "a malformed setting", cfg: Config{DB: db, Values: map[string]string{"interval": "soon"}},
			started: []string{"linux"}, failed: map[string]string{"mysql": "interval: time: invalid duration"}},
		{name: "an unknown setting", cfg: Config{Values: map[string]string{"memcache": "x"}}, err: `no collector has a setting "memcache"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs, failed, err := start(tc.cfg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range cs {
				names = append(names, c.Name())
			}
			if !slices.Equal(names, tc.started) {
				t.Errorf("started %v, want %v", names, tc.started)
			}
			got := map[string]string{}
			for _, f := range failed {
				got[f.Collector] = f.Error
			}
			if len(got) != len(tc.failed) {
				t.Errorf("failed %v, want %v", got, tc.failed)
			}
			for k, v := range tc.failed {
				if !strings.Contains(got[k], v) {
					t.Errorf("%s: %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// TestTake runs the registered collectors from a Config: the flags reach
// them (--proc-root, the addresses, the Redis password's variable) and
// failures are recorded.
func TestTake(t *testing.T) {
	ctx := context.Background()
	if _, err := Take(ctx, Config{Values: map[string]string{"no-linux": "true"}}); !errors.Is(err, ErrNothingAsked) {
		t.Errorf("nothing asked: %v", err)
	}
	if s, err := Take(ctx, Config{Values: map[string]string{"proc-root": "testdata/linux-basic", "interval": "100ms"}}); err != nil || s.Errors == nil || len(s.Errors) != 0 {
		t.Errorf("no failure: errors %#v (%v); want an empty list", s.Errors, err)
	}
	s, err := Take(ctx, Config{
		DBError: errors.New("mysql: no such server"),
		Values:  map[string]string{"proc-root": "testdata/linux-basic", "interval": "100ms", "memcached": "127.0.0.1:1", "redis": "unix:" + filepath.Join(t.TempDir(), "none.sock")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Linux == nil || s.Linux.Cores != 4 {
		t.Errorf("--proc-root did not reach Linux: %+v", s.Linux)
	}
	var got []string
	for _, e := range s.Errors {
		got = append(got, e.Collector)
	}
	if want := []string{"mysql", "memcached", "redis"}; !slices.Equal(got, want) {
		t.Errorf("errors %+v, want from %v", s.Errors, want)
	}
	if !strings.Contains(s.Errors[2].Error, "unix") || !strings.Contains(s.Errors[1].Error, "tcp 127.0.0.1:1") {
		t.Errorf("addresses: %+v", s.Errors)
	}

	// The Redis password comes from the variable --redis-password-env names.
	cfg := Config{Values: map[string]string{"redis": "127.0.0.1:6379", "redis-password-env": "PW"}, Getenv: func(k string) string { return map[string]string{"PW": "s3cret"}[k] }}
	cs, _, err := start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rc, ok := cs[len(cs)-1].(*redisCollector); !ok || rc.password != "s3cret" || rc.network != "tcp" {
		t.Errorf("redis collector %#v", cs[len(cs)-1])
	}
}

func TestAddr(t *testing.T) {
	for _, tc := range []struct{ flag, network, addr string }{
		{"127.0.0.1:11211", "tcp", "127.0.0.1:11211"},
		{"/run/memcached/memcached.sock", "unix", "/run/memcached/memcached.sock"},
		{"unix:run/redis.sock", "unix", "run/redis.sock"},
	} {
		n, a := splitAddr(tc.flag)
		if n != tc.network || a != tc.addr {
			t.Errorf("splitAddr(%q) = %s %s", tc.flag, n, a)
		}
		if n, a = splitAddr(JoinAddr(tc.network, tc.addr)); n != tc.network || a != tc.addr {
			t.Errorf("JoinAddr(%s, %s) does not split back: %s %s", tc.network, tc.addr, n, a)
		}
	}
}

// exampleLayer and exampleCollector are what a new collector's one file
// holds (see the package documentation): a layer without a Snapshot
// field, kept in Layers.
type exampleLayer struct {
	Addr    string `json:"addr"`
	Workers int    `json:"workers"`
}

type exampleCollector struct{ addr string }

func (c exampleCollector) Name() string { return "example" }

func (c exampleCollector) Collect(_ context.Context, s *Snapshot) error {
	if err := s.SetLayer("example", exampleLayer{Addr: c.addr, Workers: 8}); err != nil {
		return err
	}
	return errors.New("example: status page <forbidden> & partial")
}

// TestNewCollectorIsOneFile registers a collector as its file would and
// follows it through a run, the JSON file and a load back.
func TestNewCollectorIsOneFile(t *testing.T) {
	saved := registry
	t.Cleanup(func() { registry = saved })
	register(Registration{
		Name: "example", Layer: "example", Order: 60,
		Flags:   []Flag{{Name: "example-addr", Kind: FlagString, Usage: "example server to read"}},
		AskedBy: "example-addr",
		New: func(cfg Config) (Collector, error) {
			return exampleCollector{addr: cfg.Value("example-addr")}, nil
		},
	})
	s, err := Take(context.Background(), Config{Values: map[string]string{"example-addr": "127.0.0.1:9000", "no-linux": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Errors) != 1 || !s.Errors[0].Partial || s.Errors[0].Collector != "example" || !s.Has("example") || s.Has("redis") {
		t.Fatalf("errors %+v", s.Errors)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"example":{"addr":"127.0.0.1:9000","workers":8},"collector_errors":[`)) {
		t.Errorf("layer not a top-level key before collector_errors: %s", b)
	}
	path := filepath.Join(t.TempDir(), "snap.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := LayerOf[exampleLayer](back, "example")
	if err != nil || l == nil || l.Workers != 8 || l.Addr != "127.0.0.1:9000" {
		t.Errorf("layer back: %+v %v", l, err)
	}
	if len(back.Errors) != 1 || back.Errors[0].Error != s.Errors[0].Error {
		t.Errorf("errors back: %+v", back.Errors)
	}
	if l, err := LayerOf[exampleLayer](back, "other"); l != nil || err != nil {
		t.Errorf("absent layer: %v %v", l, err)
	}
}

// TestSnapshotJSON checks that the JSON of a snapshot without extra layers
// is byte for byte that of the plain struct, however it is encoded, and
// that extra layers round-trip.
func TestSnapshotJSON(t *testing.T) {
	s := &Snapshot{
		Version: SchemaVersion, Taken: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Host: "db<1>&",
		Memcached: &Memcached{Network: "tcp", Addr: "a&b", Stats: map[string]string{"pid": "1"}},
		Errors:    []CollectorError{{Collector: "redis", Error: `"collector_errors": <x>`}},
	}
	encode := func(v any, escapeHTML bool) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(escapeHTML)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, esc := range []bool{true, false} {
		if got, want := encode(s, esc), encode((*snapshotFields)(s), esc); got != want {
			t.Errorf("escapeHTML %v: the JSON changed:\n%s\nwant\n%s", esc, got, want)
		}
	}
	if got, want := encode(*s, true), encode((*snapshotFields)(s), true); got != want {
		t.Errorf("a Snapshot value encodes differently:\n%s", got)
	}

	for _, name := range []string{"memcached", "Memcached", "collector_errors"} {
		if err := s.SetLayer(name, 1); err == nil {
			t.Errorf("SetLayer of the field %s", name)
		}
	}
	if err := s.SetLayer("php_fpm", map[string]int{"children": 5}); err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal([]byte(encode(s, true)), &back); err != nil {
		t.Fatal(err)
	}
	if string(back.Layers["php_fpm"]) != `{"children":5}` || len(back.Layers) != 1 || back.Memcached == nil || back.Host != s.Host || back.Errors[0] != s.Errors[0] {
		t.Errorf("round trip: %+v layers %s", back, back.Layers)
	}
	if encode(&back, false) != encode(s, false) {
		t.Errorf("second encoding differs:\n%s\n%s", encode(&back, false), encode(s, false))
	}

	// encoding/json matches field names without regard to case: such a
	// key is the field's, not an extra layer.
	if err := json.Unmarshal([]byte(`{"version":1,"Memcached":{"addr":"x"},"future":[1]}`), &back); err != nil {
		t.Fatal(err)
	}
	if back.Memcached == nil || back.Memcached.Addr != "x" || len(back.Layers) != 1 || back.Layers["future"] == nil || back.MySQL != nil {
		t.Errorf("decoded %+v layers %s", back, back.Layers)
	}
	if err := json.Unmarshal([]byte(`{"version":"one"}`), &back); err == nil {
		t.Error("a bad version decoded")
	}
	bad := &Snapshot{Layers: map[string]json.RawMessage{"host": []byte(`"x"`)}}
	if _, err := json.Marshal(bad); err == nil {
		t.Error("a Layers entry named like a field was written")
	}
}
