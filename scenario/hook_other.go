//go:build !unix

package scenario

import "os/exec"

// killGroup leaves the default: the command itself is killed when its
// context ends.
func killGroup(*exec.Cmd) {}
