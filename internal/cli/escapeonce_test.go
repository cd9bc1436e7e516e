package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// TestErrorsEscapeOnce: a hostile value in an argument reaches stderr
// escaped exactly once, whichever command and layer refuses it. A message
// that one layer composed with Quote and the next escaped again shows
// "\\u001b", a backslash the value never held, to the reader (found in
// --store's scheme by FuzzParseURL, then in --profile and --rules).
func TestErrorsEscapeOnce(t *testing.T) {
	dir := t.TempDir()
	lockFile := filepath.Join(dir, "l.lock")
	signed := signLockFile(t, dir)
	obs := filepath.Join(dir, "obs.json")
	if code, _, stderr := run(t, "", "observe", "--server-id", "s", "--input", acmeV1, "-o", obs); code != 0 {
		t.Fatalf("observe: %d %s", code, stderr)
	}
	shown := 0
	for k, h := range []string{"x\x1by\xffz", "x\u202ey"} {
		missing := filepath.Join(dir, "no", h)
		// files whose contents hold the value: their parsers quote it
		key := writeFile(t, dir, fmt.Sprintf("key%d", k), []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"+h+"\n"))
		signers := writeFile(t, dir, fmt.Sprintf("signers%d", k), []byte("alice@example.com ssh-ed25519 "+h+"\n"))
		rules := writeFile(t, dir, fmt.Sprintf("rules%d.yaml", k), []byte("version: 1\nrules:\n  - action_class: x\n    family: iam\n    match:\n      - "+yamlString(strings.ToValidUTF8(h, "")+"[")+"\n"))
		for _, args := range [][]string{
			{"diff", "--profile", h, "/dev/null", "/dev/null"},
			{"diff", missing, missing},
			{"drift", "--profile", h, "/dev/null", "--url", "http://127.0.0.1:1/"},
			{"drift", missing, "--url", "http://127.0.0.1:1/"},
			{"drift", "--rules", missing, "/dev/null", "--url", "http://127.0.0.1:1/"},
			{"drift", "--ca-file", missing, "/dev/null", "--url", "https://127.0.0.1:1/"},
			{"drift", "--suppressions", missing, "/dev/null", "--url", "http://127.0.0.1:1/"},
			{"drift", "--otlp-endpoint", h, "/dev/null", "--url", "http://127.0.0.1:1/"},
			{"drift", "--client-capabilities", h, "/dev/null", "--url", "http://127.0.0.1:1/"},
			{"drift", "--mcp-config", missing, "/dev/null", "--server", "s"},
			{"gate", "--decision-profile", h, "--observed", obs, "--declared", acmeV1},
			{"gate", "--policy", missing, "--observed", obs},
			{"gate", "--rules", missing, "--observed", obs, "--declared", acmeV1},
			{"scan", "--rules", rules, "--url", "http://127.0.0.1:1/"},
			{"observe", "--server-id", "s", "--input", missing},
			{"observe", "--server-id", "s", "--input", "/dev/null", "--rules", missing},
			{"pin", "--server-id", "s", "--input", missing},
			{"pin", "--server-id", "s", "--url", "http://127.0.0.1:1/", "--ca-file", missing},
			{"scan", "--store", h + ":x", "--url", "http://127.0.0.1:1/"},
			{"scan", "--rules", missing, "--url", "http://127.0.0.1:1/"},
			{"scan", "--keep", h, "--url", "http://127.0.0.1:1/"},
			{"scan", "--inventory", missing},
			{"history", "s", "--store", h + ":x"},
			{"mock-server", "--manifest", missing},
			{"mock-server", "--listen", h},
			{"lock", "check", "--lock", missing},
			{"lock", "sign", "--lock", missing, "--key", missing},
			{"review", "s", "--lock", missing},
			{"discover", missing},
			{"watch", "--lock", missing},
			{"lock", "sign", "--lock", signed, "--key", key},
			{"lock", "check", "--lock", signed, "--allowed-signers", signers},
			{"lock", "add", "s", "--url", "http://127.0.0.1:1/", "--lock", lockFile, "--rules", missing},
		} {
			_, _, stderr := run(t, "", args...)
			// Go's %q dialect (\x1b for a control character) is not
			// safetext's (\u001b; \xNN is an invalid byte).
			if strings.Contains(stderr, `\\`) || strings.Contains(stderr, `\x1b`) {
				t.Errorf("%q: escaped twice: %s", args, stderr)
			}
			if !safetext.IsSafe(strings.NewReplacer("\n", "", `\`, "").Replace(stderr)) {
				t.Errorf("%q: unescaped: %q", args, stderr)
			}
			if safetext.Shows(stderr, h) {
				shown++
			}
		}
	}
	// Most refusals name the value; a check that never saw one escaped
	// would pass on anything.
	if shown < 30 {
		t.Errorf("only %d refusals show the hostile value escaped", shown)
	}
}

// yamlString is s as a YAML double-quoted scalar (JSON's string syntax is
// YAML's).
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
