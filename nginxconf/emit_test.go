package nginxconf_test

// An external test package: collect reads nginx configurations with
// accesslog, which reads them with nginxconf, so a test of package
// nginxconf itself cannot import collect.

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/nginxconf"
)

// TestEmitApplyNginxT is the whole path: collect a configuration, audit
// it, take the nginx changes of its change set, apply them to the configuration, and nginx -t the
// result; applying them again changes nothing.
func TestEmitApplyNginxT(t *testing.T) {
	bin := nginxconf.NginxBinary(t)
	for _, name := range []string{"debian", "isucon", "keepalive"} {
		t.Run(name, func(t *testing.T) {
			dir := nginxconf.CopyConf(t, name)
			conf := filepath.Join(dir, "nginx.conf")
			snap := &collect.Snapshot{Host: "web1", Taken: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
			// A full accept queue on port 80, so the listen backlog rule
			// speaks too.
			snap.Linux = &collect.Linux{
				Sysctls: map[string]string{"net.core.somaxconn": "65535"},
				TCP:     collect.TCP{Listen: []collect.ListenSocket{{Address: "0.0.0.0", Port: 80, AcceptQueue: 60000}}},
			}
			if err := collect.NewNginx(conf).Collect(context.Background(), snap); err != nil {
				t.Fatal(err)
			}
			res := advise.Audit(snap, advise.Options{})
			var edits []nginxconf.Edit
			for _, ch := range res.ChangeSet().Of(changeset.Nginx) {
				edits = append(edits, nginxconf.Edit{Context: ch.Target, Name: ch.Name, Args: ch.To})
			}
			if len(edits) == 0 {
				t.Fatal("no nginx change")
			}
			contexts := map[string]bool{}
			for _, e := range edits {
				contexts[e.Context] = true
			}
			t.Logf("%d edits in %d contexts", len(edits), len(contexts))
			c, err := nginxconf.Load(conf)
			if err != nil {
				t.Fatal(err)
			}
			out, err := c.Apply(edits)
			if err != nil {
				t.Fatalf("%v\n%v", err, edits)
			}
			if len(out) == 0 {
				t.Fatal("the edits changed nothing")
			}
			for p, b := range out {
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if msg, ok := nginxconf.NginxT(t, bin, dir); !ok {
				t.Fatalf("nginx -t fails on the result:\n%s\nedits: %v", msg, edits)
			}
			again, err := nginxconf.Load(conf)
			if err != nil {
				t.Fatal(err)
			}
			if twice, err := again.Apply(edits); err != nil || len(twice) != 0 {
				t.Errorf("applying the edits again: %d files changed, %v", len(twice), err)
			}
		})
	}
}
