package cli

import (
	"bytes"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// spoolServer is a server of n tools in pages of page, and its tools file.
func spoolServer(t *testing.T, n, page int) string {
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

// diskDir is a directory of the test's own on a file system that is not
// held in memory (the temporary directory, else one in /var/tmp), where a
// spool is made; it fails in CI and skips elsewhere when there is none.
func diskDir(t *testing.T) string {
	t.Helper()
	if dir := t.TempDir(); !inMemoryFS(dir) {
		return dir
	}
	if dir, err := os.MkdirTemp("/var/tmp", "mcpdrift-test-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(dir) })
		if !inMemoryFS(dir) {
			return dir
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no directory on a file system not held in memory (the temporary directory and /var/tmp are tmpfs): a spool needs one")
	}
	t.Skip("no directory on a file system not held in memory (the temporary directory and /var/tmp are tmpfs); required in CI")
	return ""
}

// spoolIn makes the spools of the test's runs in a directory of its own,
// which it returns.
func spoolIn(t *testing.T) string {
	t.Helper()
	dir := diskDir(t)
	spoolDirs = []string{dir}
	t.Cleanup(func() { spoolDirs = nil })
	return dir
}

// assertNoSpoolLeft fails when a spool file is left in dir.
func assertNoSpoolLeft(t *testing.T, dir string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(dir, ".mcpdrift-spool-*"))
	if len(left) > 0 {
		t.Errorf("spool files left behind: %v", left)
	}
}

// TestPinSpool: a live pin holds the listing's bytes on a spool beside
// its snapshot, not in memory, and writes exactly what it wrote when it
// held them: 300 tools in pages of 7, and the example in pages of 2. The
// spool holds every byte of every tool, and no file of it is left.
func TestPinSpool(t *testing.T) {
	sdir := spoolIn(t)
	for _, c := range []struct{ n, page int }{{300, 7}, {4, 2}} {
		url := spoolServer(t, c.n, c.page)
		var made []*spool
		testHookSpoolMade = func(s *spool) { made = append(made, s) }
		var held int64
		testHookSpoolListed = func(s *spool) { held = s.off }
		code, stderr, base, snap, dir := pinFiles(t, url)
		testHookSpoolMade, testHookSpoolListed = nil, nil
		if code != 0 || len(made) != 1 {
			t.Fatalf("%d tools: exit %d, %d spools: %s", c.n, code, len(made), stderr)
		}
		if filepath.Dir(made[0].at.f.Name()) != sdir {
			t.Errorf("the spool was made at %s, not in %s", made[0].at.f.Name(), sdir)
		}
		assertNoSpoolLeft(t, dir)
		assertNoSpoolLeft(t, sdir)
		// Without the spool (--snapshot - writes the snapshot to stdout,
		// so the listing is held in memory): the same files.
		testHookSpoolMade = func(s *spool) { t.Error("a spool for a snapshot written to stdout") }
		dir2 := t.TempDir()
		code2, snapOut, stderr2 := run(t, "", "pin", "--url", url, "--server-id", "s", "-o", filepath.Join(dir2, "pinned.json"), "--snapshot", "-")
		testHookSpoolMade = nil
		base2, _ := os.ReadFile(filepath.Join(dir2, "pinned.json"))
		if code2 != 0 || !bytes.Equal(base, base2) || snapOut != string(snap) || stderr != stderr2 {
			t.Errorf("%d tools: spooled and held pins differ: exit %d/%d, baseline same %v, snapshot same %v, stderr %q / %q",
				c.n, code, code2, bytes.Equal(base, base2), snapOut == string(snap), stderr, stderr2)
		}
		// Every tool's bytes went on the spool: the snapshot's tools
		// array holds them, each once, with its separators.
		tools := corpus.LeanTools(c.n, 1)
		if c.n == 4 {
			break // the corpus is not this server's list
		}
		if want := int64(len(tools)); held < want-int64(2*c.n)-2 || held > want {
			t.Errorf("%d tools: %d bytes spooled, the tools array is %d", c.n, held, want)
		}
	}
}

// TestPinSpoolChanged: bytes that changed on the spool before the
// snapshot was written fail the run (exit 2), and nothing is written.
func TestPinSpoolChanged(t *testing.T) {
	sdir := spoolIn(t)
	url := spoolServer(t, 50, 10)
	testHookSpoolListed = func(s *spool) {
		if _, err := s.at.f.WriteAt([]byte("X"), s.off/2); err != nil {
			t.Error(err)
		}
	}
	defer func() { testHookSpoolListed = nil }()
	code, stderr, base, snap, dir := pinFiles(t, url)
	if code != 2 || !strings.Contains(stderr, "the bytes read again are not those read first") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if base != nil || snap != nil {
		t.Error("a pin whose spool changed wrote its outputs")
	}
	assertNoSpoolLeft(t, dir)
	assertNoSpoolLeft(t, sdir)
}

// TestPinSpoolFails: a spool that cannot be written is no error: the
// bytes are held in memory, and the files are the same.
func TestPinSpoolFails(t *testing.T) {
	spoolIn(t)
	url := spoolServer(t, 50, 10)
	code, stderr, base, snap, _ := pinFiles(t, url)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	testHookSpoolMade = func(s *spool) { s.at.f.Close() } // every write fails
	defer func() { testHookSpoolMade = nil }()
	code2, stderr2, base2, snap2, dir := pinFiles(t, url)
	if code2 != 0 || stderr2 != stderr || !bytes.Equal(base, base2) || !bytes.Equal(snap, snap2) {
		t.Errorf("a failed spool: exit %d, files same %v %v: %s", code2, bytes.Equal(base, base2), bytes.Equal(snap, snap2), stderr2)
	}
	assertNoSpoolLeft(t, dir)
}

// TestPinSpoolWhere: a spool is made in the first directory that is not
// held in memory (TMPDIR, else /var/tmp: a tmpfs would move the bytes from
// the run's memory to the system's), and when none can take it the bytes
// are held in memory, the files the same.
func TestPinSpoolWhere(t *testing.T) {
	url := spoolServer(t, 50, 10)
	disk := diskDir(t)
	var made []*spool
	testHookSpoolMade = func(s *spool) { made = append(made, s) }
	defer func() { testHookSpoolMade, spoolDirs = nil, nil }()
	if _, err := os.Stat("/dev/shm"); err == nil && inMemoryFS("/dev/shm") {
		spoolDirs = []string{"/dev/shm", disk}
		if code, stderr, _, _, _ := pinFiles(t, url); code != 0 || len(made) != 1 || filepath.Dir(made[0].at.f.Name()) != disk {
			t.Fatalf("exit %d, %d spools: %s", code, len(made), stderr)
		}
	}
	code, stderr, base, snap, _ := pinFiles(t, url)
	made = nil
	spoolDirs = []string{filepath.Join(disk, "missing")}
	code2, stderr2, base2, snap2, _ := pinFiles(t, url)
	if code != 0 || code2 != 0 || len(made) != 0 || stderr != stderr2 || !bytes.Equal(base, base2) || !bytes.Equal(snap, snap2) {
		t.Errorf("no spool: exit %d/%d, %d spools, files same %v %v", code, code2, len(made), bytes.Equal(base, base2), bytes.Equal(snap, snap2))
	}
}

// TestPinSpoolNoSecret: a run that sends a secret spools its listing
// sealed, and no byte of a secret, nor of any tool, is on the file in the
// clear, whatever the spelling a server echoes it in (URL-escaped, an
// escape the redaction does not spell, a clipped prefix with its ellipsis
// escaped, percent-encoded otherwise than Go does, as sent); unsealed,
// the file holds every page. The runs whose tools reflect the secret once
// decoded (JSON escapes, percent-encoding), whole or clipped right before
// an ellipsis in any spelling, are refused, with nothing written; a tool
// that cuts the auth scheme alone ("Bearer…") is pinned as served, and its
// snapshot reads back.
func TestPinSpoolNoSecret(t *testing.T) {
	spoolIn(t)
	var raw, unsealed []byte
	testHookSpoolListed = func(s *spool) {
		raw, unsealed = nil, nil
		if s.at != nil {
			raw, _ = io.ReadAll(io.NewSectionReader(s.at.f, 0, s.off))
			unsealed, _ = io.ReadAll(io.NewSectionReader(s.at, 0, s.off))
		}
	}
	defer func() { testHookSpoolListed = nil }()
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
		raw, unsealed = nil, nil
		tools := "[" + page("alpha", "one") + "," + page("bravo", c.desc) + "," + page("charlie", "three") + "]"
		u := echoingServerOf(t, mockserver.Config{PageSize: 1}, tools, "echo")
		code, stderr, base, snap, dir := pinFiles(t, u, "--header", "Authorization=Bearer "+c.token)
		if code != c.code || (code == 0) != (base != nil && snap != nil) {
			t.Fatalf("%s: exit %d, files %v %v: %s", c.name, code, base != nil, snap != nil, stderr)
		}
		for _, n := range []string{"alpha", "bravo", "charlie"} {
			if !bytes.Contains(unsealed, []byte(`"name":"`+n+`"`)) {
				t.Errorf("%s: tool %s was not spooled", c.name, n)
			}
			if bytes.Contains(raw, []byte(n)) {
				t.Errorf("%s: tool %s's name is on the spool in the clear", c.name, n)
			}
		}
		assertNoEncodedSecret(t, c.name+": the spool", raw, c.token)
		for _, piece := range []string{escaped, c.token[1:11], c.token[8:18]} {
			if bytes.Contains(raw, []byte(piece)) {
				t.Errorf("%s: the spool holds %q", c.name, piece)
			}
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

// TestSealedSpool: bytes sealed at any offset read back unsealed from any
// offset and length, and what is on the file is not them.
func TestSealedSpool(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "sealed")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := newSealed(f)
	if err != nil {
		t.Fatal(err)
	}
	plain := bytes.Repeat([]byte("the quick brown fox 0123456789 "), 200)
	// Written in pieces at unaligned offsets, as pages are.
	for _, cut := range [][2]int{{0, 7}, {7, 33}, {33, 1000}, {1000, len(plain)}} {
		b := bytes.Clone(plain[cut[0]:cut[1]])
		if err := s.writeAt(b, int64(cut[0])); err != nil {
			t.Fatal(err)
		}
	}
	onFile := make([]byte, len(plain))
	if _, err := f.ReadAt(onFile, 0); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(onFile, []byte("quick")) || bytes.Equal(onFile, plain) {
		t.Fatal("the file holds the bytes in the clear")
	}
	for _, r := range [][2]int{{0, len(plain)}, {1, 2}, {15, 17}, {16, 32}, {31, 4000}, {len(plain) - 1, len(plain)}} {
		got := make([]byte, r[1]-r[0])
		if _, err := s.ReadAt(got, int64(r[0])); err != nil || !bytes.Equal(got, plain[r[0]:r[1]]) {
			t.Errorf("[%d:%d] read back %q (%v)", r[0], r[1], clipForLog(got), err)
		}
	}
	// Another spool's key reads other bytes.
	other, _ := newSealed(f)
	got := make([]byte, 64)
	other.ReadAt(got, 0)
	if bytes.Equal(got, plain[:64]) {
		t.Error("a second key unsealed the first one's bytes")
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
