package inventory

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse: any input gives an inventory or an error, never a panic, and
// an inventory's hosts are whole (an address, a role, a valid port); what
// the expansion makes stays within the bounds (MaxHosts, MaxHostEntries,
// a host name's length) and the memory Parse allocates within a multiple
// of the input and the hosts it returns.
func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("[web]\nw[01:10] ansible_port=22\n[web:vars]\na=b\n"))
	f.Add([]byte("[a:children]\nb\n[b:children]\na\n"))
	f.Add([]byte("x:22 'a=b c'\n"))
	f.Add([]byte("[web]\nweb[0:9223372036854775807]\n"))
	f.Add([]byte("[web]\nw[9223372036854775806:9223372036854775807]\nz[a:Z:3]\n"))
	f.Add([]byte("[web]\nw[1:300]x[a:c]\ny[1:99999]\n[all:vars]\na=1\nb=2\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		inv, err := Parse("fuzz", src)
		runtime.ReadMemStats(&after)
		if err != nil {
			if inv != nil {
				t.Fatal("an inventory and an error")
			}
			return
		}
		if len(inv.Hosts) > MaxHosts {
			t.Fatalf("%d hosts", len(inv.Hosts))
		}
		entries := 0
		for _, h := range inv.Hosts {
			if h.Address == "" || h.Role == "" || h.Port < 0 || h.Port > 65535 || strings.ContainsAny(h.Name, " \t\n") || len(h.Name) > maxName {
				t.Fatalf("bad host %+v", h)
			}
			entries += len(h.Vars) + len(h.Groups)
		}
		if entries > MaxHostEntries {
			t.Fatalf("%d variables and groups", entries)
		}
		// Generous: a host with its maps is well under 4 KiB.
		if alloc, bound := after.TotalAlloc-before.TotalAlloc, uint64(4<<20+64*len(src)+4096*len(inv.Hosts)+512*entries); alloc > bound {
			t.Fatalf("Parse allocated %d bytes for %d input bytes, %d hosts, %d entries", alloc, len(src), len(inv.Hosts), entries)
		}
	})
}

// FuzzExpand: a pattern's names are those of Ansible's own expansion
// (expandRef, one range at a time), in its order, and never more than the
// limit; a pattern that would make more is refused before it makes any.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"w[1:3]", "w[08:10].x", "db-[a:c]", "n[0:6:3]", "r[1:2]c[a:b]", "z[x:B]",
		"w[:2]", "w[18446744073709551614:18446744073709551615]", "w[a:z:9223372036854775807]", "a[0:99999]b[0:99999]", "w[01:100]", "w[]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		const limit = 1000
		got, err := expand(pattern, limit)
		if len(got) > limit {
			t.Fatalf("%d names, limit %d", len(got), limit)
		}
		want, ok := expandRef(pattern, limit)
		if err != nil {
			if ok {
				t.Fatalf("%q: %v; Ansible expands it to %d names", pattern, err, len(want))
			}
			return
		}
		if !ok {
			t.Fatalf("%q expanded to %d names; Ansible's expansion refuses it or has more than %d", pattern, len(got), limit)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%q: %q, want %q", pattern, got, want)
		}
		for _, n := range got {
			if len(n) > maxName {
				t.Fatalf("%q: a name of %d bytes", pattern, len(n))
			}
		}
	})
}

// expandRef is ansible.inventory's expand_hostname_range written out for
// small expansions: the first range, then the rest of each name again. It
// says false for what Ansible refuses, what this package refuses on
// purpose (negative bounds, names longer than a host name) and for more
// than limit names.
func expandRef(line string, limit int) ([]string, bool) {
	if !strings.Contains(line, "[") {
		if strings.Contains(line, "]") {
			return nil, false
		}
		return []string{line}, len(line) <= maxName
	}
	i := strings.IndexByte(line, '[')
	j := strings.IndexByte(line, ']')
	if j < i {
		return nil, false
	}
	head, nrange, tail := line[:i], line[i+1:j], line[j+1:]
	bounds := strings.Split(nrange, ":")
	if len(bounds) != 2 && len(bounds) != 3 {
		return nil, false
	}
	beg, end, step := bounds[0], bounds[1], uint64(1)
	if len(bounds) == 3 {
		s, err := strconv.ParseUint(bounds[2], 10, 64)
		if err != nil || s == 0 {
			return nil, false
		}
		step = s
	}
	if beg == "" {
		beg = "0"
	}
	if end == "" {
		return nil, false
	}
	fill := func(s string) string { return s }
	if beg[0] == '0' && len(beg) > 1 {
		if len(beg) != len(end) {
			return nil, false
		}
		fill = func(s string) string { return strings.Repeat("0", max(len(beg)-len(s), 0)) + s }
	}
	var seq []string
	a, b := strings.IndexByte(letters, beg[0]), strings.IndexByte(letters, end[0])
	if len(beg) == 1 && len(end) == 1 && a >= 0 && b >= 0 {
		if a > b {
			return nil, false
		}
		for k := uint64(a); ; k += step {
			seq = append(seq, letters[k:k+1])
			if uint64(b)-k < step {
				break
			}
		}
	} else {
		if len(beg) > maxName || len(end) > maxName {
			return nil, false
		}
		x, err1 := strconv.ParseUint(beg, 10, 64)
		y, err2 := strconv.ParseUint(end, 10, 64)
		if err1 != nil || err2 != nil || x > y || (y-x)/step >= uint64(limit) {
			return nil, false
		}
		for k := uint64(0); k <= (y-x)/step; k++ {
			seq = append(seq, fill(strconv.FormatUint(x+k*step, 10)))
		}
	}
	var out []string
	for _, s := range seq {
		rest, ok := expandRef(head+s+tail, limit)
		if !ok || len(out)+len(rest) > limit {
			return nil, false
		}
		out = append(out, rest...)
	}
	return out, true
}
