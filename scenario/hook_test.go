package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPreRunHTTP: the HTTP hook is sent to base_url with its method, body
// and headers (the scenario's too); a failure says why, with the URL.
func TestPreRunHTTP(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %s lang=%s token=%s", r.Method, r.URL.Path, body, r.Header.Get("Accept-Language"), r.Header.Get("X-Token")))
		mu.Unlock()
		switch r.URL.Path {
		case "/initialize":
			w.Write([]byte(`{"language": "go"}`))
		case "/broken":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "/hang":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()

	const head = "base_url: http://set.by.test/\nheaders: {Accept-Language: ja}\nsteps: [{url: /}]\n"
	tests := []struct {
		name    string
		hook    string
		base    string // default srv.URL
		status  int
		what    string // BASE replaced
		err     string // the whole error, BASE replaced; "" = success
		request string // what the server saw, when it saw anything
	}{
		{name: "POST /initialize", hook: `{method: POST, url: /initialize, body: '{"reset":1}', headers: {X-Token: s3cret}, expect: {status: 200, contains: '"language"'}}`,
			status: 200, what: "POST BASE/initialize", request: `POST /initialize {"reset":1} lang=ja token=s3cret`},
		{name: "default expectation: any status below 400", hook: `{url: /initialize}`, status: 200, what: "GET BASE/initialize",
			request: "GET /initialize  lang=ja token="},
		{name: "unexpected status", hook: `{method: POST, url: /broken, expect: {status: 200}}`, status: 500, what: "POST BASE/broken",
			err: "pre_run POST BASE/broken: status 500, want 200", request: "POST /broken  lang=ja token="},
		{name: "failed check", hook: `{url: /initialize, expect: {contains: ready}}`, status: 200, what: "GET BASE/initialize",
			err: `pre_run GET BASE/initialize: body lacks "ready"`},
		{name: "timeout", hook: `{url: /hang, timeout: 200ms}`, what: "GET BASE/hang",
			err: "pre_run GET BASE/hang: no complete response within 200ms"},
		{name: "refused", hook: `{url: /initialize}`, base: deadURL, what: "GET BASE/initialize",
			err: "pre_run GET BASE/initialize: dial tcp " + strings.TrimPrefix(deadURL, "http://") + ": connect: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			s, err := Parse("hook.yaml", []byte(head+"pre_run: "+tt.hook+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			base := srv.URL
			if tt.base != "" {
				base = tt.base
			}
			if err := s.SetBaseURL(base); err != nil {
				t.Fatal(err)
			}
			res, err := s.RunPreRun(context.Background())
			want := strings.ReplaceAll(tt.err, "BASE", base)
			if (err == nil) != (want == "") || (err != nil && err.Error() != want) {
				t.Fatalf("error %v, want %q", err, want)
			}
			if what := strings.ReplaceAll(tt.what, "BASE", base); res == nil || res.Status != tt.status || res.Elapsed <= 0 || res.What != what {
				t.Errorf("result %+v, want status %d, what %q", res, tt.status, what)
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.request != "" && (len(seen) != 1 || seen[0] != tt.request) {
				t.Errorf("server saw %q, want %q", seen, tt.request)
			}
		})
	}

	// No hook: nothing to run. A canceled context: the cause.
	s, err := Parse("hook.yaml", []byte(head))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.RunPreRun(context.Background()); res != nil || err != nil {
		t.Errorf("no hook: %+v %v", res, err)
	}
	s, err = Parse("hook.yaml", []byte(head+"pre_run: {url: /hang}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s.SetBaseURL(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.RunPreRun(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("canceled: %v", err)
	}
}

// TestPreRunCommand: a command runs in the scenario's directory with its
// arguments as given (no shell unless asked); a failure says why, with the
// last line of its output; at the timeout its whole process group dies.
func TestPreRunCommand(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nprintf '%s|' \"$@\" > args.out\npwd > pwd.out\n"
	if err := os.WriteFile(filepath.Join(dir, "init.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "child.pid")
	tests := []struct {
		name  string
		hook  string
		what  string
		err   string // "" = success
		check func(t *testing.T, res *HookResult)
	}{
		{name: "argv, no shell, in the scenario's directory", hook: `{command: [./init.sh, --reset, "two words", "$HOME", ""]}`,
			what: `command ./init.sh --reset "two words" "$HOME" ""`,
			check: func(t *testing.T, res *HookResult) {
				args, _ := os.ReadFile(filepath.Join(dir, "args.out"))
				pwd, _ := os.ReadFile(filepath.Join(dir, "pwd.out"))
				if string(args) != "--reset|two words|$HOME||" || strings.TrimSpace(string(pwd)) != dir {
					t.Errorf("args %q pwd %q", args, pwd)
				}
			}},
		{name: "shell when asked", hook: `{command: "echo $((6*7)) > shell.out", shell: true}`,
			what: "shell: echo $((6*7)) > shell.out",
			check: func(t *testing.T, res *HookResult) {
				if out, _ := os.ReadFile(filepath.Join(dir, "shell.out")); string(out) != "42\n" {
					t.Errorf("shell output %q", out)
				}
			}},
		{name: "exit status with the last line of output", hook: `{command: "echo starting; echo 'ERROR 1045: Access denied' >&2; echo; exit 3", shell: true}`,
			what: "shell: echo starting; echo 'ERROR 1045: Access denied' >&2; echo; exit 3",
			err:  "pre_run shell: echo starting; echo 'ERROR 1045: Access denied' >&2; echo; exit 3: exit status 3: ERROR 1045: Access denied"},
		{name: "missing program", hook: `{command: [./missing.sh]}`, what: "command ./missing.sh",
			err: "pre_run command ./missing.sh: fork/exec ./missing.sh: no such file or directory"},
		{name: "timeout kills the process group", hook: `{command: "sleep 30 & echo $! > ` + pidFile + `; wait", shell: true, timeout: 300ms}`,
			what: "shell: sleep 30 & echo $! > " + pidFile + "; wait",
			err:  "pre_run shell: sleep 30 & echo $! > " + pidFile + "; wait: killed after the 300ms timeout",
			check: func(t *testing.T, res *HookResult) {
				if res.Elapsed > 5*time.Second {
					t.Errorf("took %v", res.Elapsed)
				}
				raw, err := os.ReadFile(pidFile)
				if err != nil {
					t.Fatal(err)
				}
				pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
				for deadline := time.Now().Add(3 * time.Second); processAlive(pid); {
					if time.Now().After(deadline) {
						t.Fatalf("the hook's child %d outlived the timeout", pid)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "s.yaml")
			if err := os.WriteFile(path, []byte("base_url: http://h/\npre_run: "+tt.hook+"\nsteps: [{url: /}]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.RunPreRun(context.Background())
			if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			if res == nil || res.What != tt.what || res.Status != 0 || res.Elapsed <= 0 {
				t.Fatalf("result %+v, want what %q", res, tt.what)
			}
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}

// processAlive says whether pid runs (a zombie waiting for its reaper does
// not).
func processAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}
