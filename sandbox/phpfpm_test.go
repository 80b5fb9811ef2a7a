package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPHPFPM starts a pool, runs a script, reads the status page, edits
// the pool and reloads: the new settings are the running ones (a static
// pool of three runs three workers) and the old workers are gone; a
// broken pool file is refused by Test and by Reload, and the server keeps
// running.
func TestPHPFPM(t *testing.T) {
	ctx := context.Background()
	p := NewPHPFPM(t, PHPFPMOptions{Pool: map[string]string{"pm.max_children": "4"}, Scripts: map[string]string{"hello.php": `<?php echo "hello ", $_GET["n"] ?? "";`}})
	resp, err := p.Request(ctx, "hello.php", "n=7")
	if err != nil || resp.Status != 200 || string(resp.Body) != "hello 7" {
		t.Fatalf("hello.php: %+v %v", resp, err)
	}
	resp, err = p.Request(ctx, "/status", "json")
	if err != nil || resp.Status != 200 {
		t.Fatalf("status: %+v %v", resp, err)
	}
	var st map[string]any
	if err := json.Unmarshal(resp.Body, &st); err != nil || st["pool"] != "www" || st["process manager"] != "dynamic" {
		t.Fatalf("status %s: %v", resp.Body, err)
	}
	if b, _ := os.ReadFile(p.PoolPath()); !strings.Contains(string(b), "pm.max_children = 4") {
		t.Errorf("pool file:\n%s", b)
	}
	// The master forks pm.start_servers workers at start, one by one:
	// wait a moment for the last of them.
	old := p.Workers()
	for deadline := time.Now().Add(5 * time.Second); len(old) < 2 && time.Now().Before(deadline); old = p.Workers() {
		time.Sleep(20 * time.Millisecond)
	}
	if len(old) != 2 {
		t.Errorf("dynamic pool started %d workers, want pm.start_servers 2", len(old))
	}

	b, _ := os.ReadFile(p.PoolPath())
	edited := strings.Replace(string(b), "pm = dynamic", "pm = static", 1)
	edited = strings.Replace(edited, "pm.max_children = 4", "pm.max_children = 3", 1)
	if err := os.WriteFile(p.PoolPath(), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	master := p.PID()
	if err := p.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	now := p.Workers()
	if p.PID() != master || len(now) != 3 {
		t.Errorf("after the reload: master %d (was %d), %d workers, want 3", p.PID(), master, len(now))
	}
	for _, w := range now {
		if slices.Contains(old, w) {
			t.Errorf("worker %d survived the reload", w)
		}
	}
	resp, _ = p.Request(ctx, "/status", "json")
	if !strings.Contains(string(resp.Body), `"process manager":"static"`) {
		t.Errorf("status after the reload: %s", resp.Body)
	}

	if err := os.WriteFile(p.PoolPath(), []byte(edited+"pm.max_children = many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Test(ctx); err == nil {
		t.Error("a bad pool passed php-fpm -t")
	}
	if err := p.Reload(ctx); err == nil {
		t.Error("a bad pool was reloaded")
	}
	if err := os.WriteFile(p.PoolPath(), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Request(ctx, "/ping", ""); err != nil {
		t.Errorf("the server stopped after a refused reload: %v", err)
	}
}

// TestPHPFPMExtensions: the master runs without php.ini, so an extension
// is loaded only when asked for; one that cannot be loaded stops the start
// with its name (php-fpm itself only warns and starts without it).
func TestPHPFPMExtensions(t *testing.T) {
	ctx := context.Background()
	script := map[string]string{"ext.php": `<?php echo extension_loaded("mysqli") ? "mysqli" : "none", " ", class_exists("mysqli") ? "class" : "noclass";`}
	cases := []struct {
		name    string
		exts    []string
		want    string
		wantErr string
	}{
		{name: "none asked", want: "none noclass"},
		{name: "mysqlnd and mysqli", exts: []string{"mysqlnd", "mysqli"}, want: "mysqli class"},
		{name: "missing", exts: []string{"nosuchext"}, wantErr: "extension nosuchext is not loaded"},
		{name: "not a name", exts: []string{"mysqli -d x=1"}, wantErr: "a name such as mysqli"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := StartPHPFPM(ctx, PHPFPMOptions{Extensions: c.exts, Scripts: script})
			if c.wantErr != "" {
				if err == nil {
					p.Stop()
					t.Fatalf("started, want an error with %q", c.wantErr)
				}
				if !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			resp, err := p.Request(ctx, "ext.php", "")
			if err != nil || string(resp.Body) != c.want {
				t.Fatalf("ext.php: %q %v, want %q", resp.Body, err, c.want)
			}
			if tc := strings.Join(p.TestCommand(), " "); len(c.exts) > 0 && !strings.Contains(tc, "-d extension=mysqli") {
				t.Errorf("the test command %q leaves the extension out", tc)
			}
		})
	}
}
