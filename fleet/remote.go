package fleet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/inventory"
)

// Host variables the fleet layer reads from the inventory.
const (
	// VarBinary is the stacktune binary already on the host; without it
	// the local binary is copied for the run.
	VarBinary = "stacktune_binary"
	// VarCollectArgs are flags of `stacktune collect` for the host
	// ("--defaults-file /etc/stacktune/monitor.cnf --nginx-conf ...").
	VarCollectArgs = "stacktune_collect_args"
	// VarApplyArgs are flags of `stacktune apply` and `rollback` for the
	// host ("--dsn-env ... --mysql-restart 'systemctl restart mariadb'").
	VarApplyArgs = "stacktune_apply_args"
)

// Binary says how a host runs stacktune: a path already on the host, or
// the local executable Self, copied into a private temporary directory
// for the command and removed after it. Nothing stays installed.
type Binary struct {
	// Remote is a stacktune on every host ("" to copy Self).
	Remote string
	// Self is the local stacktune to copy (default: this executable).
	Self string
}

// maxOutput bounds what a remote command may write on its standard output.
const maxOutput = 64 << 20

// exec runs `stacktune ARGS` on the host: stacktune itself copied over
// the connection's standard input, or the host's own (b.Remote, or the
// host's stacktune_binary variable); stdin, when not nil, follows the
// binary (a tar of a change set). Output beyond maxOutput fails the run.
func (b Binary) exec(ctx context.Context, c Conn, h inventory.Host, args []string, stdin io.Reader, stdout io.Writer) error {
	remote := b.Remote
	if v := h.Vars[VarBinary]; v != "" {
		remote = v
	}
	out := &limitWriter{w: stdout, n: maxOutput}
	if remote != "" {
		return c.Run(ctx, "exec "+shellQuote(remote)+" "+quoteArgs(args), stdin, out, nil)
	}
	self := b.Self
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return &HostError{StageRun, fmt.Errorf("finding this stacktune to copy: %w", err)}
		}
	}
	f, err := os.Open(self)
	if err != nil {
		return &HostError{StageRun, fmt.Errorf("reading this stacktune to copy: %w", err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return &HostError{StageRun, err}
	}
	script := copyScript(st.Size(), args)
	in := io.Reader(f)
	if stdin != nil {
		in = io.MultiReader(f, stdin)
	}
	return c.Run(ctx, script, in, out, nil)
}

// Exit statuses of the copy script (stacktune itself exits 0 or 1).
const (
	exitArch  = 97
	exitShort = 98
)

// copyScript receives size bytes of stacktune on standard input into a
// private temporary directory, checks that this host can run it, runs it
// with args (the rest of standard input is its own) and removes it.
func copyScript(size int64, args []string) string {
	arch := unameArch()
	return fmt.Sprintf(`set -e
umask 077
d=$(mktemp -d "${TMPDIR:-/tmp}/stacktune.XXXXXX")
trap 'rm -rf "$d"' EXIT HUP INT TERM
case "$(uname -s)/$(uname -m)" in
Linux/%s) ;;
*) echo "this host is $(uname -s) $(uname -m); the stacktune copied is %s/%s: install one there and name it with stacktune_binary or --remote-binary" >&2; exit %d;;
esac
head -c %d > "$d/stacktune"
n=$(wc -c < "$d/stacktune")
[ "$n" -eq %d ] || { echo "the copy of stacktune was cut short ($n of %d bytes): out of space in ${TMPDIR:-/tmp}?" >&2; exit %d; }
chmod 700 "$d/stacktune"
"$d/stacktune" %s
`, arch, runtime.GOOS, runtime.GOARCH, exitArch, size, size, size, exitShort, quoteArgs(args))
}

// unameArch is `uname -m` for the architecture this binary was built for
// (a shell pattern).
func unameArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64|arm64"
	case "386":
		return "i?86"
	case "arm":
		return "armv*"
	}
	return runtime.GOARCH
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// hostArgs appends the host's own flags (its variable name) to args.
func hostArgs(h inventory.Host, name string, args []string) ([]string, error) {
	v := h.Vars[name]
	if v == "" {
		return args, nil
	}
	more, err := apply.ParseCommandLine(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return append(append([]string{}, args...), more...), nil
}

// runStacktune dials h and runs stacktune with args, returning its
// standard output.
func runStacktune(ctx context.Context, d Dialer, b Binary, h inventory.Host, args []string, stdin io.Reader) ([]byte, error) {
	c, err := d.Dial(ctx, h)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out bytes.Buffer
	if err := b.exec(ctx, c, h, args, stdin, &out); err != nil {
		return out.Bytes(), err
	}
	return out.Bytes(), nil
}
