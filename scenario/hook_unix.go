//go:build unix

package scenario

import (
	"os/exec"
	"syscall"
)

// killGroup makes cmd a process group of its own, killed whole when its
// context ends, so a shell's children do not outlive the hook.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
