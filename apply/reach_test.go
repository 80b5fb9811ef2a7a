package apply

import (
	"context"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/mysqlvar"
)

// TestCommandFlag: a command line a person gives takes the default when
// empty, is no command for "none", and an unreadable one is an error
// naming its flag.
func TestCommandFlag(t *testing.T) {
	for _, c := range []struct {
		name, value string
		def         []string
		wantNil     bool
		wantErr     string
	}{
		{name: "default", value: "", def: []string{"true"}},
		{name: "none", value: "none", def: []string{"true"}, wantNil: true},
		{name: "given", value: "false", def: []string{"true"}, wantErr: "exit status 1"},
		{name: "no default", value: "", wantNil: true},
		{name: "unclosed quote", value: `echo "x`, wantErr: "--probe-flag: "},
		{name: "blank", value: "   ", wantErr: "--probe-flag: empty command"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := CommandFlag("probe-flag", c.value, c.def, false)
			if err == nil && f != nil {
				err = f(context.Background())
			}
			switch {
			case c.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one holding %q", err, c.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case (f == nil) != c.wantNil:
				t.Fatalf("command %v, want nil: %v", f != nil, c.wantNil)
			}
		})
	}
}

// TestReachServices: without a server the commands are built from the
// flags' defaults and PHP-FPM's reload is named after its binary's unit.
func TestReachServices(t *testing.T) {
	r := Reach{NginxConf: "/etc/nginx/nginx.conf", NginxBin: "nginx", PHPFPMConf: "/etc/php/8.2/fpm/php-fpm.conf", PHPFPMBin: "/usr/sbin/php-fpm8.2", HostWide: true}
	sv, err := r.Services(context.Background(), "", nil, mysqlvar.Server{}, true, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if sv.DB != nil || sv.MySQLRestart != nil || !sv.Nginx || sv.NginxTest == nil || sv.NginxReload == nil || !sv.HostWide {
		t.Errorf("services %+v", sv)
	}
	if want := "/usr/sbin/php-fpm8.2 -t -y /etc/php/8.2/fpm/php-fpm.conf && systemctl reload php8.2-fpm"; sv.PHPFPMReloadHint != want {
		t.Errorf("PHP-FPM hint %q, want %q", sv.PHPFPMReloadHint, want)
	}
	r.NginxReload = `"unclosed`
	if _, err := r.Services(context.Background(), "", nil, mysqlvar.Server{}, true, func(string) {}); err == nil || !strings.HasPrefix(err.Error(), "--nginx-reload: ") {
		t.Errorf("a bad --nginx-reload: %v", err)
	}
}
