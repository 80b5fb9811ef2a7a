package measure

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// LookTool finds a command in PATH (or /usr/sbin, /usr/bin) and otherwise
// names the Debian package that ships it.
func LookTool(name, pkg string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/bin", "/usr/sbin"} {
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found: install the Debian package %s (apt-get install %s)", name, pkg, pkg)
}

// ModuleRoot returns the directory of the go.mod of the current module.
func ModuleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the stacktune module: run from the repository (go run ./bench/...)")
	}
	return filepath.Dir(mod), nil
}

// BuildStacktune builds ./cmd/stacktune into dir and returns the binary's
// path; prog names the benchmark in the line it logs to stderr.
func BuildStacktune(ctx context.Context, dir, prog string, stderr io.Writer) (string, error) {
	root, err := ModuleRoot(ctx)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "stacktune")
	fmt.Fprintln(stderr, prog+": go build -o", bin, "./cmd/stacktune")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/stacktune")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building stacktune: %w\n%s", err, out)
	}
	return bin, nil
}

// Today is the date a report is dated with.
func Today() string { return time.Now().Format("2006-01-02") }

// NumCPU is the number of cores (nproc).
func NumCPU() int { return runtime.NumCPU() }

// CPUModel returns the first "model name" of /proc/cpuinfo, or "unknown".
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// ToolVersion runs `bin args...` and returns the last word of its first
// line ("pt-query-digest 3.2.1" -> "3.2.1"), or "unknown".
func ToolVersion(ctx context.Context, bin string, args ...string) string {
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	f := strings.Fields(line)
	if len(f) == 0 {
		return "unknown"
	}
	return f[len(f)-1]
}

// GitCommit returns the short commit of the working tree, with "+dirty"
// when it has uncommitted changes.
func GitCommit(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && len(strings.TrimSpace(string(st))) > 0 {
		commit += "+dirty"
	}
	return commit
}
