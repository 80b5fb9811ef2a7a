package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// stacktuneBinary builds the command once for the package's tests.
func stacktuneBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "stacktune-bin-"); binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "stacktune"), ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "stacktune")
}

// syncBuffer is a bytes.Buffer safe to read while a child writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSignalForcedExit runs commands stuck where no context reaches them
// (reading a standard input nobody writes and nobody closes) and signals
// them: one that has not returned forcedExitGrace after SIGTERM exits with
// 143, saying so; a second signal ends it at once; a command that changes
// systems (apply) is never cut short, says why, and ends on its own once
// it can.
func TestSignalForcedExit(t *testing.T) {
	bin := stacktuneBinary(t)
	tests := []struct {
		name    string
		args    []string
		signals []syscall.Signal // sent 300 ms apart, after a moment
		code    int              // the exit status wanted
		say     string           // on stderr
		optOut  bool             // it must go on until its input ends
	}{
		{name: "SIGTERM, stuck reading standard input", args: []string{"digest", "-"}, signals: []syscall.Signal{syscall.SIGTERM},
			code: 143, say: "stacktune: digest did not stop within 5s of SIGTERM: exiting now, with status 143"},
		{name: "SIGINT twice", args: []string{"http", "-"}, signals: []syscall.Signal{syscall.SIGINT, syscall.SIGINT},
			code: 130, say: "stacktune: http: a second signal (SIGINT): exiting now, with status 130"},
		{name: "apply opts out", args: []string{"apply", "--ddl", "-", "--dsn", "nobody@unix(/nonexistent/mysqld.sock)/", "--no-defaults", "--state", "{tmp}/state"},
			signals: []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM},
			code:    1, say: "stacktune: apply changes systems and is not cut short after SIGTERM: it ends once its transaction is done or rolled back", optOut: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = strings.ReplaceAll(a, "{tmp}", t.TempDir())
			}
			cmd := exec.Command(bin, args...)
			stdin, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			var stderr syncBuffer
			cmd.Stdin, cmd.Stderr = stdin, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			stdin.Close()
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			defer func() {
				select {
				case <-done:
				default:
					cmd.Process.Kill()
					<-done
				}
			}()
			time.Sleep(500 * time.Millisecond)
			for i, s := range tt.signals {
				if i > 0 {
					time.Sleep(300 * time.Millisecond)
				}
				cmd.Process.Signal(s)
			}
			if tt.optOut {
				// It says why it goes on, and goes on.
				deadline := time.Now().Add(20 * time.Second)
				for !strings.Contains(stderr.String(), tt.say) && time.Now().Before(deadline) {
					time.Sleep(100 * time.Millisecond)
				}
				if !strings.Contains(stderr.String(), tt.say) {
					t.Fatalf("stderr lacks %q:\n%s", tt.say, stderr.String())
				}
				select {
				case <-done:
					t.Fatalf("ended after the signals, status %d:\n%s", cmd.ProcessState.ExitCode(), stderr.String())
				default:
				}
				w.Close() // its input ends: it reads on, and stops at the server
			}
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("still running 20 s after %v:\n%s", tt.signals, stderr.String())
			}
			if got := cmd.ProcessState.ExitCode(); got != tt.code {
				t.Errorf("exit status %d, want %d", got, tt.code)
			}
			if !strings.Contains(stderr.String(), tt.say) {
				t.Errorf("stderr lacks %q:\n%s", tt.say, stderr.String())
			}
		})
	}
}
