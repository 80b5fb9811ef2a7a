package appcpu

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestListenerPIDs finds this process from its own listening sockets
// (TCP and unix), and a child it starts among its children.
func TestListenerPIDs(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	sock := filepath.Join(t.TempDir(), "app.sock")
	unix, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close()
	for _, tc := range []struct{ name, addr string }{
		{"tcp", tcp.Addr().String()},
		{"unix", sock},
		{"unix prefix", "unix:" + sock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pids, err := ListenerPIDs(tc.addr)
			if err != nil || !slices.Contains(pids, os.Getpid()) {
				t.Fatalf("ListenerPIDs(%s) = %v, %v; want this process %d", tc.addr, pids, err, os.Getpid())
			}
		})
	}
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := free.Addr().String()
	free.Close()
	if _, err := ListenerPIDs(addr); err == nil || !strings.Contains(err.Error(), "no process") {
		t.Errorf("a closed port: %v", err)
	}
	if _, err := ListenerPIDs("nonsense"); err == nil {
		t.Error("a bad address accepted")
	}
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	if all := WithChildren([]int{os.Getpid()}); !slices.Contains(all, child.Process.Pid) {
		t.Errorf("children of %d: %v, want %d among them", os.Getpid(), all, child.Process.Pid)
	}
	s, line, err := NewSampler(SamplerOptions{Target: "http://" + tcp.Addr().String() + "/"})
	if err != nil || s.Name() != "perf" || !strings.Contains(line, "listening on") {
		t.Errorf("NewSampler: %v %q %v", s, line, err)
	}
}
