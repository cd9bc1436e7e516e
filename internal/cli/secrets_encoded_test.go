package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// randomToken is a credential whose letters and digits look random, as an
// issued key's do: a part of it of 12 characters counts.
const randomToken = "tok_9f8e7d6c5b4a3Zq8Wm3Rt7Yp2Xk4Nb6Vc1"

// encodedPieces are what no byte written may hold of secret, beside the
// pieces assertNoSecret looks for: every 12 characters of its
// runs of letters and digits, of its base64 at each alignment in either
// alphabet (the characters that hold only its bits), and of its
// hexadecimal in either case.
func encodedPieces(secret string) []string {
	var forms []string
	for _, run := range strings.FieldsFunc(secret, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		forms = append(forms, run)
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for a := range 3 {
			e := enc.EncodeToString(append(make([]byte, a), secret...))
			forms = append(forms, e[(8*a+5)/6:8*(a+len(secret))/6])
		}
	}
	h := hex.EncodeToString([]byte(secret))
	forms = append(forms, h, strings.ToUpper(h))
	var pieces []string
	for _, f := range forms {
		for i := 0; i+12 <= len(f); i++ {
			pieces = append(pieces, f[i:i+12])
		}
	}
	return pieces
}

// assertNoEncodedSecret fails when data holds a piece of secret's
// encodings or of its runs.
func assertNoEncodedSecret(t *testing.T, what string, data []byte, secret string) {
	t.Helper()
	assertNoSecret(t, what, data)
	for _, p := range encodedPieces(secret) {
		if bytes.Contains(data, []byte(p)) {
			t.Errorf("%s holds %q (a piece of an encoding or a part of a secret the test sent):\n%s", what, p, clipForLog(data))
			return
		}
	}
}

// encodedTools echo the credential in each other way (encodedEchoes): a
// tool named with its last 20 characters, its base64 and hexadecimal in a
// description, and its halves in two.
const encodedTools = `[{"name":"get_{{AUTHTAIL}}","description":"Gets.","inputSchema":{"type":"object"}},
{"name":"read_file","description":"Reads {{AUTH64}} or {{AUTH64URL}}, digest {{AUTHHEX}}.","inputSchema":{"type":"object","properties":{"a":{"type":"string","description":"{{AUTHSPLIT1}}"},"b":{"type":"string","description":"{{AUTHSPLIT2}}"}}}}]`

// Issue 29, item 6: a server that echoes the credential base64-encoded,
// in hexadecimal, in part (a tool named with its last 20 characters) or
// split across two strings is reported as reflecting it, pin refuses its
// list, and no report format, observed record or stderr holds any of it.
func TestEncodedAndPartialSecretsNeverWritten(t *testing.T) {
	for name, tools := range map[string]string{
		"all":     encodedTools,
		"tail":    `[{"name":"get_{{AUTHTAIL}}","inputSchema":{"type":"object"}}]`,
		"base64":  `[{"name":"read_file","description":"{{AUTH64}}","inputSchema":{"type":"object"}}]`,
		"url-b64": `[{"name":"read_file","description":"{{AUTH64URL}}","inputSchema":{"type":"object"}}]`,
		"hex":     `[{"name":"read_file","description":"{{AUTHHEX}}","inputSchema":{"type":"object"}}]`,
		"split":   `[{"name":"read_file","description":"{{AUTHSPLIT1}}","title":"{{AUTHSPLIT2}}","inputSchema":{"type":"object"}}]`,
	} {
		t.Run(name, func(t *testing.T) {
			url := echoingServerOf(t, mockserver.Config{ServerName: "echo", ServerVersion: "1"}, tools, "echo")
			dir := t.TempDir()
			declared := writeFile(t, dir, "declared.json", []byte(plainTools))
			for _, format := range []string{"json", "text", "sarif", "markdown", "html"} {
				out := filepath.Join(dir, "report."+format)
				observed := filepath.Join(dir, "observed."+format+".json")
				code, stdout, stderr := run(t, "", "drift", declared, "--url", url, "--header", "Authorization=Bearer "+randomToken,
					"--format", format, "-o", out, "--observed-out", observed)
				if code == 2 {
					t.Fatalf("%s: exit 2: %s", format, stderr)
				}
				assertNoEncodedSecret(t, format+" stdout", []byte(stdout), randomToken)
				assertNoEncodedSecret(t, format+" stderr", []byte(stderr), randomToken)
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatalf("%s: no report written: %v (exit %d, %s)", format, err, code, stderr)
				}
				if !bytes.Contains(b, []byte("MCP-AUTH-CREDENTIAL-REFLECTED")) {
					t.Errorf("%s: the reflected credential is not reported:\n%s", format, clipForLog(b))
				}
				o, err := os.ReadFile(observed)
				if err != nil || (strings.Contains(tools, "{{AUTHTAIL}}") && !bytes.Contains(o, []byte(`"get_[REDACTED]"`))) {
					t.Errorf("%s: the observed record (%v) does not name get_[REDACTED]:\n%s", format, err, clipForLog(o))
				}
			}
			pinOut := filepath.Join(dir, "pinned.json")
			code, stdout, stderr := run(t, "", "pin", "--url", url, "--server-id", "srv", "--header", "Authorization=Bearer "+randomToken, "-o", pinOut)
			assertNoEncodedSecret(t, "pin stdout", []byte(stdout), randomToken)
			assertNoEncodedSecret(t, "pin stderr", []byte(stderr), randomToken)
			if code != 2 || !strings.Contains(stderr, "reflects credentials") {
				t.Errorf("pin of a reflecting server: exit %d %s", code, stderr)
			}
			if _, err := os.Stat(pinOut); err == nil {
				t.Error("pin wrote a baseline of a reflecting server")
			}
			filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					b, _ := os.ReadFile(p)
					assertNoEncodedSecret(t, p, b, randomToken)
				}
				return nil
			})
		})
	}
}
