package peers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpclient"
)

// The npm reference server @modelcontextprotocol/server-everything, at the
// version scripts/install-test-peers.sh pins, on the TypeScript SDK version
// it pins (1.32.2). It is legacy-only (that SDK stops at 2025-11-25): server/discover is answered with
// -32601 on stdio and with HTTP 400 -32000 "Server not initialized" over
// HTTP, and the client falls back to initialize.
const (
	everythingPinned = "2026.8.31" // keep in step with scripts/install-test-peers.sh
	// envRequireNPM=1 turns "npm peer unavailable" from a skip into a failure.
	envRequireNPM           = "MCPDRIFT_PEERS_REQUIRE_NPM"
	everythingLegacyVersion = "2025-11-25"
	installTimeout          = 5 * time.Minute
	startupTimeout          = 20 * time.Second
	minNodeMajor            = 18
)

// everythingTools are the tools the pinned version lists to a client that
// declares no capabilities: 12 registered at start, plus
// simulate-research-query, registered once notifications/initialized
// arrives (the other late tools need roots, sampling or elicitation).
var everythingTools = []string{
	"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
	"get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
	"toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
	"simulate-research-query",
}

var everything struct {
	once        sync.Once
	node, entry string
	version     string
	skip        string // why the peer is unavailable
}

// everythingPeer installs the npm peer once per test binary (a no-op when
// the cache has it) and returns node and the entry point. It skips the test
// — or fails it under MCPDRIFT_PEERS_REQUIRE_NPM=1 — when node or npm is
// missing or the install fails.
func everythingPeer(t *testing.T) (node, entry string) {
	t.Helper()
	everything.once.Do(installEverything)
	if everything.skip != "" {
		msg := "npm peer @modelcontextprotocol/server-everything unavailable: " + everything.skip
		if os.Getenv(envRequireNPM) == "1" {
			t.Fatalf("%s (%s=1 requires it)", msg, envRequireNPM)
		}
		t.Skip(msg)
	}
	return everything.node, everything.entry
}

func installEverything() {
	node, err := exec.LookPath("node")
	if err != nil {
		everything.skip = "node is not installed (not in PATH)"
		return
	}
	if major, v, err := nodeMajor(node); err != nil || major < minNodeMajor {
		everything.skip = fmt.Sprintf("node %s is too old or unusable (need >= %d): %v", v, minNodeMajor, err)
		return
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		everything.skip = "bash is not installed, so scripts/install-test-peers.sh cannot run"
		return
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "install-test-peers.sh"))
	if err != nil {
		everything.skip = err.Error()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, script)
	cmd.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	recordTiming("server-everything: install-test-peers.sh (cached when fast)", took)
	if took > 5*time.Second {
		fmt.Fprintf(os.Stderr, "peers: installing the npm peer took %.1fs\n", took.Seconds())
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %v", installTimeout)
		}
		everything.skip = fmt.Sprintf("scripts/install-test-peers.sh failed (%v): %s", err, strings.TrimSpace(stderr.String()))
		return
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	entry := strings.TrimSpace(lines[len(lines)-1])
	if st, err := os.Stat(entry); err != nil || st.IsDir() {
		everything.skip = fmt.Sprintf("scripts/install-test-peers.sh printed %q, which is not a file", entry)
		return
	}
	everything.node, everything.entry = node, entry
	everything.version = os.Getenv("MCPDRIFT_EVERYTHING_VERSION")
	if everything.version == "" {
		everything.version = everythingPinned
	}
}

func nodeMajor(node string) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	v := strings.TrimSpace(string(out))
	if err != nil {
		return 0, v, err
	}
	major, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(v, "v"), ".", 2)[0])
	return major, v, err
}

// checkEverythingTools: the pinned version lists exactly everythingTools;
// another version (MCPDRIFT_EVERYTHING_VERSION) at least the 12 it
// registers at start.
func checkEverythingTools(t *testing.T, label string, names []string) {
	t.Helper()
	if everything.version == everythingPinned {
		got, want := slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(everythingTools))
		if !slices.Equal(got, want) {
			t.Errorf("%s: served tools\n got %d %v\nwant %d %v", label, len(got), got, len(want), want)
		}
		return
	}
	for _, n := range everythingTools[:12] {
		if !slices.Contains(names, n) {
			t.Errorf("%s: %s %s does not list %q: %v", label, "server-everything", everything.version, n, names)
		}
	}
}

// TestEverythingStdio: `node dist/index.js stdio`.
func TestEverythingStdio(t *testing.T) {
	node, entry := everythingPeer(t)
	start := time.Now()
	defer func() { recordTiming("server-everything stdio: whole test", time.Since(start)) }()
	label := "server-everything stdio"
	argv := []string{node, entry, "stdio"}
	obs, tl := observe(t, label, mcpclient.Config{Command: argv})
	checkEverythingTools(t, label, toolNames(tl))
	checkEra(t, label, obs, mcpclient.EraLegacy, "", everythingLegacyVersion)
	if everything.version == everythingPinned {
		// execution (2025-11-25) is a field the go-sdk client's Tool type
		// drops; the transcript keeps the bytes as served.
		checkToolBytes(t, label, tl, "simulate-research-query", `"execution":{"taskSupport":"required"}`)
	}
	pinned := saveManifest(t, "server-everything", obs)
	d := drift(t, label, pinned, append([]string{"--stdio", "--"}, argv...)...)
	checkClean(t, label, d, len(tl.Tools), ruleLegacyServer)
	if d.rep.Target.Class != "stdio" {
		t.Errorf("%s: target %+v", label, d.rep.Target)
	}
}

// TestEverythingStreamableHTTP: `PORT=n node dist/index.js streamableHttp`,
// bound to loopback.
func TestEverythingStreamableHTTP(t *testing.T) {
	node, entry := everythingPeer(t)
	start := time.Now()
	defer func() { recordTiming("server-everything http: whole test", time.Since(start)) }()
	label := "server-everything http"
	url := startEverythingHTTP(t, node, entry)
	obs, tl := observe(t, label, mcpclient.Config{BaseURL: url})
	checkEverythingTools(t, label, toolNames(tl))
	checkEra(t, label, obs, mcpclient.EraLegacy, "", everythingLegacyVersion)
	if everything.version == everythingPinned {
		// execution (2025-11-25) is a field the go-sdk client's Tool type
		// drops; the transcript keeps the bytes as served.
		checkToolBytes(t, label, tl, "simulate-research-query", `"execution":{"taskSupport":"required"}`)
	}
	pinned := saveManifest(t, "server-everything", obs)
	checkClean(t, label, drift(t, label, pinned, "--url", url), len(tl.Tools), ruleAnonymousList, ruleLegacyServer)
}

// loopbackPreload is loaded into the HTTP server with node --require. The
// server calls app.listen(PORT) without a host, which binds every
// interface; this makes every listen without a host bind 127.0.0.1 only,
// since the tests talk to loopback and nothing else should reach the
// server. It also exits when the test binary that started it is gone (the
// parent changes), so a crashed test run leaves no server behind.
const loopbackPreload = `'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  if ((typeof port === 'number' || (typeof port === 'string' && /^[0-9]+$/.test(port))) && typeof args[1] !== 'string') {
    args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 500).unref();
`

var errAddrInUse = errors.New("port in use")

// startEverythingHTTP starts the HTTP server on a free loopback port and
// waits until it accepts connections; it is killed when the test ends.
func startEverythingHTTP(t *testing.T, node, entry string) string {
	t.Helper()
	return startEverything(t, node, entry, "streamableHttp", "/mcp")
}

// startEverything starts `node entry MODE` (streamableHttp, or sse for the
// deprecated HTTP+SSE transport) and returns the URL of path on it.
func startEverything(t *testing.T, node, entry, mode, path string) string {
	t.Helper()
	preload := filepath.Join(t.TempDir(), "loopback.cjs")
	if err := os.WriteFile(preload, []byte(loopbackPreload), 0o644); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		url, err := launchEverythingHTTP(t, node, preload, entry, mode, path)
		if err == nil {
			return url
		}
		if !errors.Is(err, errAddrInUse) || attempt == 3 {
			t.Fatalf("server-everything %s: %v", mode, err)
		}
	}
}

func launchEverythingHTTP(t *testing.T, node, preload, entry, mode, path string) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))

	cmd := exec.Command(node, "--require", preload, entry, mode)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "PORT=" + strconv.Itoa(port)}
	out := &tailBuffer{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, out // the server logs every request to stdout: drain it
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node: %v", err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	stop := func() {
		_ = cmd.Process.Kill()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("server-everything (pid %d) did not exit after SIGKILL", cmd.Process.Pid)
		}
	}
	deadline := time.Now().Add(startupTimeout)
	for {
		select {
		case <-done:
			if s := out.String(); strings.Contains(s, "EADDRINUSE") || strings.Contains(s, "already in use") {
				return "", fmt.Errorf("%w: %d", errAddrInUse, port)
			}
			return "", fmt.Errorf("exited before listening (%v): %s", waitErr, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return "", fmt.Errorf("not listening on %s after %v: %s", addr, startupTimeout, out.String())
		}
	}
	recordTiming("server-everything "+mode+": startup", time.Since(start))
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("server-everything output (tail):\n%s", out.String())
		}
	})
	return "http://" + addr + path, nil
}
