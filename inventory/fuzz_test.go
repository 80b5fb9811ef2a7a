package inventory

import (
	"strings"
	"testing"
)

// FuzzParse: any input gives an inventory or an error, never a panic, and
// an inventory's hosts are whole (an address, a role, a valid port).
func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("[web]\nw[01:10] ansible_port=22\n[web:vars]\na=b\n"))
	f.Add([]byte("[a:children]\nb\n[b:children]\na\n"))
	f.Add([]byte("x:22 'a=b c'\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		inv, err := Parse("fuzz", src)
		if err != nil {
			if inv != nil {
				t.Fatal("an inventory and an error")
			}
			return
		}
		if len(inv.Hosts) > MaxHosts {
			t.Fatalf("%d hosts", len(inv.Hosts))
		}
		for _, h := range inv.Hosts {
			if h.Address == "" || h.Role == "" || h.Port < 0 || h.Port > 65535 || strings.ContainsAny(h.Name, " \t\n") {
				t.Fatalf("bad host %+v", h)
			}
		}
	})
}
