//go:build !unix

package pgtest

import "os/exec"

// runAs is not needed where there is no root (os.Geteuid is -1): the
// command runs as this user.
func runAs(uid, gid int) func(*exec.Cmd) { return nil }
