package appcpu

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// procRoot is /proc (tests point it elsewhere).
var procRoot = "/proc"

// maxProcs bounds the processes a search looks at.
const maxProcs = 100_000

// ListenerPIDs are the processes holding the listening socket of addr
// ("host:port", ":port", or a unix socket's path), from /proc/net/tcp,
// tcp6 or unix and each process's /proc/PID/fd.
func ListenerPIDs(addr string) ([]int, error) {
	inodes := map[string]bool{}
	if strings.HasPrefix(addr, "/") || strings.HasPrefix(addr, "unix:") {
		path := strings.TrimPrefix(addr, "unix:")
		if err := unixInodes(path, inodes); err != nil {
			return nil, err
		}
	} else {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("the app's address %q: want host:port or a socket's path", addr)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p <= 0 || p > 65535 {
			return nil, fmt.Errorf("the app's address %q: bad port", addr)
		}
		for _, f := range []string{"net/tcp", "net/tcp6"} {
			tcpInodes(filepath.Join(procRoot, f), p, inodes)
		}
	}
	if len(inodes) == 0 {
		return nil, fmt.Errorf("no process on this host listens on %s", addr)
	}
	pids := socketOwners(inodes)
	if len(pids) == 0 {
		return nil, fmt.Errorf("the socket listening on %s belongs to no process this user can see (run as root, or give --app-pid)", addr)
	}
	return pids, nil
}

// tcpInodes adds the inodes of the sockets listening on port.
func tcpInodes(path string, port int, inodes map[string]bool) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 4096)
	want := fmt.Sprintf(":%04X", port)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
		if len(fs) < 10 || fs[3] != "0A" {
			continue
		}
		if strings.HasSuffix(fs[1], want) {
			inodes[fs[9]] = true
		}
	}
}

// unixInodes adds the inodes of the listening unix sockets bound at path.
func unixInodes(path string, inodes map[string]bool) error {
	f, err := os.Open(filepath.Join(procRoot, "net/unix"))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 8192), 8192)
	for sc.Scan() {
		// Num RefCount Protocol Flags Type St Inode Path
		fs := strings.Fields(sc.Text())
		if len(fs) >= 8 && fs[7] == path && fs[3] == "00010000" {
			inodes[fs[6]] = true
		}
	}
	return nil
}

// socketOwners are the processes with one of the socket inodes open.
func socketOwners(inodes map[string]bool) []int {
	ents, _ := os.ReadDir(procRoot)
	var out []int
	for i, e := range ents {
		if i >= maxProcs {
			break
		}
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join(procRoot, e.Name(), "fd"))
		for _, fd := range fds {
			l, err := os.Readlink(filepath.Join(procRoot, e.Name(), "fd", fd.Name()))
			if err != nil {
				continue
			}
			if in, ok := strings.CutPrefix(l, "socket:["); ok && inodes[strings.TrimSuffix(in, "]")] {
				out = append(out, pid)
				break
			}
		}
	}
	sort.Ints(out)
	return out
}

// WithChildren are pids and their descendants (php-fpm's master and its
// workers), from each process's parent in /proc/PID/stat.
func WithChildren(pids []int) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir(procRoot)
	for i, e := range ents {
		if i >= maxProcs {
			break
		}
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := ppid(pid); ok {
			parent[pid] = pp
		}
	}
	in := map[int]bool{}
	for _, p := range pids {
		in[p] = true
	}
	for changed := true; changed; {
		changed = false
		for pid, pp := range parent {
			if !in[pid] && in[pp] {
				in[pid], changed = true, true
			}
		}
	}
	out := make([]int, 0, len(in))
	for p := range in {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// ppid reads a process's parent from /proc/PID/stat (after the command's
// closing parenthesis, which may itself hold spaces and parentheses).
func ppid(pid int) (int, bool) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	fs := strings.Fields(s[i+1:])
	if len(fs) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(fs[1])
	return pp, err == nil
}

// Comm is a process's command name ("" when gone).
func Comm(pid int) string {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
