package peers

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The npm peers beside server-everything, at the versions
// scripts/install-test-peers.sh pins: Node.js 22 from the npm registry
// (node-<os>-<arch>; the two below need node >= 22, and the machine's may
// be older), the MCP Inspector and the official conformance suite.
const (
	peerNode        = "node"
	peerInspector   = "inspector"
	peerConformance = "conformance"

	inspectorPinned   = "2.12.0"         // keep in step with scripts/install-test-peers.sh
	conformancePinned = "0.2.0-alpha.12" // keep in step with scripts/install-test-peers.sh
)

var npmPeers struct {
	sync.Mutex
	done map[string]*npmPeerInstall
}

type npmPeerInstall struct {
	once  sync.Once
	entry string
	skip  string
}

// npmPeer installs the named peer once per test binary (a no-op when the
// cache has it) and returns its entry point: the node binary for
// peerNode, the JavaScript file to run with it for the others. It skips
// the test — or fails it under MCPDRIFT_PEERS_REQUIRE_NPM=1 — when npm is
// missing or the install fails.
func npmPeer(t *testing.T, name string) string {
	t.Helper()
	npmPeers.Lock()
	if npmPeers.done == nil {
		npmPeers.done = map[string]*npmPeerInstall{}
	}
	p := npmPeers.done[name]
	if p == nil {
		p = &npmPeerInstall{}
		npmPeers.done[name] = p
	}
	npmPeers.Unlock()
	p.once.Do(func() { p.entry, p.skip = installNPMPeer(name) })
	if p.skip != "" {
		msg := "npm peer " + name + " unavailable: " + p.skip
		if os.Getenv(envRequireNPM) == "1" {
			t.Fatalf("%s (%s=1 requires it)", msg, envRequireNPM)
		}
		t.Skip(msg)
	}
	return p.entry
}

// node22 is the pinned Node.js 22 the inspector and the conformance suite
// run on.
func node22(t *testing.T) string {
	t.Helper()
	return npmPeer(t, peerNode)
}

func installNPMPeer(name string) (entry, skip string) {
	if name != peerNode {
		if _, err := exec.LookPath("node"); err != nil {
			return "", "node is not installed (not in PATH)"
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return "", "bash is not installed, so scripts/install-test-peers.sh cannot run"
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "install-test-peers.sh"))
	if err != nil {
		return "", err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, script, name)
	cmd.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	recordTiming(name+": install-test-peers.sh (cached when fast)", took)
	if took > 5*time.Second {
		fmt.Fprintf(os.Stderr, "peers: installing the npm peer %s took %.1fs\n", name, took.Seconds())
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %v", installTimeout)
		}
		return "", fmt.Sprintf("scripts/install-test-peers.sh %s failed (%v): %s", name, err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	entry = strings.TrimSpace(lines[len(lines)-1])
	if st, err := os.Stat(entry); err != nil || st.IsDir() {
		return "", fmt.Sprintf("scripts/install-test-peers.sh %s printed %q, which is not a file", name, entry)
	}
	// The peer is at the version the tests are written for (the script
	// installs each version in a directory of its own), unless one was
	// asked for.
	for _, p := range []struct{ name, env, dir string }{
		{peerInspector, "MCPDRIFT_INSPECTOR_VERSION", "inspector-" + inspectorPinned},
		{peerConformance, "MCPDRIFT_CONFORMANCE_VERSION", "conformance-" + conformancePinned + "-"},
	} {
		if name == p.name && os.Getenv(p.env) == "" && !strings.Contains(filepath.ToSlash(entry), "/"+p.dir) {
			return "", fmt.Sprintf("scripts/install-test-peers.sh %s installed %q, not the version the tests pin (%s)", name, entry, p.dir)
		}
	}
	return entry, ""
}
