package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/inventory"
)

// Conn runs commands on one host.
type Conn interface {
	// Run runs a shell command line, feeding it stdin (nil: none) and
	// copying its output; an exit status other than 0 is an *ExitError.
	Run(ctx context.Context, command string, stdin io.Reader, stdout, stderr io.Writer) error
	Close() error
}

// Dialer opens a Conn to a host of the inventory.
type Dialer interface {
	Dial(ctx context.Context, h inventory.Host) (Conn, error)
}

// ExitError is a remote command that exited with a status other than 0.
type ExitError struct {
	Status int
	// Stderr is the end of what it wrote on its standard error.
	Stderr string
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("exited with status %d", e.Status)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// Stage says where reaching a host failed.
type Stage string

// Stages of a host's work, in order.
const (
	StageConnect Stage = "connect"  // no TCP connection (refused, timeout, no route)
	StageHostKey Stage = "host-key" // its key is unknown or changed
	StageLogin   Stage = "login"    // no key was accepted
	StageRun     Stage = "run"      // the remote command failed
	StageRead    Stage = "read"     // its output is not what was expected
)

// Codes lists the stages (docs/json.md; "host-key" is older than the
// rule of snake_case codes and stays).
func (Stage) Codes() []string {
	return []string{string(StageConnect), string(StageHostKey), string(StageLogin), string(StageRun), string(StageRead)}
}

// HostError is a host that could not be reached or whose command failed.
type HostError struct {
	Stage Stage
	Err   error
}

func (e *HostError) Error() string { return string(e.Stage) + ": " + e.Err.Error() }
func (e *HostError) Unwrap() error { return e.Err }

// stageOf returns the stage of err (StageRun when it has none).
func stageOf(err error) Stage {
	var he *HostError
	if errors.As(err, &he) {
		return he.Stage
	}
	return StageRun
}

// SSHDialer reaches hosts over SSH with host key checking against
// known_hosts: a host whose key is not listed, or differs from the one
// listed, is refused. Keys come from the host's
// ansible_ssh_private_key_file, else Identities, else ~/.ssh/id_ed25519,
// id_ecdsa and id_rsa, and from ssh-agent when SSH_AUTH_SOCK is set.
type SSHDialer struct {
	// KnownHosts are the known_hosts files (default ~/.ssh/known_hosts
	// and /etc/ssh/ssh_known_hosts, those that exist).
	KnownHosts []string
	// Identities are private key files tried when the host names none.
	Identities []string
	// User is the login when the host has no ansible_user (default: the
	// user running stacktune).
	User string
	// ConnectTimeout bounds the TCP connection and the SSH handshake
	// (default 10s).
	ConnectTimeout time.Duration

	once     sync.Once
	initErr  error
	callback ssh.HostKeyCallback
	agent    agent.ExtendedAgent
}

// DefaultPort is SSH's port when the inventory gives none.
const DefaultPort = 22

func (d *SSHDialer) init() error {
	d.once.Do(func() {
		files := d.KnownHosts
		if len(files) == 0 {
			home, _ := os.UserHomeDir()
			for _, f := range []string{filepath.Join(home, ".ssh", "known_hosts"), "/etc/ssh/ssh_known_hosts"} {
				if _, err := os.Stat(f); err == nil {
					files = append(files, f)
				}
			}
			if len(files) == 0 {
				d.initErr = errors.New("no known_hosts file (~/.ssh/known_hosts, /etc/ssh/ssh_known_hosts): host keys cannot be checked; give --known-hosts")
				return
			}
		}
		files = slices.Clone(files)
		for i, f := range files {
			files[i] = expandHome(f)
			// knownhosts opens the files itself: check them first, so a
			// FIFO does not block and /dev/zero is not read without end.
			if err := checkFile(files[i], MaxKnownHostsFile, "fleet.MaxKnownHostsFile"); err != nil {
				d.initErr = fmt.Errorf("known_hosts: %w", err)
				return
			}
		}
		d.callback, d.initErr = knownhosts.New(files...)
		if d.initErr != nil {
			d.initErr = fmt.Errorf("known_hosts: %w", d.initErr)
		}
		if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
			if c, err := net.Dial("unix", sock); err == nil {
				d.agent = agent.NewClient(c)
			}
		}
	})
	return d.initErr
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// Dial connects to h, checks its host key and logs in.
func (d *SSHDialer) Dial(ctx context.Context, h inventory.Host) (Conn, error) {
	if h.Connection == "local" {
		return localConn{}, nil
	}
	if h.Connection != "" && h.Connection != "ssh" {
		return nil, &HostError{StageConnect, fmt.Errorf("ansible_connection=%s: stacktune reaches hosts over ssh (or local)", h.Connection)}
	}
	if err := d.init(); err != nil {
		return nil, &HostError{StageHostKey, err}
	}
	port := h.Port
	if port == 0 {
		port = DefaultPort
	}
	addr := net.JoinHostPort(h.Address, strconv.Itoa(port))
	login := h.User
	if login == "" {
		login = d.User
	}
	if login == "" {
		if u, err := user.Current(); err == nil {
			login = u.Username
		}
	}
	auths, tried, authErr := d.auth(h)
	if len(auths) == 0 {
		if authErr == nil {
			authErr = errors.New("no private key found (ansible_ssh_private_key_file, --identity, ~/.ssh/id_ed25519, id_ecdsa, id_rsa) and no ssh-agent")
		}
		return nil, &HostError{StageLogin, authErr}
	}
	var keyErr *knownhosts.KeyError
	var offered ssh.PublicKey
	cfg := &ssh.ClientConfig{
		User: login,
		Auth: auths,
		HostKeyCallback: func(hostname string, remote net.Addr, key ssh.PublicKey) error {
			offered = key
			err := d.callback(hostname, remote, key)
			errors.As(err, &keyErr)
			return err
		},
		Timeout: cmpOr(d.ConnectTimeout, 10*time.Second),
	}
	dialer := net.Dialer{Timeout: cfg.Timeout}
	nc, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, &HostError{StageConnect, err}
	}
	_ = nc.SetDeadline(time.Now().Add(cfg.Timeout))
	c, chans, reqs, err := ssh.NewClientConn(nc, addr, cfg)
	if err != nil {
		nc.Close()
		switch {
		case keyErr != nil && len(keyErr.Want) == 0:
			return nil, &HostError{StageHostKey, fmt.Errorf("%s is not in known_hosts (it offers %s %s): check that fingerprint with the host's owner, then add it (ssh-keyscan -p %d %s >> ~/.ssh/known_hosts); stacktune never accepts an unknown key",
				addr, offered.Type(), ssh.FingerprintSHA256(offered), port, h.Address)}
		case keyErr != nil:
			w := keyErr.Want[0]
			return nil, &HostError{StageHostKey, fmt.Errorf("the host key of %s CHANGED: it offers %s %s, %s:%d has %s %s (a reinstalled host, or someone in the middle); refused. If the change is expected, remove the old line (ssh-keygen -R '%s') and add the new key",
				addr, offered.Type(), ssh.FingerprintSHA256(offered), w.Filename, w.Line, w.Key.Type(), ssh.FingerprintSHA256(w.Key), knownhosts.Normalize(addr))}
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, &HostError{StageLogin, fmt.Errorf("%s refused the login as %s with %s", addr, login, strings.Join(tried, ", "))}
		}
		return nil, &HostError{StageConnect, err}
	}
	_ = nc.SetDeadline(time.Time{})
	return &sshConn{c: ssh.NewClient(c, chans, reqs)}, nil
}

func cmpOr[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}

// auth returns the login methods for h and what they are, for messages.
func (d *SSHDialer) auth(h inventory.Host) ([]ssh.AuthMethod, []string, error) {
	var files []string
	switch {
	case h.KeyFile != "":
		files = []string{h.KeyFile}
	case len(d.Identities) > 0:
		files = d.Identities
	default:
		home, _ := os.UserHomeDir()
		for _, n := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			if p := filepath.Join(home, ".ssh", n); fileExists(p) {
				files = append(files, p)
			}
		}
	}
	var signers []ssh.Signer
	var tried []string
	var firstErr error
	for _, f := range files {
		f = expandHome(f)
		b, err := input.ReadFile(f, MaxKeyFile)
		if errors.Is(err, input.ErrTooLarge) {
			err = fmt.Errorf("%w (fleet.MaxKeyFile)", err)
		}
		if err != nil {
			firstErr = cmpOr(firstErr, fmt.Errorf("private key: %w", err))
			continue
		}
		s, err := ssh.ParsePrivateKey(b)
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			firstErr = cmpOr(firstErr, fmt.Errorf("private key %s is protected by a passphrase: add it to ssh-agent (ssh-add %s)", f, f))
			continue
		}
		if err != nil {
			firstErr = cmpOr(firstErr, fmt.Errorf("private key %s: %w", f, err))
			continue
		}
		signers = append(signers, s)
		tried = append(tried, "key "+f)
	}
	var methods []ssh.AuthMethod
	if len(signers) > 0 {
		methods = append(methods, ssh.PublicKeys(signers...))
	}
	if d.agent != nil {
		methods = append(methods, ssh.PublicKeysCallback(d.agent.Signers))
		tried = append(tried, "ssh-agent")
	}
	return methods, tried, firstErr
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Bounds on the SSH files read, far above real ones (a key is a few KB).
const (
	MaxKeyFile        = 1 << 20
	MaxKnownHostsFile = 64 << 20
)

// checkFile checks, without blocking, that path is a regular file of at
// most limit bytes (named by name in the error), for a library that opens
// it itself.
func checkFile(path string, limit int64, name string) error {
	f, fi, err := input.OpenFile(path)
	if err != nil {
		return err
	}
	f.Close()
	if fi.Size() > limit {
		return fmt.Errorf("%w (%s)", &input.TooLargeError{Path: path, Limit: limit}, name)
	}
	return nil
}

type sshConn struct{ c *ssh.Client }

func (s *sshConn) Close() error { return s.c.Close() }

func (s *sshConn) Run(ctx context.Context, command string, stdin io.Reader, stdout, stderr io.Writer) error {
	sess, err := s.c.NewSession()
	if err != nil {
		return &HostError{StageRun, fmt.Errorf("opening a session: %w", err)}
	}
	defer sess.Close()
	tail := &tailBuffer{max: stderrTail}
	sess.Stdin, sess.Stdout, sess.Stderr = stdin, stdout, io.MultiWriter(tail, orDiscard(stderr))
	done := make(chan error, 1)
	go func() { done <- sess.Run(command) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = sess.Signal(ssh.SIGTERM)
		_ = sess.Close()
		// The connection too: a command that ignores the signal must not
		// keep the host's slot.
		_ = s.c.Close()
		<-done
		return &HostError{StageRun, ctx.Err()}
	}
	var ee *ssh.ExitError
	switch {
	case errors.As(err, &ee):
		return &HostError{StageRun, &ExitError{Status: ee.ExitStatus(), Stderr: tail.String()}}
	case err != nil:
		return &HostError{StageRun, fmt.Errorf("%w%s", err, withStderr(tail.String()))}
	}
	return nil
}

func withStderr(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// localConn runs commands on this machine (ansible_connection=local).
type localConn struct{}

func (localConn) Close() error { return nil }

func (localConn) Run(ctx context.Context, command string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	tail := &tailBuffer{max: stderrTail}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, io.MultiWriter(tail, orDiscard(stderr))
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return &HostError{StageRun, ctx.Err()}
	case errors.As(err, &ee):
		return &HostError{StageRun, &ExitError{Status: ee.ExitCode(), Stderr: tail.String()}}
	case err != nil:
		return &HostError{StageRun, err}
	}
	return nil
}

// stderrTail is how much of a remote command's standard error is kept.
const stderrTail = 2048

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	max int
	buf []byte
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	s := string(bytes.TrimSpace(t.buf))
	if t.cut {
		s = "..." + s
	}
	return s
}

// limitWriter fails once more than n bytes were written.
type limitWriter struct {
	w io.Writer
	n int64
}

// errTooMuch is returned when a remote command writes more than the bound.
var errTooMuch = errors.New("more output than allowed")

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, errTooMuch
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
