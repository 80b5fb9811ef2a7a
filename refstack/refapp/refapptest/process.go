package refapptest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stacktune/stacktune/refstack/refapp"
)

var refappd struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// refappdBin builds testdata/refappd once per test binary (with its
// symbol table: a profiler names the app's functions from it).
func refappdBin(t testing.TB) string {
	t.Helper()
	refappd.once.Do(func() {
		dir, err := os.MkdirTemp("", "refappd-")
		if err != nil {
			refappd.err = err
			return
		}
		refappd.bin = filepath.Join(dir, "refappd")
		refappd.out, refappd.err = exec.Command("go", "build", "-o", refappd.bin, "github.com/stacktune/stacktune/testdata/refappd").CombinedOutput()
	})
	if refappd.err != nil {
		t.Fatalf("building testdata/refappd: %v: %s", refappd.err, refappd.out)
	}
	return refappd.bin
}

// StartProcess runs the app in a process of its own (testdata/refappd),
// so that a profiler sees only the app's CPU: its base URL and process
// ID. It stops with the test.
func StartProcess(t testing.TB, cfg refapp.Config) (string, int) {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(refappdBin(t))
	cmd.Env = append(os.Environ(), "REFAPPD_CONFIG="+string(raw))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- strings.TrimSpace(sc.Text())
		}
		close(line)
		for sc.Scan() {
		}
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	select {
	case u, ok := <-line:
		if !ok || !strings.HasPrefix(u, "http://") {
			t.Fatalf("the app's process did not start (said %q)", u)
		}
		return u, cmd.Process.Pid
	case <-time.After(60 * time.Second):
		t.Fatal("the app's process did not start within 60s")
	}
	return "", 0
}
