package nginxconf

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseBuild(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      Build
	}{
		{"debian", "nginx version: nginx/1.22.1\nbuilt with OpenSSL 3\nconfigure arguments: --with-cc-opt='-g -O2' --prefix=/usr/share/nginx --http-client-body-temp-path=/var/lib/nginx/body\n",
			Build{"1.22.1", []string{"--with-cc-opt=-g -O2", "--prefix=/usr/share/nginx", "--http-client-body-temp-path=/var/lib/nginx/body"}}},
		{"double quotes and tabs", "nginx version: openresty/1.21.4.1\r\nconfigure arguments:\t--a=\"x y\"\t--b\r\n", Build{"1.21.4.1", []string{"--a=x y", "--b"}}},
		{"unterminated quote", "configure arguments: --a='x y", Build{"", []string{"--a=x y"}}},
		{"not nginx -V", "bash: nginx: command not found\n", Build{}},
		{"empty", "", Build{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseBuild(tc.out)
			if got.Version != tc.want.Version || !slices.Equal(got.ConfigureArgs, tc.want.ConfigureArgs) {
				t.Errorf("ParseBuild = %q %q, want %q %q", got.Version, got.ConfigureArgs, tc.want.Version, tc.want.ConfigureArgs)
			}
		})
	}
	b := Build{ConfigureArgs: []string{"--conf-path=/etc/nginx/nginx.conf", "--conf-path-other=x"}}
	if got := b.Arg("--conf-path", "def"); got != "/etc/nginx/nginx.conf" {
		t.Errorf("Arg = %q", got)
	}
	if got := b.Arg("--http-log-path", "logs/access.log"); got != "logs/access.log" {
		t.Errorf("Arg of an absent argument = %q, want the default", got)
	}
}

func TestBuildAtLeast(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{{"1.22.1", true}, {"1.19.10", true}, {"1.19.9", false}, {"1.18", false}, {"2.0.0", true}, {"", true}, {"1.x", true}, {"1.19.10.2", true}} {
		if got := (Build{Version: tc.v}).AtLeast(1, 19, 10); got != tc.want {
			t.Errorf("%q at least 1.19.10 = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// TestDefaults: the defaults that changed between versions follow the
// build; every level's block is found where nginx reads it.
func TestDefaults(t *testing.T) {
	value := func(b Build, name string) string {
		for _, d := range Defaults(b) {
			if d.Name == name {
				return d.Value
			}
		}
		t.Fatalf("no default for %s", name)
		return ""
	}
	for _, tc := range []struct {
		name, version, setting, want string
	}{
		{"keepalive_requests today", "1.22.1", "keepalive_requests", "1000"},
		{"keepalive_requests before 1.19.10", "1.18.0", "keepalive_requests", "100"},
		{"sendfile_max_chunk before 1.21.4", "1.20.2", "sendfile_max_chunk", "0"},
		{"sendfile_max_chunk unknown version", "", "sendfile_max_chunk", "2m"},
		{"accept_mutex before 1.11.3", "1.10.3", "accept_mutex", "on"},
		{"accept_mutex today", "1.11.3", "accept_mutex", "off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := value(Build{Version: tc.version}, tc.setting); got != tc.want {
				t.Errorf("%s of nginx %q = %q, want %q", tc.setting, tc.version, got, tc.want)
			}
		})
	}
	if got := value(Build{ConfigureArgs: []string{"--http-client-body-temp-path=/var/lib/nginx/body"}}, "client_body_temp_path"); got != "/var/lib/nginx/body" {
		t.Errorf("client_body_temp_path of a Debian build = %q", got)
	}
	seen := map[string]bool{}
	for _, d := range Defaults(Build{}) {
		if seen[d.Name] {
			t.Errorf("%s listed twice", d.Name)
		}
		seen[d.Name] = true
	}

	c, err := Parse("nginx.conf", []byte("events { a 1; } events { a 2; } http { b 1; } http { b 2; }"), false)
	if err != nil {
		t.Fatal(err)
	}
	for l, want := range map[Level]string{LevelMain: "", LevelEvents: "2", LevelHTTP: "1"} {
		blk := c.Block(l)
		if blk == nil {
			t.Fatalf("no %s block", l)
		}
		if l == LevelMain {
			if blk != c.Main() {
				t.Errorf("main level is not the main context")
			}
			continue
		}
		if args := blk.Children()[0].Args(); args[0] != want {
			t.Errorf("%s block: the one with %s, want %s", l, args[0], want)
		}
	}
	c, _ = Parse("nginx.conf", []byte("worker_processes 2;"), false)
	if c.Block(LevelHTTP) != nil || c.Block(LevelEvents) != nil {
		t.Errorf("a configuration without events and http has their blocks")
	}
}

func TestUpstreams(t *testing.T) {
	conf := `http {
	upstream app { server 127.0.0.1:8080 weight=2; server unix:/run/app.sock; keepalive 8; keepalive 32; }
	upstream { server x; }
	upstream empty { }
	upstream notblock;
}
stream { upstream db { server 127.0.0.1:3306; } }`
	c, err := Parse("nginx.conf", []byte(conf), false)
	if err != nil {
		t.Fatal(err)
	}
	ups := c.Upstreams()
	var got []string
	for _, u := range ups {
		var s []string
		for _, sv := range u.Servers {
			s = append(s, sv.Address+"("+strings.Join(sv.Params, ",")+")"+map[bool]string{true: "unix", false: ""}[sv.Unix])
		}
		got = append(got, fmt.Sprintf("%s:%s:%d", u.Name, strings.Join(s, " "), u.Keepalive))
	}
	want := []string{"app:127.0.0.1:8080(weight=2) unix:/run/app.sock()unix:32", "empty::0"}
	if !slices.Equal(got, want) {
		t.Errorf("Upstreams = %q, want %q", got, want)
	}
	if ups[0].Keepalive != 32 || ups[0].Block.Line() != 2 {
		t.Errorf("app: keepalive %d (want the last, 32), line %d", ups[0].Keepalive, ups[0].Block.Line())
	}
}

func TestMapDefault(t *testing.T) {
	conf := `http {
	map $http_upgrade $connection_upgrade { default upgrade; '' close; }
	map $http_upgrade $only_default { default keep-alive; websocket upgrade; }
	map $http_upgrade $nothing { websocket upgrade; }
}`
	c, err := Parse("nginx.conf", []byte(conf), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ v, want string }{
		{"$connection_upgrade", "close"},
		{"${connection_upgrade}", "close"},
		{"$only_default", "keep-alive"},
		{"$nothing", ""},
		{"$not_a_map", "$not_a_map"},
		{"keep-alive", "keep-alive"},
		{"$a$b", "$a$b"},
		{"", ""},
	} {
		if got := c.MapDefault(tc.v); got != tc.want {
			t.Errorf("MapDefault(%q) = %q, want %q", tc.v, got, tc.want)
		}
	}
	c, _ = Parse("nginx.conf", []byte("events {}"), false)
	if got := c.MapDefault("$connection_upgrade"); got != "$connection_upgrade" {
		t.Errorf("without http: %q", got)
	}
}

func FuzzParseBuild(f *testing.F) {
	f.Add("nginx version: nginx/1.22.1\nconfigure arguments: --with-cc-opt='-g -O2' --prefix=/usr\n")
	f.Add("configure arguments: \"unterminated")
	f.Fuzz(func(t *testing.T, out string) {
		b := ParseBuild(out)
		if len(b.ConfigureArgs) > len(out) {
			t.Fatalf("%d arguments from %d bytes", len(b.ConfigureArgs), len(out))
		}
		b.AtLeast(1, 19, 10)
		b.Arg("--conf-path", "")
	})
}
