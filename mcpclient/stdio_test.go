//go:build unix

package mcpclient

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"
)

func stdioConfig(mode string) Config {
	return Config{
		Command:        fakeCommand(mode),
		PassEnv:        []string{"MCPCLIENT_FAKE"},
		StartupTimeout: 5 * time.Second,
		RequestTimeout: 5 * time.Second,
	}
}

func TestStdioModern(t *testing.T) {
	obs := mustList(t, stdioConfig("modern"))
	if obs.Era != EraModern || obs.ProtocolRevision != mcpwire.Rev20260728 || obs.ServerInfo == nil || obs.ServerInfo.Name != "fake-stdio" {
		t.Errorf("era %s revision %q server %+v", obs.Era, obs.ProtocolRevision, obs.ServerInfo)
	}
	if obs.Pages != 2 || obs.Completeness != "complete" || obs.HTTPStatus != 0 {
		t.Errorf("pages %d %s status %d", obs.Pages, obs.Completeness, obs.HTTPStatus)
	}
	tl := checkTranscript(t, obs, []string{"s1", "s2"})
	// The second page's odd bytes survive: number spelling, escapes, spaces.
	if raw := string(tl.Tools[1].Raw()); raw != `{"name":"s2","inputSchema":{"type":"object"},"x-extra":[1.50,"\u2028"]}` {
		t.Errorf("tool bytes %s", raw)
	}
	if !strings.Contains(obs.Stderr, "fake server modern starting") || !strings.Contains(obs.Stderr, "stdin closed") {
		t.Errorf("stderr %q", obs.Stderr)
	}
}

func TestStdioLegacy(t *testing.T) {
	obs := mustList(t, stdioConfig("legacy"))
	if obs.Era != EraLegacy || obs.ProtocolRevision != "" || obs.LegacyVersion != mcpwire.Rev20250618 {
		t.Errorf("era %s revision %q legacy %q", obs.Era, obs.ProtocolRevision, obs.LegacyVersion)
	}
	if !strings.Contains(obs.RevisionReason, "-32601") || !strings.Contains(obs.RevisionReason, "not claimed") {
		t.Errorf("reason %q", obs.RevisionReason)
	}
	checkTranscript(t, obs, []string{"s1", "s2"})
	if len(obs.Warnings) != 1 || !strings.Contains(obs.Warnings[0], "not a JSON-RPC message") {
		t.Errorf("warnings %q", obs.Warnings)
	}
	// The fake server reports on stderr whether its ping was answered.
	if !strings.Contains(obs.Stderr, "ping answered: true") {
		t.Errorf("stderr %q", obs.Stderr)
	}
}

func TestStdioSilentDiscover(t *testing.T) {
	cfg := stdioConfig("legacy-silent-discover")
	cfg.StartupTimeout = 200 * time.Millisecond
	obs := mustList(t, cfg)
	if obs.Era != EraLegacy || obs.Pages != 2 || !strings.Contains(obs.RevisionReason, "no answer") {
		t.Errorf("era %s pages %d reason %q", obs.Era, obs.Pages, obs.RevisionReason)
	}
}

func TestStdioNeverAnswers(t *testing.T) {
	cfg := stdioConfig("silent")
	cfg.StartupTimeout = 200 * time.Millisecond
	start := time.Now()
	obs, err := listTools(t, cfg)
	var le *LimitError
	if !errors.As(err, &le) || le.Kind != LimitStartupTime || le.Method != "initialize" {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	if obs == nil || !strings.Contains(obs.Stderr, "fake server silent starting") {
		t.Errorf("observation %+v", obs)
	}
}

func TestStdioGarbage(t *testing.T) {
	_, err := listTools(t, stdioConfig("garbage"))
	var re *ResponseError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "not strict JSON") {
		t.Fatalf("err = %v", err)
	}
}

func TestStdioWrongID(t *testing.T) {
	_, err := listTools(t, stdioConfig("wrongid"))
	var re *ResponseError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "id 99") {
		t.Fatalf("err = %v", err)
	}
}

func TestStdioExits(t *testing.T) {
	obs, err := listTools(t, stdioConfig("exit"))
	if !IsUnreachable(err) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(obs.Stderr, "fatal: missing API_TOKEN") {
		t.Errorf("stderr %q", obs.Stderr)
	}
}

func TestStdioStartFailure(t *testing.T) {
	_, err := listTools(t, Config{Command: []string{"/nonexistent/mcp-server-binary"}})
	if !IsUnreachable(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestStdioEnvironment(t *testing.T) {
	obs := mustList(t, stdioConfig("envdump"))
	env := strings.Split(obs.ServerInfo.Name, ",")
	for _, n := range env {
		switch n {
		case "PATH", "HOME", "TMPDIR", "LANG", "MCPCLIENT_FAKE", "SYSTEMROOT", "TEMP", "TMP", "USERPROFILE":
		default:
			t.Errorf("the child saw %s", n)
		}
	}
	if !strings.Contains(obs.ServerInfo.Name, "MCPCLIENT_FAKE") {
		t.Errorf("PassEnv not passed: %v", env)
	}
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return runtime.GOOS != "linux"
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

func TestStdioChildKilledAtEnd(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process groups")
	}
	start := time.Now()
	obs := mustList(t, stdioConfig("stubborn"))
	var pids []int
	for _, s := range strings.Split(strings.TrimPrefix(obs.ServerInfo.Name, "pids:"), ",") {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("server name %q", obs.ServerInfo.Name)
		}
		pids = append(pids, n)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("process %d outlived the run", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestStdioContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	start := time.Now()
	_, err := ListTools(ctx, stdioConfig("silent"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}
