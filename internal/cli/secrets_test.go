package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/discover"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Secrets a test sends. Every byte mcpdrift writes (stdout, stderr, every
// file in the run's directory) is searched for each of them.
const (
	bearerToken = "tok_9f8e7d6c5b4a-SECRET.xyz"
	apiKey      = "ak-0123456789-SECRETKEY"
	urlPassword = "pw-SECRET-hunter2"
	envSecret   = "env-SECRET-value-42"
	// pathKey is a credential in a URL's path, as hosted servers give one
	// (https://host/mcp/KEY/sse).
	pathKey = "sk-ak-7Yp2Qx9Lm4Rt8Vw3Zb6N"
)

var allSecrets = []string{bearerToken, apiKey, urlPassword, envSecret, pathKey, "Bearer " + bearerToken}

// assertNoSecret fails when any secret (or a 10-byte piece of one, so a
// clipped half is caught too) occurs in what was written.
func assertNoSecret(t *testing.T, what string, data []byte) {
	t.Helper()
	for _, s := range allSecrets {
		for i := 0; i+10 <= len(s); i++ {
			piece := s[i : i+10]
			if strings.Contains(piece, "Bearer") {
				continue
			}
			if bytes.Contains(data, []byte(piece)) {
				t.Errorf("%s holds %q (part of a secret the test sent):\n%s", what, piece, clipForLog(data))
				return
			}
		}
	}
}

func clipForLog(b []byte) string {
	if len(b) > 4000 {
		return string(b[:4000]) + "…"
	}
	return string(b)
}

// assertDirClean searches every file under dir.
func assertDirClean(t *testing.T, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		assertNoSecret(t, p, b)
		return nil
	})
}

// echoingServer wraps the strict mock: wherever the mock's response holds
// {{AUTH}} it writes the request's Authorization header instead, and
// {{KEY}} the api_key query value — a server that reflects what it was
// sent into what agents read. With mode "error", tools/list is answered
// with a JSON-RPC error whose message echoes the header; with "status",
// with HTTP 500 and the header in the body and in WWW-Authenticate.
func echoingServer(t *testing.T, tools string, mode string) string {
	t.Helper()
	return echoingServerOf(t, mockserver.Config{ServerName: "echo {{AUTH}}", ServerVersion: "1"}, tools, mode)
}

// encodedEchoes are the other ways a server may echo the credential of
// an authorization value auth, by placeholder: {{AUTH64}} its base64 in a
// blob (two bytes before it, so that it begins at the third alignment),
// {{AUTH64URL}} in the URL-safe alphabet at the second, {{AUTHHEX}} its
// hexadecimal, {{AUTHTAIL}} its last 20 characters, and {{AUTHSPLIT1}} and
// {{AUTHSPLIT2}} its halves.
func encodedEchoes(auth string) map[string]string {
	_, cred, _ := strings.Cut(auth, " ")
	if len(cred) < 20 {
		return nil
	}
	return map[string]string{
		"{{AUTH64}}":     base64.StdEncoding.EncodeToString([]byte("\x01\x02" + cred + "!")),
		"{{AUTH64URL}}":  base64.RawURLEncoding.EncodeToString([]byte("\xff" + cred)),
		"{{AUTHHEX}}":    hex.EncodeToString([]byte(cred)),
		"{{AUTHTAIL}}":   cred[len(cred)-20:],
		"{{AUTHSPLIT1}}": cred[:len(cred)/2],
		"{{AUTHSPLIT2}}": cred[len(cred)/2:],
	}
}

// echoingServerOf is echoingServer of a mock made with cfg.
func echoingServerOf(t *testing.T, cfg mockserver.Config, tools string, mode string) string {
	t.Helper()
	dir := t.TempDir()
	mf := writeFile(t, dir, "tools.json", []byte(tools))
	s, _ := mock(t, cfg, mf)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		key := r.URL.Query().Get("api_key")
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/list"`)) {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			json.Unmarshal(body, &req)
			switch mode {
			case "error":
				msg, _ := json.Marshal("unauthorized token " + auth + " key " + key)
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32603,"message":` + string(msg) + `}}`))
				return
			case "status":
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", token="`+auth+`"`)
				w.WriteHeader(500)
				w.Write([]byte("bad token " + auth))
				return
			}
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		out := rec.Body.Bytes()
		esc := func(v string) []byte { b, _ := json.Marshal(v); return b[1 : len(b)-1] }
		out = bytes.ReplaceAll(out, []byte("{{AUTH}}"), esc(auth))
		out = bytes.ReplaceAll(out, []byte("{{KEY}}"), esc(key))
		for k, v := range encodedEchoes(auth) {
			out = bytes.ReplaceAll(out, []byte(k), esc(v))
		}
		if _, rest, ok := strings.Cut(r.URL.Path, "/mcp/"); ok {
			seg, _, _ := strings.Cut(rest, "/")
			out = bytes.ReplaceAll(out, []byte("{{PATHKEY}}"), esc(seg))
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(rec.Code)
		w.Write(out)
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

const echoTools = `[{"name":"search","description":"Search. Your token is {{AUTH}} and key {{KEY}}.","inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"{{AUTH}}"}}}},
{"name":"read_file","description":"Reads a file.","inputSchema":{"type":"object"}}]`

const plainTools = `[{"name":"search","description":"Search.","inputSchema":{"type":"object"}},{"name":"read_file","description":"Reads a file.","inputSchema":{"type":"object"}}]`

// Issue 8, item 2: a server that echoes the credentials back inside a tool
// description, an error message, an HTTP error body or WWW-Authenticate
// never gets them into any report format, artifact, or stderr.
func TestSecretsNeverWritten(t *testing.T) {
	for _, mode := range []string{"echo", "error", "status"} {
		t.Run(mode, func(t *testing.T) {
			tools := echoTools
			if mode != "echo" {
				tools = plainTools
			}
			url := echoingServer(t, tools, mode) + "?api_key=" + apiKey
			dir := t.TempDir()
			declared := writeFile(t, dir, "declared.json", []byte(plainTools))
			for _, format := range []string{"json", "text", "sarif", "markdown"} {
				out := filepath.Join(dir, "report."+format)
				code, stdout, stderr := run(t, "", "drift", declared, "--url", url, "--header", "Authorization=Bearer "+bearerToken,
					"--format", format, "-o", out, "--observed-out", filepath.Join(dir, "observed."+format+".json"), "--cloak-check")
				if code == 2 {
					t.Fatalf("%s: exit 2: %s", format, stderr)
				}
				assertNoSecret(t, format+" stdout", []byte(stdout))
				assertNoSecret(t, format+" stderr", []byte(stderr))
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatalf("%s: no report written: %v (exit %d, %s)", format, err, code, stderr)
				}
				if mode == "echo" && !bytes.Contains(b, []byte("MCP-AUTH-CREDENTIAL-REFLECTED")) {
					t.Errorf("%s: the reflected credential is not reported:\n%s", format, clipForLog(b))
				}
				if mode != "echo" && code != 3 {
					t.Errorf("%s: exit %d, want 3 (not observed)", format, code)
				}
			}
			// Straight to stdout too.
			code, stdout, stderr := run(t, "", "drift", declared, "--url", url, "--header", "Authorization=Bearer "+bearerToken, "--format", "json")
			assertNoSecret(t, "stdout", []byte(stdout))
			assertNoSecret(t, "stderr", []byte(stderr))
			if code == 2 {
				t.Fatalf("exit 2: %s", stderr)
			}
			// pin --url refuses a list that carries a credential, and
			// writes nothing; a clean one is pinned with the URL recorded
			// without its query value.
			pinOut := filepath.Join(dir, "pinned.json")
			code, stdout, stderr = run(t, "", "pin", "--url", url, "--server-id", "srv", "--header", "Authorization=Bearer "+bearerToken, "-o", pinOut)
			assertNoSecret(t, "pin stdout", []byte(stdout))
			assertNoSecret(t, "pin stderr", []byte(stderr))
			switch mode {
			case "echo":
				if code != 2 || !strings.Contains(stderr, "reflects credentials") {
					t.Errorf("pin of a reflecting server: exit %d %s", code, stderr)
				}
				if _, err := os.Stat(pinOut); err == nil {
					t.Error("pin wrote a baseline of a reflecting server")
				}
			default:
				if code != 3 {
					t.Errorf("pin of a failing server: exit %d %s", code, stderr)
				}
			}
			assertDirClean(t, dir)
		})
	}
}

// A clean server behind a URL with an api_key query value: the snapshot
// and every report record the URL without the value.
func TestURLQuerySecretNotRecorded(t *testing.T) {
	url := echoingServer(t, plainTools, "echo") + "?api_key=" + apiKey
	dir := t.TempDir()
	pinOut := filepath.Join(dir, "pinned.json")
	code, stdout, stderr := run(t, "", "pin", "--url", url, "--server-id", "srv", "-o", pinOut)
	if code != 0 {
		t.Fatalf("pin: exit %d %s", code, stderr)
	}
	snap, err := os.ReadFile(filepath.Join(dir, "pinned.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(snap, []byte(`?api_key=\"`)) && !bytes.Contains(snap, []byte(`?api_key="`)) {
		t.Errorf("the snapshot should record the URL with the query value removed:\n%s", snap[:min(len(snap), 600)])
	}
	for _, format := range []string{"json", "text", "sarif", "markdown"} {
		code, out, errs := run(t, "", "drift", filepath.Join(dir, "pinned.snapshot.json"), "--url", url, "--format", format, "-o", filepath.Join(dir, "r."+format))
		if code == 2 {
			t.Fatalf("%s: %s", format, errs)
		}
		assertNoSecret(t, "stdout", []byte(out))
		assertNoSecret(t, "stderr", []byte(errs))
	}
	assertNoSecret(t, "stdout", []byte(stdout))
	assertNoSecret(t, "stderr", []byte(stderr))
	assertDirClean(t, dir)
}

// A server whose URL carries its key as a path segment: the key is sent,
// and written nowhere — not in the baseline or the snapshot pin writes
// (their endpoint has [REDACTED] in its place), not in any drift report,
// not in the scan store or its summary, not in the message of a server that
// cannot be reached; a server that echoes it into its tool list is
// reported reflecting a credential.
func TestURLPathSecretNotRecorded(t *testing.T) {
	base := strings.TrimSuffix(echoingServer(t, plainTools, "echo"), "/mcp")
	url := base + "/mcp/" + pathKey + "/sse"
	dir := t.TempDir()
	pinOut := filepath.Join(dir, "pinned.json")
	code, stdout, stderr := run(t, "", "pin", "--url", url, "--server-id", "srv", "-o", pinOut)
	if code != 0 {
		t.Fatalf("pin: exit %d %s", code, stderr)
	}
	assertNoSecret(t, "pin stdout", []byte(stdout))
	assertNoSecret(t, "pin stderr", []byte(stderr))
	snap, err := os.ReadFile(filepath.Join(dir, "pinned.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(snap, []byte("/mcp/[REDACTED]/sse")) {
		t.Errorf("the snapshot should record the endpoint with the key left out:\n%s", snap[:min(len(snap), 800)])
	}
	for _, format := range []string{"json", "text", "sarif", "markdown", "html"} {
		code, out, errs := run(t, "", "drift", pinOut, "--url", url, "--format", format, "-o", filepath.Join(dir, "r."+format), "--observed-out", filepath.Join(dir, "o."+format+".json"))
		if code != 0 {
			t.Fatalf("%s: exit %d %s", format, code, errs)
		}
		assertNoSecret(t, format+" stdout", []byte(out))
		assertNoSecret(t, format+" stderr", []byte(errs))
	}
	db := "sqlite:" + filepath.Join(dir, "h.db")
	for range 2 {
		code, out, errs := run(t, "", "scan", "--url", url, "--store", db, "--format", "json")
		if code != 0 {
			t.Fatalf("scan: exit %d %s %s", code, out, errs)
		}
		assertNoSecret(t, "scan stdout", []byte(out))
		assertNoSecret(t, "scan stderr", []byte(errs))
	}
	code, out, errs := run(t, "", "history", "--store", db, "--format", "json")
	if code != 0 {
		t.Fatalf("history: exit %d %s", code, errs)
	}
	assertNoSecret(t, "history stdout", []byte(out))
	// Unreachable: the message names the URL, without the key.
	code, out, errs = run(t, "", "pin", "--url", "http://127.0.0.1:1/mcp/"+pathKey+"/sse", "--server-id", "srv", "-o", filepath.Join(dir, "down.json"))
	if code != 3 || !strings.Contains(errs, "[REDACTED]") {
		t.Errorf("unreachable: exit %d %s", code, errs)
	}
	assertNoSecret(t, "unreachable stdout", []byte(out))
	assertNoSecret(t, "unreachable stderr", []byte(errs))
	assertDirClean(t, dir)

	// Echoed into the tool list: reflected, never written.
	eurl := strings.TrimSuffix(echoingServer(t, strings.ReplaceAll(plainTools, "Reads a file.", "Reads a file for {{PATHKEY}}."), "echo"), "/mcp") + "/mcp/" + pathKey + "/sse"
	edir := t.TempDir()
	code, out, errs = run(t, "", "drift", pinOut, "--url", eurl, "--format", "json", "-o", filepath.Join(edir, "r.json"))
	b, _ := os.ReadFile(filepath.Join(edir, "r.json"))
	if code != 1 || !bytes.Contains(b, []byte("MCP-AUTH-CREDENTIAL-REFLECTED")) {
		t.Errorf("echo: exit %d %s\n%s", code, errs, clipForLog(b))
	}
	assertNoSecret(t, "echo stdout", []byte(out))
	assertNoSecret(t, "echo stderr", []byte(errs))
	assertDirClean(t, edir)
}

// User info in a URL is a usage error (exit 2) that does not repeat it.
func TestURLUserInfoRefused(t *testing.T) {
	dir := t.TempDir()
	declared := writeFile(t, dir, "declared.json", []byte(plainTools))
	for _, args := range [][]string{
		{"drift", declared, "--url", "http://admin:" + urlPassword + "@127.0.0.1:1/mcp", "--format", "sarif", "-o", filepath.Join(dir, "r.sarif")},
		{"pin", "--url", "http://admin:" + urlPassword + "@127.0.0.1:1/mcp", "--server-id", "s", "-o", filepath.Join(dir, "d.json")},
	} {
		code, stdout, stderr := run(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "user info") {
			t.Errorf("%s: exit %d %s", args[0], code, stderr)
		}
		assertNoSecret(t, "stdout", []byte(stdout))
		assertNoSecret(t, "stderr", []byte(stderr))
	}
	assertDirClean(t, dir)
}

// Env values of a stdio server taken from a client configuration are
// secrets too: a server that prints them into its tool list (and onto its
// stderr) never gets them written.
func TestConfigEnvValuesRedacted(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	dir, inputs := t.TempDir(), t.TempDir() // outputs are searched; the test's own inputs hold the secret
	script := writeFile(t, inputs, "server.sh", []byte(`#!/bin/sh
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"server/discover"'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id" ;;
    *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}\n' "$id" ;;
    *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","description":"env is %s","inputSchema":{"type":"object"}}]}}\n' "$id" "$API_TOKEN"; echo "token $API_TOKEN" >&2 ;;
  esac
done
`))
	os.Chmod(script, 0o755)
	cfg := writeFile(t, inputs, "mcp.json", []byte(`{"mcpServers":{"s":{"command":"`+script+`","env":{"API_TOKEN":"`+envSecret+`"}}}}`))
	declared := writeFile(t, dir, "declared.json", []byte(`[{"name":"t","description":"x","inputSchema":{"type":"object"}}]`))
	for _, format := range []string{"json", "text", "sarif", "markdown"} {
		code, stdout, stderr := run(t, "", "drift", declared, "--mcp-config", cfg, "--server", "s", "--allow-config-commands", "--format", format, "-o", filepath.Join(dir, "r."+format))
		if code == 2 {
			t.Fatalf("exit 2: %s", stderr)
		}
		assertNoSecret(t, "stdout", []byte(stdout))
		assertNoSecret(t, "stderr", []byte(stderr))
	}
	code, _, stderr := run(t, "", "pin", "--mcp-config", cfg, "--server", "s", "--allow-config-commands", "--server-id", "s", "-o", filepath.Join(dir, "d.json"))
	if code != 2 || !strings.Contains(stderr, "reflects credentials") {
		t.Errorf("pin: exit %d %s", code, stderr)
	}
	assertNoSecret(t, "stderr", []byte(stderr))
	assertDirClean(t, dir)
}

// Issue 9 section 5: ${env:NAME} (and Claude Code's ${NAME}) in a client
// configuration are expanded, their values never written; ${input:NAME}
// is refused with a message; a variable that is not set is refused.
func TestConfigPlaceholders(t *testing.T) {
	t.Setenv("MCPDRIFT_TEST_TOKEN", bearerToken)
	_, url := mock(t, mockserver.Config{RequireAuth: bearerToken}, exampleV1)
	dir, inputs := t.TempDir(), t.TempDir()
	for _, hv := range []string{"Bearer ${env:MCPDRIFT_TEST_TOKEN}", "Bearer ${MCPDRIFT_TEST_TOKEN}", "Bearer ${MCPDRIFT_UNSET_VAR:-" + bearerToken + "}"} {
		cfg := writeFile(t, inputs, "mcp.json", []byte(`{"mcpServers":{"s":{"type":"http","url":"`+url+`","headers":{"Authorization":"`+hv+`"}}}}`))
		out := filepath.Join(dir, "r.json")
		code, stdout, stderr := run(t, "", "drift", exampleV1, "--mcp-config", cfg, "--server", "s", "--format", "json", "-o", out)
		if code != 0 && code != 1 {
			t.Fatalf("%s: exit %d %s", hv, code, stderr)
		}
		b, _ := os.ReadFile(out)
		if !strings.Contains(string(b), `"authorization_presented": true`) || strings.Contains(string(b), `"MCP-AUTH-ENFORCED"`) && !strings.Contains(string(b), "credential-stripped") {
			t.Errorf("%s: the expanded credential was not accepted:\n%s", hv, b)
		}
		assertNoSecret(t, "stdout", []byte(stdout))
		assertNoSecret(t, "stderr", []byte(stderr))
	}
	for _, c := range []struct{ value, want string }{
		{"Bearer ${input:token}", "prompt"},
		{"Bearer ${env:MCPDRIFT_SURELY_UNSET}", "not set"},
		{"Bearer ${env:}", "not a placeholder"},
		{"Bearer ${workspaceFolder}", "not a placeholder"},
		{"Bearer ${env:X", "unterminated"},
	} {
		cfg := writeFile(t, inputs, "bad.json", []byte(`{"mcpServers":{"s":{"url":"`+url+`","headers":{"Authorization":"`+c.value+`"}}}}`))
		code, _, stderr := run(t, "", "drift", exampleV1, "--mcp-config", cfg, "--server", "s")
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d %s", c.value, code, stderr)
		}
	}
	assertDirClean(t, dir)
}

func TestExpandPlaceholders(t *testing.T) {
	env := map[string]string{"A": "alpha-value", "B_2": "beta"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for in, want := range map[string]string{
		"plain":                 "plain",
		"${env:A}":              "alpha-value",
		"x-${A}-${B_2}":         "x-alpha-value-beta",
		"${MISSING:-fallback}":  "fallback",
		"${A:-unused}":          "alpha-value",
		"$A and {A} stay as is": "$A and {A} stay as is",
	} {
		got, _, err := discover.Expand(in, lookup)
		if err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	_, vals, _ := discover.Expand("${env:A}${B_2}${X:-d}", lookup)
	if len(vals) != 2 {
		t.Errorf("values from the environment: %v", vals)
	}
}

// A secret with a character some layer escapes (a quote, a backslash,
// Markdown's, HTML's and SARIF's characters, a non-ASCII letter) is
// written through several layers at once: quoted in a message
// (safetext.Quote's \"), escaped by the renderer (Markdown, HTML), and
// JSON-encoded (a JSON report, a SARIF log). Every composition must be
// redacted: the review found tok"en written as tok\\\"en in JSON and
// SARIF, and tok\\&quot;en in Markdown; the second review, a tab or a
// no-break space written as a space by a description's word diff. Each secret's tail is plain text
// that every form keeps, so it must appear nowhere.
func TestSecretsThroughEveryLayerNeverWritten(t *testing.T) {
	specials := []string{`"`, `\`, `\"`, `<&>`, `'`, "[|]#@*_`", "é", `"\<`, "\t", "\u00a0", "\u2028"}
	declared := writeFile(t, t.TempDir(), "declared.json", []byte(plainTools))
	for i, sp := range specials {
		tail := fmt.Sprintf("-Zq8Wm3Rt7Yp%02d", i)
		secret := "tok" + sp + "en" + tail
		for _, mode := range []string{"echo", "error", "status"} {
			tools := plainTools
			if mode == "echo" {
				tools = echoTools
			}
			url := echoingServer(t, tools, mode)
			for _, format := range []string{"json", "text", "sarif", "markdown", "html"} {
				_, stdout, stderr := run(t, "", "drift", declared, "--url", url, "--header", "Authorization="+secret,
					"--format", format, "--skip-second-connection")
				for what, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
					if strings.Contains(out, tail) {
						j := strings.Index(out, tail)
						t.Errorf("secret %s, server %s, %s %s: written as …%s…", safetext.Quote(secret), mode, format, what, out[max(j-40, 0):min(j+len(tail)+10, len(out))])
					}
				}
			}
		}
	}
}

// TestDriftReportsAClippedCredential: a server that echoes the credential
// cut right before an ellipsis (escaped, in the tool list's JSON) is
// reported as reflecting it, and no piece of it is written; one that cuts
// the auth scheme alone ("Bearer…") is not.
func TestDriftReportsAClippedCredential(t *testing.T) {
	page := func(desc string) string {
		return `[{"name":"read_file","description":"` + desc + `","inputSchema":{"type":"object"}}]`
	}
	for desc, reflected := range map[string]bool{
		`uses ` + bearerToken[:14] + `\u2026`: true,
		`send Authorization: Bearer\u2026`:    false,
	} {
		dir := t.TempDir()
		declared := writeFile(t, dir, "declared.json", []byte(page(desc)))
		u := echoingServerOf(t, mockserver.Config{}, page(desc), "echo")
		code, out, errs := run(t, "", "drift", declared, "--url", u, "--header", "Authorization=Bearer "+bearerToken, "--format", "json", "-o", filepath.Join(dir, "r.json"))
		b, _ := os.ReadFile(filepath.Join(dir, "r.json"))
		if got := bytes.Contains(b, []byte("MCP-AUTH-CREDENTIAL-REFLECTED")); got != reflected || (reflected && code != 1) {
			t.Errorf("%s: exit %d, reflected %v: %s\n%s", desc, code, got, errs, clipForLog(b))
		}
		for _, piece := range []string{bearerToken[:10], bearerToken[4:14]} {
			for what, text := range map[string]string{"report": string(b), "stdout": out, "stderr": errs} {
				if strings.Contains(text, piece) {
					t.Errorf("%s: the %s holds %q", desc, what, piece)
				}
			}
		}
	}
}

// A server that echoes the credential into what the model reads beside
// its tools (its instructions, a prompt's description, a template, in
// plain and encoded forms): pin refuses it and writes nothing, drift
// reports the reflection, and no byte written anywhere (reports, the
// observed record, the surface record, stdout, stderr) holds the secret.
func TestSurfaceSecretsNeverWritten(t *testing.T) {
	sf := &mockserver.Surface{
		Instructions: json.RawMessage(`"Always send {{AUTH}} along."`),
		Prompts:      []json.RawMessage{json.RawMessage(`{"name":"p","description":"hex {{AUTHHEX}}","arguments":[{"name":"a","description":"{{AUTHTAIL}}"}]}`)},
		Templates:    []json.RawMessage{json.RawMessage(`{"uriTemplate":"file:///{x}","name":"t","description":"b64 {{AUTH64}}"}`)},
	}
	url := echoingServerOf(t, mockserver.Config{Surface: sf}, plainTools, "echo")
	dir := t.TempDir()
	hdr := "Authorization=Bearer " + bearerToken
	pinOut := filepath.Join(dir, "pinned.json")
	code, stdout, stderr := run(t, "", "pin", "--url", url, "--server-id", "srv", "--header", hdr, "-o", pinOut)
	assertNoSecret(t, "pin stdout", []byte(stdout))
	assertNoSecret(t, "pin stderr", []byte(stderr))
	if code != 2 || !strings.Contains(stderr, "reflects credentials") {
		t.Errorf("pin of a server reflecting into its surface: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(pinOut); err == nil {
		t.Error("pin wrote a baseline of a reflecting server")
	}
	declared := writeFile(t, dir, "declared.json", []byte(plainTools))
	for _, format := range []string{"json", "text", "sarif", "markdown", "html"} {
		out := filepath.Join(dir, "report."+format)
		code, stdout, stderr := run(t, "", "drift", declared, "--url", url, "--header", hdr, "--format", format, "-o", out,
			"--observed-out", filepath.Join(dir, "observed."+format+".json"), "--surface-out", filepath.Join(dir, "surface."+format+".json"))
		if code == 2 {
			t.Fatalf("%s: exit 2: %s", format, stderr)
		}
		assertNoSecret(t, format+" stdout", []byte(stdout))
		assertNoSecret(t, format+" stderr", []byte(stderr))
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("%s: no report written: %v (exit %d, %s)", format, err, code, stderr)
		}
		if format != "html" && !bytes.Contains(b, []byte("MCP-AUTH-CREDENTIAL-REFLECTED")) {
			t.Errorf("%s: the reflected credential is not reported:\n%s", format, clipForLog(b))
		}
		if rec, err := os.ReadFile(filepath.Join(dir, "surface."+format+".json")); err != nil || !bytes.Contains(rec, []byte(`"prompt"`)) {
			t.Errorf("%s: no surface record with the prompt: %v %s", format, err, clipForLog(rec))
		}
	}
	assertDirClean(t, dir)
}
