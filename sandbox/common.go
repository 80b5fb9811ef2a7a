package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrMissingBinary is wrapped by the error returned when a server binary
// cannot be found. Check it with errors.Is; the error's message names the
// Debian package to install.
var ErrMissingBinary = errors.New("sandbox: server binary not found")

// MissingBinaryError reports a server binary that could not be found and the
// Debian package that provides it. It matches [ErrMissingBinary] with
// errors.Is.
type MissingBinaryError struct {
	// Name is the binary that was looked for: a bare name such as "nginx",
	// or the explicit path given in an options' Binary field.
	Name string
	// Package is the Debian package that ships the binary.
	Package string
	// Err is the underlying lookup error, if any.
	Err error
}

// Error implements error.
func (e *MissingBinaryError) Error() string {
	if strings.ContainsRune(e.Name, '/') {
		return fmt.Sprintf("sandbox: %s not found or not executable: install the Debian package %q", e.Name, e.Package)
	}
	return fmt.Sprintf("sandbox: %s not found in PATH or /usr/sbin: install the Debian package %q", e.Name, e.Package)
}

// Is reports whether target is ErrMissingBinary.
func (e *MissingBinaryError) Is(target error) bool { return target == ErrMissingBinary }

// Unwrap returns the underlying lookup error.
func (e *MissingBinaryError) Unwrap() error { return e.Err }

// extraBinDirs are searched after PATH: Debian installs daemons in /usr/sbin,
// which is not in every user's (or CI runner's) PATH.
var extraBinDirs = []string{"/usr/sbin", "/usr/bin", "/sbin"}

// lookBinary resolves the binary to run. override, when set, is used as is
// (a path, or a name looked up in PATH and extraBinDirs). Otherwise each of
// names is tried in order. The error wraps ErrMissingBinary and names pkg.
func lookBinary(override, pkg string, names ...string) (string, error) {
	if override != "" {
		names = []string{override}
	}
	var firstErr error
	for _, name := range names {
		p, err := exec.LookPath(name)
		if err == nil {
			return p, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if strings.ContainsRune(name, '/') {
			continue
		}
		for _, dir := range extraBinDirs {
			if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
				return p, nil
			}
		}
	}
	return "", &MissingBinaryError{Name: names[0], Package: pkg, Err: firstErr}
}

// maxSocketPath is the longest unix socket path Linux accepts (sun_path is
// 108 bytes including the terminating NUL).
const maxSocketPath = 107

// checkSocketPath returns an error if path is too long for a unix socket.
func checkSocketPath(path string) error {
	if len(path) > maxSocketPath {
		return fmt.Errorf("sandbox: unix socket path %q is %d bytes, longer than the %d allowed: use a shorter Dir", path, len(path), maxSocketPath)
	}
	return nil
}

// tempRoot returns the directory in which server directories are created:
// os.TempDir(), unless that is so long that socket paths inside it could
// exceed the unix socket limit, in which case /tmp.
func tempRoot() string {
	root := os.TempDir()
	// st-<10 digits>/<longest socket name> stays well under the limit.
	if len(root)+len("/st-1234567890/memcached.sock") > maxSocketPath-20 {
		return "/tmp"
	}
	return root
}

// serverDir creates the directory for a server: a fresh temporary one
// (owned, removed by Stop) or the caller's dir (created if needed, kept).
func serverDir(dir string) (path string, owned bool, err error) {
	if dir == "" {
		d, err := os.MkdirTemp(tempRoot(), "st-")
		if err != nil {
			return "", false, fmt.Errorf("sandbox: create temp dir: %w", err)
		}
		return d, true, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false, fmt.Errorf("sandbox: dir %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", false, fmt.Errorf("sandbox: create dir: %w", err)
	}
	return abs, false, nil
}

// freePort returns a loopback TCP port that was free a moment ago. Another
// process may take it before the server binds it; callers retry then.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("sandbox: pick a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("sandbox: pick a free port: %w", err)
	}
	return port, nil
}

// process is a started server process, leader of its own process group.
type process struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has been reaped
	waitErr error         // valid after done is closed
}

// startProcess starts bin with args in its own process group, with
// Pdeathsig=SIGKILL, stdout and stderr appended to consolePath.
func startProcess(bin string, args []string, dir, consolePath string) (*process, error) {
	out, err := os.OpenFile(consolePath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sandbox: open console log: %w", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout = out
	cmd.Stderr = out
	// Setpgid lets Stop signal the whole group (nginx workers included).
	// Pdeathsig kills the server if the thread that started it dies, which
	// in practice means when the starting (test) process dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("sandbox: start %s: %w", bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = out.Close()
		close(p.done)
	}()
	return p, nil
}

// pid returns the process id (also the process group id).
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has already exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig to the process (not its group) while it is running.
func (p *process) signal(sig syscall.Signal) error {
	if p.exited() {
		return fmt.Errorf("sandbox: process %d has exited: %v", p.pid(), p.waitErr)
	}
	if err := syscall.Kill(p.pid(), sig); err != nil {
		return fmt.Errorf("sandbox: signal process %d: %w", p.pid(), err)
	}
	return nil
}

// kill stops the process group: SIGTERM, then SIGKILL after grace, and
// waits until the leader has been reaped. Signals go to the group only
// while the leader is unreaped, so the group id cannot have been reused.
func (p *process) kill(grace time.Duration) {
	pgid := p.pid()
	if p.exited() {
		// The leader died on its own; helpers it left behind (nginx
		// workers) still carry its group id.
		for _, pid := range groupMembers(pgid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
}

// groupMembers lists the processes other than pgid itself whose process
// group is pgid, from /proc.
func groupMembers(pgid int) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		if f := procStat(pid); len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procStat returns the fields of /proc/<pid>/stat after the command name:
// f[0] is the state, f[1] the parent pid, f[2] the process group.
func procStat(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data[i+1:]))
}

// instance holds what every server type shares: its directory, process and
// logs, and the idempotent Stop.
type instance struct {
	name  string // binary name, for messages
	dir   string
	owned bool // dir was created by us and is removed by stop
	grace time.Duration
	proc  *process
	logs  []string // files whose tail explains a failure, most useful first

	beforeStop func() // optional, run once before the process is killed

	stopOnce sync.Once
	stopErr  error
}

// stop kills the process (if any) and removes the owned directory. It is
// idempotent and safe for concurrent use: every call returns once the work
// is done, with the same error.
func (in *instance) stop() error {
	in.stopOnce.Do(func() {
		if in.beforeStop != nil {
			in.beforeStop()
		}
		if in.proc != nil {
			in.proc.kill(in.grace)
		}
		if in.owned {
			if err := os.RemoveAll(in.dir); err != nil {
				in.stopErr = fmt.Errorf("sandbox: remove %s: %w", in.dir, err)
			}
		}
	})
	return in.stopErr
}

// pid returns the server's process id, or 0 if it was never started.
func (in *instance) pid() int {
	if in.proc == nil {
		return 0
	}
	return in.proc.pid()
}

// errAddrInUse marks a start failure caused by the chosen port being taken.
var errAddrInUse = errors.New("address already in use")

// launch runs one start attempt: start the process, wait until ready(ctx)
// succeeds, the process exits, or the context/timeout expires. On failure
// the process is killed and the error carries the tail of the server logs;
// it wraps errAddrInUse when the logs say the port was taken.
func (in *instance) launch(ctx context.Context, timeout time.Duration, bin string, args []string, ready func(context.Context) error) error {
	// Start each attempt with empty logs, so the tail is this attempt's.
	_ = os.Remove(in.consolePath())
	for _, l := range in.logs {
		_ = os.Remove(l)
	}
	return in.relaunch(ctx, timeout, bin, args, ready)
}

// relaunch is launch without emptying the logs first: a restart appends
// to the previous run's logs, whose last lines then show the shutdown
// before the new start.
func (in *instance) relaunch(ctx context.Context, timeout time.Duration, bin string, args []string, ready func(context.Context) error) error {
	p, err := startProcess(bin, args, in.dir, in.consolePath())
	if err != nil {
		return err
	}
	in.proc = p
	err = waitReady(ctx, timeout, p, ready)
	if err == nil {
		return nil
	}
	p.kill(in.grace)
	in.proc = nil
	tail := in.logTail()
	if strings.Contains(tail, "Address already in use") {
		err = fmt.Errorf("%w (%w)", err, errAddrInUse)
	}
	return fmt.Errorf("sandbox: %s did not start: %w%s", in.name, err, tail)
}

// consolePath is the file receiving the server's stdout and stderr.
func (in *instance) consolePath() string { return filepath.Join(in.dir, in.name+".console.log") }

// startWithPortRetry calls attempt with fresh free ports until it succeeds,
// fails for a reason other than the port being taken, or 3 tries are used.
func startWithPortRetry(ctx context.Context, attempt func(port int) error) error {
	return startWithPreferredPort(ctx, 0, attempt)
}

// startWithPreferredPort is startWithPortRetry trying port first (when not
// 0), so that a restarted server keeps its address if it can.
func startWithPreferredPort(ctx context.Context, port int, attempt func(port int) error) error {
	const tries = 3
	var err error
	for i := 0; i < tries; i++ {
		if i > 0 || port == 0 {
			if port, err = freePort(); err != nil {
				return err
			}
		}
		err = attempt(port)
		if err == nil || !errors.Is(err, errAddrInUse) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// waitReady polls ready until it succeeds. It fails early when the process
// exits and late when ctx is done or timeout elapses, reporting the last
// readiness error.
func waitReady(ctx context.Context, timeout time.Duration, p *process, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	delay := 20 * time.Millisecond
	var last error
	for {
		if p.exited() {
			return fmt.Errorf("server exited early: %v", p.waitErr)
		}
		attemptCtx, attemptCancel := context.WithTimeout(ctx, 2*time.Second)
		last = ready(attemptCtx)
		attemptCancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("server exited early: %v (last check: %w)", p.waitErr, last)
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %w (last check: %w)", timeout, ctx.Err(), last)
		case <-time.After(delay):
		}
		if delay < 200*time.Millisecond {
			delay *= 2
		}
	}
}

// logTailLines is how many lines of each log a start error includes.
const logTailLines = 40

// logTail formats the last lines of each non-empty server log, for errors.
func (in *instance) logTail() string {
	var b strings.Builder
	files := append(append([]string(nil), in.logs...), in.consolePath())
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f] {
			continue
		}
		seen[f] = true
		lines := tailFile(f, logTailLines)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n--- last %d lines of %s ---\n%s", len(lines), f, strings.Join(lines, "\n"))
	}
	return b.String()
}

// tailFile returns up to n last lines of the file at path (nil if it is
// missing or empty). Only the last 64 KiB are read.
func tailFile(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const max = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > max {
		if _, err := f.Seek(st.Size()-max, io.SeekStart); err != nil {
			return nil
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	data = bytes.TrimRight(data, "\r\n")
	if len(data) == 0 {
		return nil
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// textExchange dials network/addr, writes req and returns the first line of
// the reply (without CRLF). It is how memcached and Redis are probed.
func textExchange(ctx context.Context, network, addr, req string) (string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := io.WriteString(conn, req); err != nil {
		return "", err
	}
	var line []byte
	buf := make([]byte, 256)
	for !bytes.Contains(line, []byte("\n")) {
		n, err := conn.Read(buf)
		line = append(line, buf[:n]...)
		if err != nil {
			if len(line) > 0 && errors.Is(err, io.EOF) {
				break
			}
			return "", err
		}
	}
	s, _, _ := strings.Cut(string(line), "\n")
	return strings.TrimRight(s, "\r"), nil
}

// orDefault returns d when v is zero.
func orDefault[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}

// Diagnostics is the tail of a server's logs, headed by its name and
// directory, for a test that failed ("" when the logs are empty).
func (in *instance) diagnostics() string {
	tail := in.logTail()
	if tail == "" {
		return ""
	}
	return "sandbox " + in.name + " in " + in.dir + ":" + strings.TrimRight(tail, "\n")
}

// Diagnostics returns the tail of the server's logs, for a failed test.
func (m *MariaDB) Diagnostics() string { return m.inst.diagnostics() }

// Diagnostics returns the tail of the server's logs, for a failed test.
func (n *Nginx) Diagnostics() string { return n.inst.diagnostics() }

// Diagnostics returns the tail of the server's logs, for a failed test.
func (m *Memcached) Diagnostics() string { return m.inst.diagnostics() }

// Diagnostics returns the tail of the server's logs, for a failed test.
func (r *Redis) Diagnostics() string { return r.inst.diagnostics() }
