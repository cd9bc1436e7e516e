//go:build !unix

package store

import "os/exec"

// runAs is never called where there is no root (os.Geteuid is -1).
func runAs(*exec.Cmd, int, int) {}
