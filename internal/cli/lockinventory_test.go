package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// lock add --from-inventory: the servers mcpdrift discover found, read
// again from their file; a header placeholder stored as ${env:NAME}, the
// value sent and never written; a stdio entry never run without
// --allow-config-commands, and then nothing is written at all.
func TestLockAddFromInventory(t *testing.T) {
	const secret = "inv-secret-token-0123456789abcdef"
	t.Setenv("ACME_TOKEN", secret)
	_, u := mock(t, mockserver.Config{RequireAuth: secret}, acmeV1)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "server.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	cfg := fmt.Sprintf(`{"mcpServers": {
  "acme": {"type": "http", "url": %q, "headers": {"Authorization": "Bearer ${ACME_TOKEN}"}},
  "local": {"command": %q, "args": ["--token", "${ACME_TOKEN}"], "env": {"API_KEY": "literal-value-0123456789"}}
}}`, u, script)
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(cfg), 0o644)
	inv := filepath.Join(dir, "inventory.json")
	if code, _, stderr := run(t, "", "discover", dir, "--format", "json", "-o", inv); code != 0 {
		t.Fatalf("discover: exit %d: %s", code, stderr)
	}
	lp := filepath.Join(dir, "mcpdrift.lock")
	// --all includes the stdio entry, which is not run: nothing is written.
	code, out1, stderr1 := run(t, "", "lock", "add", "--from-inventory", inv, "--all", "--lock", lp, "--by", "a@example.com")
	if code != 2 || !strings.Contains(stderr1, "--allow-config-commands") || !strings.Contains(stderr1, "nothing was written") {
		t.Fatalf("--all with a stdio entry: exit %d: %s", code, stderr1)
	}
	if _, err := os.Stat(lp); err == nil {
		t.Fatal("a refused inventory add wrote the lock")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the configuration's command was run without --allow-config-commands")
	}
	// The URL server alone.
	code, out2, stderr2 := run(t, "", "lock", "add", "--from-inventory", inv, "acme", "--lock", lp, "--by", "a@example.com")
	if code != 0 {
		t.Fatalf("add acme from the inventory: exit %d: %s", code, stderr2)
	}
	b, _ := os.ReadFile(lp)
	l, err := lock.Parse(b, lp)
	if err != nil || l.Server("acme") == nil || l.Server("acme").Source.Headers["Authorization"] != "Bearer ${env:ACME_TOKEN}" {
		t.Fatalf("the lock: %v\n%s", err, b)
	}
	code, out3, stderr3 := run(t, "", "lock", "check", "--lock", lp)
	if code != 0 {
		t.Errorf("lock check of the inventory's server: exit %d: %s", code, stderr3)
	}
	// An unknown server, and a server already in the lock.
	if code, _, stderr := run(t, "", "lock", "add", "--from-inventory", inv, "nope", "--lock", lp, "--by", "a"); code != 2 || !strings.Contains(stderr, "no server") {
		t.Errorf("unknown server: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "", "lock", "add", "--from-inventory", inv, "acme", "--lock", lp, "--by", "a"); code != 2 || !strings.Contains(stderr, "already in the lock") {
		t.Errorf("again: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "", "lock", "add", "--from-inventory", inv, "acme", "--url", u, "--lock", lp, "--by", "a"); code != 2 || !strings.Contains(stderr, "--from-inventory") {
		t.Errorf("with --url: exit %d: %s", code, stderr)
	}
	for _, s := range []string{string(b), out1, stderr1, out2, stderr2, out3, stderr3} {
		if strings.Contains(s, secret) || strings.Contains(s, "literal-value-0123456789") {
			t.Fatalf("a secret was written: %q", s)
		}
	}
}

// The source an inventory entry becomes: placeholders kept as ${env:},
// literal values not stored.
func TestInventorySource(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"${TOKEN}", "${env:TOKEN}"}, {"${env:TOKEN}", "${env:TOKEN}"}, {"Bearer ${TOKEN}", "Bearer ${env:TOKEN}"},
		{"Bearer sk-123", ""}, {"${TOKEN}x", ""}, {"${A} ${B}", ""}, {"${input:tok}", ""},
	} {
		m := placeholderValue.FindStringSubmatch(c.in)
		got := ""
		if m != nil {
			got = "${env:" + m[2] + "}"
			if m[1] != "" {
				got = m[1] + " " + got
			}
		}
		if got != c.want || (got != "" && !lock.HeaderTemplate(got)) {
			t.Errorf("%q -> %q, want %q", c.in, got, c.want)
		}
	}
}
