//go:build unix

package service

import (
	"os/exec"
	"syscall"
)

// inGroup makes cmd the leader of a process group of its own, so that
// killGroup reaches every process the code started.
func inGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills cmd's process group: the code and its children.
func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
