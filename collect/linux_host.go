package collect

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// More of the host that rules on the database's storage and memory need:
// the NUMA nodes (/sys/devices/system/node), the mounts (/proc/self/
// mountinfo: which file system holds the datadir and the redo log, with
// what options) and the allocator a server process loaded
// (/proc/PID/maps: jemalloc, tcmalloc).

// Mount is one mounted file system.
type Mount struct {
	Point  string `json:"point"`
	Device string `json:"device"` // major:minor
	FSType string `json:"fstype"`
	Source string `json:"source"`
	// Options are the mount's and the super block's, comma-separated
	// ("rw,relatime").
	Options string `json:"options"`
}

// maxMounts bounds Linux.Mounts.
const maxMounts = 1000

// readMounts parses root/self/mountinfo:
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
func readMounts(root string) ([]Mount, error) {
	f, err := os.Open(filepath.Join(root, "self", "mountinfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() && len(out) < maxMounts {
		if m, ok := parseMountinfo(sc.Text()); ok {
			out = append(out, m)
		}
	}
	return out, sc.Err()
}

func parseMountinfo(line string) (Mount, bool) {
	f := strings.Fields(line)
	sep := -1
	for i, x := range f {
		if x == "-" {
			sep = i
			break
		}
	}
	if sep < 6 || sep+2 >= len(f) {
		return Mount{}, false
	}
	opts := f[5]
	if sep+3 < len(f) {
		opts += "," + f[sep+3]
	}
	return Mount{Point: unescapeMount(f[4]), Device: f[2], FSType: f[sep+1], Source: unescapeMount(f[sep+2]), Options: opts}, true
}

// unescapeMount decodes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s)+0 && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// MountOf returns the mount that holds path (the longest mount point that
// is a prefix of it), nil when none does.
func (l *Linux) MountOf(path string) *Mount {
	var best *Mount
	for i := range l.Mounts {
		m := &l.Mounts[i]
		p := strings.TrimSuffix(m.Point, "/")
		if path == m.Point || path == p || strings.HasPrefix(path, p+"/") || m.Point == "/" {
			if best == nil || len(m.Point) > len(best.Point) {
				best = m
			}
		}
	}
	return best
}

// countNUMANodes counts sysRoot/devices/system/node/nodeN (0 when the
// kernel says nothing: no NUMA).
func countNUMANodes(sysRoot string) int {
	ents, err := os.ReadDir(filepath.Join(sysRoot, "devices", "system", "node"))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if rest, ok := strings.CutPrefix(e.Name(), "node"); ok {
			if _, err := strconv.Atoi(rest); err == nil {
				n++
			}
		}
	}
	return n
}

// allocators are the malloc libraries looked for in a process's maps.
var allocators = []string{"jemalloc", "tcmalloc", "mimalloc"}

// maxMapsBytes bounds the /proc/PID/maps read.
const maxMapsBytes = 4 << 20

// processAllocator names the malloc library the process mapped ("" for
// the C library's own).
func processAllocator(dir string) string {
	f, err := os.Open(filepath.Join(dir, "maps"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	read := 0
	for sc.Scan() && read < maxMapsBytes {
		line := sc.Text()
		read += len(line)
		for _, a := range allocators {
			if strings.Contains(line, "lib"+a) {
				return a
			}
		}
	}
	return ""
}
