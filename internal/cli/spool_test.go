package cli

import (
	"bytes"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
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
		if filepath.Dir(made[0].f.Name()) != sdir {
			t.Errorf("the spool was made at %s, not in %s", made[0].f.Name(), sdir)
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
		if _, err := s.f.WriteAt([]byte("X"), s.off/2); err != nil {
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
	testHookSpoolMade = func(s *spool) { s.f.Close() } // every write fails
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
		if code, stderr, _, _, _ := pinFiles(t, url); code != 0 || len(made) != 1 || filepath.Dir(made[0].f.Name()) != disk {
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

// TestPinSpoolNoSecret: a run that sends a secret spools no page that
// holds a form of it, nor any page from the first that reflects it once
// decoded, and no byte of a secret reaches the spool: a server that holds
// the credential URL-escaped in a description is pinned, its snapshot
// redacted, and that page alone stayed in memory; one that reflects it
// with an escape the redaction does not spell (\u0074 for its "t"), or as
// it was sent, is refused, and the pages from that one on were not
// spooled.
func TestPinSpoolNoSecret(t *testing.T) {
	spoolIn(t)
	var spooled []byte
	testHookSpoolListed = func(s *spool) {
		spooled = nil
		if s.f != nil {
			spooled, _ = io.ReadAll(io.NewSectionReader(s.f, 0, s.off))
		}
	}
	defer func() { testHookSpoolListed = nil }()
	const token = "tok/9f8e7d6c5b4a+SECRET=xyz" // other bytes once URL-escaped
	escaped := url.QueryEscape(token)
	page := func(name, desc string) string {
		return `{"name":"` + name + `","description":"` + desc + `","inputSchema":{"type":"object"}}`
	}
	names := func() (in []string) {
		for _, n := range []string{"a", "b", "c"} {
			if bytes.Contains(spooled, []byte(`"name":"`+n+`"`)) {
				in = append(in, n)
			}
		}
		return in
	}
	for _, c := range []struct {
		name, desc, token string
		code              int
		spooled           []string
	}{
		{"URL-escaped", "see ?auth=" + escaped, token, 0, []string{"a", "c"}},
		{"escaped otherwise", `uses Bearer \u0074` + bearerToken[1:], bearerToken, 2, []string{"a"}},
		{"as sent", "uses {{AUTH}}", bearerToken, 2, []string{"a"}},
	} {
		spooled = nil
		tools := "[" + page("a", "one") + "," + page("b", c.desc) + "," + page("c", "three") + "]"
		u := echoingServerOf(t, mockserver.Config{PageSize: 1}, tools, "echo")
		code, stderr, base, snap, dir := pinFiles(t, u, "--header", "Authorization=Bearer "+c.token)
		if code != c.code || (code == 0) != (base != nil && snap != nil) {
			t.Fatalf("%s: exit %d, files %v %v: %s", c.name, code, base != nil, snap != nil, stderr)
		}
		if got := names(); !slices.Equal(got, c.spooled) {
			t.Errorf("%s: the spool holds tools %v, want %v", c.name, got, c.spooled)
		}
		for what, b := range map[string][]byte{"the spool": spooled, "the snapshot": snap} {
			assertNoSecret(t, c.name+": "+what, b)
			if bytes.Contains(b, []byte(escaped)) {
				t.Errorf("%s: %s holds the URL-escaped secret", c.name, what)
			}
		}
		if code == 0 && !bytes.Contains(snap, []byte("[REDACTED]")) {
			t.Errorf("%s: the snapshot was not redacted: %s", c.name, clipForLog(snap))
		}
		if code == 2 && !strings.Contains(stderr, "reflects credentials") {
			t.Errorf("%s: refused, but not for the reflection: %s", c.name, stderr)
		}
		assertNoSecret(t, c.name+": stderr", []byte(stderr))
		assertDirClean(t, dir)
	}
}
