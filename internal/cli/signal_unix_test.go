//go:build unix

package cli

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestDriftInterruptedReadingStdin: a drift whose declared side is stdin
// (or a pipe) still being written ends on SIGINT or SIGTERM as any process
// does, with the signal's status: the run's own handling of interrupts
// starts once that side is read, and nothing would end a read of stdin
// it caught them in. With --invoke-tool the declared side is read before
// anything else too.
func TestDriftInterruptedReadingStdin(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		args []string
	}{
		{"SIGINT", syscall.SIGINT, nil},
		{"SIGTERM", syscall.SIGTERM, nil},
		{"SIGINT, --invoke-tool", syscall.SIGINT, []string{"--invoke-tool", "x"}},
	} {
		cmd := exec.Command(exe, append([]string{"drift", "-", "--url", "http://127.0.0.1:9/mcp"}, c.args...)...)
		cmd.Env = append(os.Environ(), envAsCLI+"=1")
		stdin, err := cmd.StdinPipe() // held open: the read does not end
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stdin.Write([]byte(`{"tools":[`))
		time.Sleep(300 * time.Millisecond)
		cmd.Process.Signal(c.sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != c.sig {
				t.Errorf("%s: ended with %v, not by the signal", c.name, cmd.ProcessState)
			}
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("%s: still reading stdin 5 s after the signal", c.name)
		}
		stdin.Close()
	}
}
