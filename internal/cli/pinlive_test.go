package cli

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// pagedServer is a server of n corpus tools in pages of page.
func pagedServer(t *testing.T, n, page int) string {
	t.Helper()
	mf := writeFile(t, t.TempDir(), "tools.json", corpus.LeanTools(n, 1))
	_, url := mock(t, mockserver.Config{PageSize: page}, mf)
	return url
}

// pinFiles pins url into a new directory and returns the exit code, the
// stderr, the baseline and the snapshot (nil when not written), and the
// directory.
func pinFiles(t *testing.T, url string, extra ...string) (code int, stderr string, base, snap []byte, dir string) {
	t.Helper()
	dir = t.TempDir()
	out := filepath.Join(dir, "pinned.json")
	code, _, stderr = run(t, "", append([]string{"pin", "--url", url, "--server-id", "s", "-o", out}, extra...)...)
	base, _ = os.ReadFile(out)
	snap, _ = os.ReadFile(filepath.Join(dir, "pinned.snapshot.json"))
	return code, stderr, base, snap, dir
}

// TestPinSnapshotAnyTarget: a live pin writes the same snapshot to a file
// (staged while the baseline is built) and to stdout (gathered at the
// commit), and the same baseline and stderr beside it: 300 tools in pages
// of 7, and 4 in pages of 2.
func TestPinSnapshotAnyTarget(t *testing.T) {
	for _, c := range []struct{ n, page int }{{300, 7}, {4, 2}} {
		url := pagedServer(t, c.n, c.page)
		code, stderr, base, snap, _ := pinFiles(t, url)
		if code != 0 || snap == nil {
			t.Fatalf("%d tools: exit %d: %s", c.n, code, stderr)
		}
		dir2 := t.TempDir()
		code2, snapOut, stderr2 := run(t, "", "pin", "--url", url, "--server-id", "s", "-o", filepath.Join(dir2, "pinned.json"), "--snapshot", "-")
		base2, _ := os.ReadFile(filepath.Join(dir2, "pinned.json"))
		if code2 != 0 || !bytes.Equal(base, base2) || snapOut != string(snap) || withoutWrote(stderr) != withoutWrote(stderr2) {
			t.Errorf("%d tools: the pins differ: exit %d/%d, baseline same %v, snapshot same %v, stderr %q / %q",
				c.n, code, code2, bytes.Equal(base, base2), snapOut == string(snap), stderr, stderr2)
		}
	}
}

// TestPinNoSecret: a live pin holds its listing in memory only (nothing
// of it is on a disk until the outputs are written), and whatever the
// spelling a server echoes a secret in (URL-escaped, an escape the
// redaction does not spell, a clipped prefix with its ellipsis escaped,
// percent-encoded otherwise than Go does, as sent, encoded, in part) no
// file the run writes holds it: the runs whose tools reflect the secret
// once decoded (JSON escapes, percent-encoding), whole or clipped right
// before an ellipsis in any spelling, are refused, with nothing written; a
// tool that cuts the auth scheme alone ("Bearer…") is pinned as served,
// and its snapshot reads back.
func TestPinNoSecret(t *testing.T) {
	const token = "tok/9f8e7d6c5b4a+SECRET=xyz" // other bytes once URL-escaped
	escaped := url.QueryEscape(token)
	page := func(name, desc string) string {
		return `{"name":"` + name + `","description":"` + desc + `","inputSchema":{"type":"object"}}`
	}
	for _, c := range []struct {
		name, desc, token string
		code              int
	}{
		{"URL-escaped", "see ?auth=" + escaped, token, 2},
		{"clipped", `uses ` + bearerToken[:20] + `…`, bearerToken, 2},
		{"escaped otherwise", `uses Bearer \u0074` + bearerToken[1:], bearerToken, 2},
		{"clipped, its ellipsis escaped", `uses ` + bearerToken[:20] + `\u2026`, bearerToken, 2},
		{"escaped inside a clipped prefix", `uses tok\u005f` + bearerToken[4:20] + `…`, bearerToken, 2},
		{"percent-encoded otherwise", `see ?auth=%74` + bearerToken[1:], bearerToken, 2},
		{"as sent", "uses {{AUTH}}", bearerToken, 2},
		// Encoded, or in part (issue 29, item 6): a token whose letters
		// and digits look random.
		{"base64 in a blob", "data {{AUTH64}}", randomToken, 2},
		{"base64url", "data {{AUTH64URL}}", randomToken, 2},
		{"hexadecimal", "digest {{AUTHHEX}}", randomToken, 2},
		{"its last 20 characters", "see {{AUTHTAIL}}", randomToken, 2},
		// The scheme alone, cut: nothing of the credential, pinned as
		// served.
		{"the scheme, clipped", `send Authorization: Bearer…`, bearerToken, 0},
	} {
		tools := "[" + page("alpha", "one") + "," + page("bravo", c.desc) + "," + page("charlie", "three") + "]"
		u := echoingServerOf(t, mockserver.Config{PageSize: 1}, tools, "echo")
		code, stderr, base, snap, dir := pinFiles(t, u, "--header", "Authorization=Bearer "+c.token)
		if code != c.code || (code == 0) != (base != nil && snap != nil) {
			t.Fatalf("%s: exit %d, files %v %v: %s", c.name, code, base != nil, snap != nil, stderr)
		}
		if code == 0 {
			// Pinned as served, and read again whole: its tools match
			// their digests.
			if !bytes.Contains(snap, []byte(`Bearer…`)) || bytes.Contains(snap, []byte("[REDACTED]")) {
				t.Errorf("%s: the snapshot is not the tools as served: %s", c.name, clipForLog(snap))
			}
			if code, _, stderr := run(t, "", "diff", filepath.Join(dir, "pinned.json"), filepath.Join(dir, "pinned.snapshot.json")); code != 0 {
				t.Errorf("%s: the pinned snapshot does not read back (diff exit %d): %s", c.name, code, stderr)
			}
		}
		if code == 2 && !strings.Contains(stderr, "reflects credentials") {
			t.Errorf("%s: refused, but not for the reflection: %s", c.name, stderr)
		}
		assertNoEncodedSecret(t, c.name+": stderr", []byte(stderr), c.token)
		assertDirClean(t, dir) // every file the run wrote
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				b, _ := os.ReadFile(p)
				assertNoEncodedSecret(t, p, b, c.token)
			}
			return nil
		})
	}
}

// TestPinRefusesAClippedSpelling: a credential cut before an ellipsis, in
// a spelling the reflection check does not decode (escaped as mcpdrift's
// own messages escape it, '+' for a space) and with the ellipsis escaped,
// never reaches a successful pin: the snapshot the redaction would change
// is not written, and nothing else is.
func TestPinRefusesAClippedSpelling(t *testing.T) {
	page := func(desc string) string {
		return `[{"name":"alpha","description":"` + desc + `","inputSchema":{"type":"object"}}]`
	}
	for _, c := range []struct{ header, desc, piece string }{
		{`X-Api-Key=ak"0123456789xyz`, `uses ak\\\"0123456789\u2026`, "0123456789"},
		{"X-Other=my secret value", `uses my+secret+val\u2026`, "secret+val"},
		{"X-Token=0123456789abcdef0123 v2", `uses 0123456789abcdef012\u2026`, "0123456789abcdef012"},
	} {
		u := echoingServerOf(t, mockserver.Config{}, page(c.desc), "echo")
		code, stderr, _, _, dir := pinFiles(t, u, "--header", c.header)
		if code != 2 {
			t.Errorf("%s: exit %d: %s", c.desc, code, stderr)
		}
		if strings.Contains(stderr, c.piece) {
			t.Errorf("%s: stderr holds %q: %s", c.desc, c.piece, stderr)
		}
		assertDirClean(t, dir)
	}
}
