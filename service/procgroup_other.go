//go:build !unix

package service

import "os/exec"

// inGroup does nothing where there are no process groups.
func inGroup(cmd *exec.Cmd) {}

// killGroup kills cmd's process alone: without process groups, children
// the code started are not reached.
func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
