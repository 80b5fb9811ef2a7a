package mysqlconf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/stacktune/stacktune/input"
)

// Process is the running server's process on this host, as /proc shows
// it.
type Process struct {
	PID int `json:"pid"`
	// Exe is its binary (/proc/PID/exe); when the file was replaced
	// since the server started, the binary now at that path.
	Exe string `json:"exe"`
	// Args is its command line (/proc/PID/cmdline), Args[0] included.
	Args []string `json:"args"`
	// FoundBy says how it was found: "its pid file /run/mysqld/mysqld.pid"
	// or "the process listening on /run/mysqld/mysqld.sock".
	FoundBy string `json:"found_by"`
	// Defaults are the leading options that say which option files it
	// read (--no-defaults, --defaults-file=, --defaults-extra-file=,
	// --defaults-group-suffix=), as given; they mean that only as the
	// first arguments.
	Defaults     []string `json:"defaults,omitempty"`
	NoDefaults   bool     `json:"no_defaults,omitempty"`
	DefaultsFile string   `json:"defaults_file,omitempty"`
	ExtraFile    string   `json:"defaults_extra_file,omitempty"`
	GroupSuffix  string   `json:"defaults_group_suffix,omitempty"`
	// Options are the rest of its command line's --key=value options,
	// read after every option file.
	Options []string `json:"options,omitempty"`
	// Home is the server's home directory, where its "~/.my.cnf" is
	// ("" when not known).
	Home string `json:"home,omitempty"`
	// Dir is its working directory, against which relative paths of its
	// command line are read.
	Dir string `json:"dir,omitempty"`
}

// defaultsOptions are the options a server takes as its first
// arguments to say which option files it reads (my_load_defaults stops
// at the first other one).
var defaultsOptions = []string{"--no-defaults", "--defaults-file=", "--defaults-extra-file=", "--defaults-group-suffix=", "--login-path=", "--print-defaults"}

// parseCommandLine splits a server's command line into its leading
// defaults options and the rest.
func (p *Process) parseCommandLine() {
	i := 1
	for ; i < len(p.Args); i++ {
		a := p.Args[i]
		known := false
		for _, o := range defaultsOptions {
			if a == o || strings.HasSuffix(o, "=") && strings.HasPrefix(a, o) {
				known = true
				break
			}
		}
		if !known {
			break
		}
		switch {
		case a == "--no-defaults":
			p.NoDefaults = true
		case strings.HasPrefix(a, "--defaults-file="):
			p.DefaultsFile = p.abs(strings.TrimPrefix(a, "--defaults-file="))
		case strings.HasPrefix(a, "--defaults-extra-file="):
			p.ExtraFile = p.abs(strings.TrimPrefix(a, "--defaults-extra-file="))
		case strings.HasPrefix(a, "--defaults-group-suffix="):
			p.GroupSuffix = strings.TrimPrefix(a, "--defaults-group-suffix=")
		}
		if a != "--print-defaults" {
			p.Defaults = append(p.Defaults, a)
		}
	}
	for _, a := range p.Args[i:] {
		if strings.HasPrefix(a, "--") && len(a) > 2 {
			p.Options = append(p.Options, a)
		}
	}
}

// abs reads a path of the command line against the server's working
// directory.
func (p *Process) abs(path string) string {
	if path == "" || filepath.IsAbs(path) || p.Dir == "" {
		return path
	}
	return filepath.Join(p.Dir, path)
}

// procFS reads the parts of /proc (or a tree laid out like it) that
// finding a server needs.
type procFS struct{ root string }

func (f procFS) path(parts ...string) string {
	return filepath.Join(append([]string{f.root}, parts...)...)
}

// Bounds on what is read from /proc: a busy host's socket tables and a
// process's descriptors are large but not unbounded.
const (
	maxProcTable   = 64 << 20 // bytes of /proc/net/{unix,tcp,tcp6}
	maxCmdline     = 1 << 20
	maxEnviron     = 1 << 20
	maxProcesses   = 1 << 16
	maxDescriptors = 1 << 20 // in total over a scan
)

// listeners are the inodes of the sockets a server listens on.
type listeners map[uint64]string // inode -> "socket /x" / "port 3306"

// listening finds the listening sockets of the unix socket path and TCP
// port in this network namespace's tables.
func (f procFS) listening(socket string, port int) (listeners, error) {
	ls := listeners{}
	var errs []error
	if socket != "" {
		if err := f.scanTable("net/unix", func(fields []string, line string) {
			// Num RefCount Protocol Flags Type St Inode Path; flags
			// 00010000 is __SO_ACCEPTCON: listening.
			if len(fields) < 8 || fields[3] != "00010000" {
				return
			}
			path := strings.Join(fields[7:], " ")
			if path == socket || filepath.Clean(path) == filepath.Clean(socket) {
				if ino, err := strconv.ParseUint(fields[6], 10, 64); err == nil {
					ls[ino] = "socket " + socket
				}
			}
		}); err != nil {
			errs = append(errs, err)
		}
	}
	if port > 0 {
		for _, table := range []string{"net/tcp", "net/tcp6"} {
			if err := f.scanTable(table, func(fields []string, line string) {
				// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
				if len(fields) < 10 || fields[3] != "0A" { // LISTEN
					return
				}
				_, hexPort, ok := strings.Cut(fields[1], ":")
				if !ok {
					return
				}
				if p, err := strconv.ParseUint(hexPort, 16, 16); err != nil || int(p) != port {
					return
				}
				if ino, err := strconv.ParseUint(fields[9], 10, 64); err == nil && ino != 0 {
					ls[ino] = "port " + strconv.Itoa(port)
				}
			}); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return ls, errors.Join(errs...)
}

// scanTable calls fn on each line but the header of a /proc table,
// bounded in bytes.
func (f procFS) scanTable(name string, fn func(fields []string, line string)) error {
	fh, err := os.Open(f.path(name))
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(io.LimitReader(fh, maxProcTable))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		line := sc.Text()
		fn(strings.Fields(line), line)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", f.path(name), err)
	}
	return nil
}

// owns reports whether process pid holds one of the sockets ls, and
// what it listens on ("socket /x/mysqld.sock and port 3306"); budget
// bounds the descriptors read. An error means its descriptors could not
// be read (another user's process, without root).
func (f procFS) owns(pid int, ls listeners, budget *int) (string, error) {
	dir := f.path(strconv.Itoa(pid), "fd")
	d, err := os.Open(dir)
	if err != nil {
		return "", err
	}
	defer d.Close()
	held := map[string]bool{}
	for *budget > 0 {
		names, err := d.Readdirnames(256)
		for _, n := range names {
			*budget--
			target, err := os.Readlink(filepath.Join(dir, n))
			if err != nil || !strings.HasPrefix(target, "socket:[") {
				continue
			}
			ino, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]"), 10, 64)
			if err != nil {
				continue
			}
			if what, ok := ls[ino]; ok {
				held[what] = true
			}
		}
		if err != nil {
			break // io.EOF, or the process went away
		}
	}
	var out []string
	for what := range held {
		out = append(out, what)
	}
	// "socket ..." before "port ...".
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return strings.Join(out, " and "), nil
}

// scan looks for the process holding one of the sockets ls among every
// process; skipped counts those whose descriptors could not be read.
func (f procFS) scan(ls listeners) (pid int, what string, skipped int, err error) {
	d, err := os.Open(f.root)
	if err != nil {
		return 0, "", 0, err
	}
	defer d.Close()
	budget := maxDescriptors
	seen := 0
	for seen < maxProcesses && budget > 0 {
		names, rerr := d.Readdirnames(512)
		for _, n := range names {
			p, err := strconv.Atoi(n)
			if err != nil || p <= 0 {
				continue
			}
			seen++
			w, err := f.owns(p, ls, &budget)
			if err != nil {
				if errors.Is(err, os.ErrPermission) {
					skipped++
				}
				continue
			}
			if w != "" {
				return p, w, skipped, nil
			}
		}
		if rerr != nil {
			break
		}
	}
	return 0, "", skipped, nil
}

// readPIDFile reads a server's pid file: one decimal number.
func readPIDFile(path string) (int, error) {
	data, err := input.ReadFile(path, 64)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(data))
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid file %s holds %q, not a process id", path, s)
	}
	return pid, nil
}

// process reads what /proc says of pid: binary, command line, home and
// working directory.
func (f procFS) process(pid int) (*Process, error) {
	p := &Process{PID: pid}
	raw, err := readBounded(f.path(strconv.Itoa(pid), "cmdline"), maxCmdline)
	if err != nil {
		return nil, fmt.Errorf("pid %d: %w", pid, err)
	}
	for _, a := range strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00") {
		p.Args = append(p.Args, a)
	}
	if len(p.Args) == 0 || p.Args[0] == "" {
		return nil, fmt.Errorf("pid %d: empty command line (a kernel thread, or a process that has ended)", pid)
	}
	p.Dir, _ = os.Readlink(f.path(strconv.Itoa(pid), "cwd"))
	exe, err := os.Readlink(f.path(strconv.Itoa(pid), "exe"))
	switch {
	case err == nil:
		p.Exe = strings.TrimSuffix(exe, " (deleted)")
	case filepath.IsAbs(p.Args[0]):
		p.Exe = p.Args[0] // /proc/PID/exe is the owner's or root's to read
	default:
		return nil, fmt.Errorf("pid %d: its binary: %w (and its command line names %q, no path)", pid, err, p.Args[0])
	}
	p.parseCommandLine()
	p.Home = f.home(pid)
	return p, nil
}

// rootOf is the root directory of pid ("/" unless it runs in a container
// or a chroot).
func (f procFS) rootOf(pid int) string {
	r, err := os.Readlink(f.path(strconv.Itoa(pid), "root"))
	if err != nil {
		return ""
	}
	return r
}

// home is the server's home: HOME of its environment, else its user's
// home directory ("" when neither can be read).
func (f procFS) home(pid int) string {
	if env, err := readBounded(f.path(strconv.Itoa(pid), "environ"), maxEnviron); err == nil {
		for _, kv := range strings.Split(string(env), "\x00") {
			if h, ok := strings.CutPrefix(kv, "HOME="); ok && h != "" {
				return h
			}
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(f.path(strconv.Itoa(pid)), &st); err == nil {
		if u, err := user.LookupId(strconv.Itoa(int(st.Uid))); err == nil {
			return u.HomeDir
		}
	}
	return ""
}

// readBounded reads a /proc file (whose size stat does not give) up to
// limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: longer than %d bytes", path, limit)
	}
	return data, nil
}
