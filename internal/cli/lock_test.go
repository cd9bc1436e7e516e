package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

var (
	acmeV1 = filepath.Join("..", "..", "examples", "acme-github.v1.tools-list.json")
	acmeV2 = filepath.Join("..", "..", "examples", "acme-github.v2-rugpull.tools-list.json")
)

func loadMockTools(t *testing.T, path string) []json.RawMessage {
	t.Helper()
	tools, err := mockserver.LoadToolsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

type lockCheckJSON struct {
	Schema   string `json:"schema"`
	ExitCode int    `json:"exit_code"`
	Servers  []struct {
		Name           string   `json:"name"`
		Status         string   `json:"status"`
		ExitCode       int      `json:"exit_code"`
		Error          string   `json:"error"`
		Pending        []string `json:"pending"`
		AutoApprovable []string `json:"auto_approvable"`
		Withheld       bool     `json:"withheld"`
	} `json:"servers"`
}

func lockCheck(t *testing.T, lockPath string, args ...string) (int, lockCheckJSON, string) {
	t.Helper()
	code, out, stderr := run(t, "", append([]string{"lock", "check", "--lock", lockPath, "--format", "json"}, args...)...)
	var r lockCheckJSON
	if out != "" {
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("lock check JSON: %v\n%s", err, out)
		}
	}
	return code, r, stderr
}

// Two live servers in one lock; one drifts; check names it, approve one
// tool, check names only the other.
// lockAddOneTwo adds servers "one" and "two" at u1 and u2 to the lock lp.
func lockAddOneTwo(t *testing.T, lp, u1, u2 string) {
	t.Helper()
	for _, x := range []struct{ name, url string }{{"one", u1}, {"two", u2}} {
		if code, _, stderr := run(t, "", "lock", "add", x.name, "--lock", lp, "--url", x.url, "--by", "alice@example.com"); code != 0 {
			t.Fatalf("lock add %s: exit %d: %s", x.name, code, stderr)
		}
	}
}

func TestLockAddCheckApprove(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	s1, u1 := mock(t, mockserver.Config{}, acmeV1)
	_, u2 := mock(t, mockserver.Config{}, acmeV1)
	lockAddOneTwo(t, lp, u1, u2)
	// The lock parses and round-trips.
	b, err := os.ReadFile(lp)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lock.Parse(b, lp)
	if err != nil || len(l.Servers) != 2 {
		t.Fatalf("lock: %v (%d servers)", err, len(l.Servers))
	}
	code, r, stderr := lockCheck(t, lp)
	if code != 0 || r.ExitCode != 0 || len(r.Servers) != 2 {
		t.Fatalf("clean check: exit %d %+v %s", code, r, stderr)
	}
	if err := s1.SetTools(loadMockTools(t, acmeV2)); err != nil {
		t.Fatal(err)
	}
	code, r, _ = lockCheck(t, lp)
	if code != 1 || r.Servers[0].Name != "one" || r.Servers[0].Status != "findings" || len(r.Servers[0].Pending) < 2 || r.Servers[1].Status != "clean" {
		t.Fatalf("drifted check: exit %d %+v", code, r)
	}
	pending := r.Servers[0].Pending
	// Text shows the readable delta.
	code, out, _ := run(t, "", "lock", "check", "--lock", lp, "--color", "never")
	if code != 1 || !strings.Contains(out, "decision") || !strings.Contains(out, "to review:") {
		t.Errorf("text check: exit %d\n%s", code, out)
	}
	// Approving a tool the profile does not deny.
	code, _, stderr = run(t, "", "approve", "one", pending[0], "--lock", lp, "--by", "bob@example.com", "--note", "read it")
	if code != 0 {
		// It may be denied; then the re-consent flag is needed.
		if !strings.Contains(stderr, "--i-reviewed-the-denied-change") {
			t.Fatalf("approve: exit %d: %s", code, stderr)
		}
		if code, _, stderr = run(t, "", "approve", "one", pending[0], "--lock", lp, "--by", "bob@example.com", "--i-reviewed-the-denied-change"); code != 0 {
			t.Fatalf("approve with re-consent: exit %d: %s", code, stderr)
		}
	}
	code, r, _ = lockCheck(t, lp)
	if code != 1 || len(r.Servers[0].Pending) != len(pending)-1 {
		t.Fatalf("after one approval: exit %d %+v (pending before %v)", code, r, pending)
	}
	for _, p := range r.Servers[0].Pending {
		if p == pending[0] {
			t.Errorf("approved tool %q still pending", p)
		}
	}
	// The history names the approval.
	code, out, _ = run(t, "", "review", "one", "--history", "--lock", lp)
	if code != 0 || !strings.Contains(out, "approved") || !strings.Contains(out, `"bob@example.com"`) {
		t.Errorf("history: exit %d\n%s", code, out)
	}
	// --all approves the rest; the check is clean.
	if code, _, stderr = run(t, "", "approve", "one", "--all", "--lock", lp, "--by", "bob@example.com", "--i-reviewed-the-denied-change"); code != 0 {
		t.Fatalf("approve --all: exit %d: %s", code, stderr)
	}
	if code, r, _ = lockCheck(t, lp); code != 0 {
		t.Fatalf("after --all: exit %d %+v", code, r)
	}
}

// Interactive review: approve the first, skip the second.
func TestReviewInteractive(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	s, u := mock(t, mockserver.Config{}, acmeV1)
	if code, _, stderr := run(t, "", "lock", "add", "one", "--lock", lp, "--url", u, "--by", "alice@example.com"); code != 0 {
		t.Fatalf("lock add: exit %d: %s", code, stderr)
	}
	if err := s.SetTools(loadMockTools(t, acmeV2)); err != nil {
		t.Fatal(err)
	}
	_, r, _ := lockCheck(t, lp)
	pending := r.Servers[0].Pending
	if len(pending) < 2 {
		t.Fatalf("want two pending tools, got %v", pending)
	}
	// Non-interactive: prints, writes nothing, exit 1.
	before, _ := os.ReadFile(lp)
	code, out, _ := run(t, "", "review", "one", "--lock", lp, "--color", "never")
	if after, _ := os.ReadFile(lp); code != 1 || string(after) != string(before) || !strings.Contains(out, "approve with:") {
		t.Fatalf("non-interactive review: exit %d, changed %v\n%s", code, string(after) != string(before), out)
	}
	// "?" prints help, "y" (and "yes" for a denied change), "n" for the
	// second; the rest skipped by end of input.
	answers := "?\ny\nn\nq\n"
	code, out, stderr := run(t, answers, "review", "one", "--lock", lp, "--interactive", "--by", "carol@example.com", "--color", "never")
	if code != 0 || !strings.Contains(out, "y - approve") || !strings.Contains(out, "approved 1, skipped") {
		t.Logf("pending %v", pending)
		t.Fatalf("interactive review: exit %d\n%s\n%s", code, out, stderr)
	}
	_, r, _ = lockCheck(t, lp)
	if len(r.Servers[0].Pending) != len(pending)-1 || contains(r.Servers[0].Pending, pending[0]) {
		t.Fatalf("after review: pending %v (before %v)", r.Servers[0].Pending, pending)
	}
}

// Bad input: refused with exit 2 and nothing written.
func TestLockRefusals(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	_, u := mock(t, mockserver.Config{}, acmeV1)
	if code, _, stderr := run(t, "", "lock", "add", "one", "--lock", lp, "--url", u, "--by", "a@example.com"); code != 0 {
		t.Fatalf("lock add: %d %s", code, stderr)
	}
	good, _ := os.ReadFile(lp)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"again", []string{"lock", "add", "one", "--url", u, "--by", "a@example.com"}, "already in"},
		{"bad name", []string{"lock", "add", "-x", "--url", u, "--by", "a"}, "unknown shorthand"},
		{"credential url", []string{"lock", "add", "two", "--url", strings.Replace(u, "http://", "http://user:pw@", 1), "--by", "a"}, "user info"},
		{"unknown server", []string{"approve", "nope", "x", "--by", "a"}, "not in"},
		{"unknown tool", []string{"approve", "one", "no_such_tool", "--by", "a"}, "not served"},
		{"profile", []string{"lock", "profile", "one", "lenient", "--by", "a"}, "review or fail-closed"},
		{"export without kind", []string{"lock", "export", "one"}, "--assay"},
	}
	for _, c := range cases {
		code, _, stderr := run(t, "", append(c.args, "--lock", lp)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d: %s", c.name, code, stderr)
		}
		if now, _ := os.ReadFile(lp); string(now) != string(good) {
			t.Fatalf("%s: the lock changed", c.name)
		}
	}
	// A tampered lock: the digest does not recompute.
	bad := filepath.Join(dir, "bad.lock")
	i := strings.Index(string(good), `"tool_digest":"sha256:`) + len(`"tool_digest":"sha256:`)
	flipped := []byte(string(good))
	flipped[i] = "01"[map[bool]int{true: 1}[flipped[i] == '0']]
	os.WriteFile(bad, flipped, 0o644)
	if code, _, stderr := run(t, "", "lock", "check", "--lock", bad); code != 2 || !strings.Contains(stderr, "/servers/0/") {
		t.Errorf("tampered: exit %d: %s", code, stderr)
	}
	// A symlinked lock.
	link := filepath.Join(dir, "link.lock")
	os.Symlink(lp, link)
	if code, _, stderr := run(t, "", "lock", "check", "--lock", link); code != 2 || !strings.Contains(stderr, "symlink") {
		t.Errorf("symlink: exit %d: %s", code, stderr)
	}
	// A duplicate server.
	dup := filepath.Join(dir, "dup.lock")
	l, _ := lock.Parse(good, lp)
	two := *l.Servers[0]
	l.Servers = append(l.Servers, &two)
	os.WriteFile(dup, l.Marshal(), 0o644)
	if code, _, stderr := run(t, "", "lock", "check", "--lock", dup); code != 2 || !strings.Contains(stderr, "twice") && !strings.Contains(stderr, "duplicate") {
		t.Errorf("duplicate server: exit %d: %s", code, stderr)
	}
}

// Two writers at once: one is refused, the lock is one of theirs whole.
func TestLockConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	_, u := mock(t, mockserver.Config{}, acmeV1)
	release, busy, err := lockDirectory(dir)
	if err != nil || busy {
		t.Fatalf("flock: %v %v", err, busy)
	}
	code, _, stderr := run(t, "", "lock", "add", "one", "--lock", lp, "--url", u, "--by", "a@example.com")
	release()
	if code != 2 || !strings.Contains(stderr, "another mcpdrift is writing") {
		t.Fatalf("writer under a held flock: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(lp); err == nil {
		t.Fatal("a refused writer wrote the lock")
	}
	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = run(t, "", "lock", "add", []string{"a", "b", "c", "d"}[i], "--lock", lp, "--url", u, "--by", "a@example.com")
		}()
	}
	wg.Wait()
	b, err := os.ReadFile(lp)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lock.Parse(b, lp)
	if err != nil {
		t.Fatalf("the lock after racing writers: %v", err)
	}
	ok := 0
	for _, c := range codes {
		if c == 0 {
			ok++
		} else if c != 2 {
			t.Errorf("a racing writer exited %d", c)
		}
	}
	if ok != len(l.Servers) || ok == 0 {
		t.Errorf("%d writers succeeded, the lock has %d servers", ok, len(l.Servers))
	}
}

// A header is stored as its placeholder, never as its value; the value
// is sent, and never written anywhere.
func TestLockHeaderPlaceholder(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	const secret = "s3cr3t-token-value-0123456789"
	t.Setenv("ACME_TOKEN", secret)
	_, u := mock(t, mockserver.Config{RequireAuth: secret}, acmeV1)
	code, out, stderr := run(t, "", "lock", "add", "one", "--lock", lp, "--url", u, "--header", "Authorization=Bearer ${env:ACME_TOKEN}", "--by", "a@example.com")
	if code != 0 {
		t.Fatalf("lock add: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(lp)
	if !strings.Contains(string(b), `"Bearer ${env:ACME_TOKEN}"`) {
		t.Errorf("placeholder not stored:\n%s", b)
	}
	code, out2, stderr2 := run(t, "", "lock", "check", "--lock", lp)
	if code != 0 {
		t.Errorf("check with the placeholder: exit %d: %s", code, stderr2)
	}
	// Without the variable: that server is not observed (exit 3), named.
	os.Unsetenv("ACME_TOKEN")
	code, r, _ := lockCheck(t, lp)
	if code != 3 || r.Servers[0].Status != "not_observed" || !strings.Contains(r.Servers[0].Error, "ACME_TOKEN") {
		t.Errorf("check without the variable: exit %d %+v", code, r)
	}
	// A literal header value: used, not stored, warned.
	lp2 := filepath.Join(dir, "literal.lock")
	code, out3, stderr3 := run(t, "", "lock", "add", "one", "--lock", lp2, "--url", u, "--header", "Authorization=Bearer "+secret, "--by", "a@example.com")
	if code != 0 || !strings.Contains(stderr3, "not stored") {
		t.Errorf("literal header: exit %d: %s", code, stderr3)
	}
	b2, _ := os.ReadFile(lp2)
	for _, s := range []string{string(b), string(b2), out, out2, out3, stderr, stderr2, stderr3} {
		if strings.Contains(s, secret) {
			t.Fatalf("the secret was written: %q", s)
		}
	}
}

// export writes the Assay baseline byte for byte; profile changes and
// remove.
func TestLockExportProfileRemove(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	_, u := mock(t, mockserver.Config{}, acmeV1)
	if code, _, stderr := run(t, "", "lock", "add", "one", "--lock", lp, "--url", u, "--by", "a@example.com"); code != 0 {
		t.Fatalf("lock add: %d %s", code, stderr)
	}
	out := filepath.Join(dir, "one.declared.json")
	if code, _, stderr := run(t, "", "lock", "export", "one", "--assay", "-o", out, "--lock", lp); code != 0 {
		t.Fatalf("export: %d %s", code, stderr)
	}
	pinned := filepath.Join(dir, "pinned.json")
	if code, _, stderr := run(t, "", "pin", "--url", u, "--server-id", "one", "-o", pinned, "--no-snapshot"); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(pinned)
	// The lock keeps tools by name, pin in served order: the same
	// baseline (the same manifest digest and entries), and the export is
	// Assay's own format, which the gate reads.
	var da, db struct {
		Schema         string            `json:"schema"`
		ManifestDigest string            `json:"manifest_digest"`
		Tools          []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(a, &da) != nil || json.Unmarshal(b, &db) != nil || da.Schema != "assay.declared_mcp_manifest.v0" || da.ManifestDigest != db.ManifestDigest || len(da.Tools) != len(db.Tools) || da.ManifestDigest == "" {
		t.Errorf("export is not the pinned baseline:\n%s\n---\n%s", a, b)
	}
	obsOut := filepath.Join(dir, "obs.json")
	if code, _, stderr := run(t, "", "observe", "--input", acmeV1, "--server-id", "one", "-o", obsOut); code != 0 {
		t.Fatalf("observe: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "", "gate", "--format", "json", "--observed", obsOut, "--declared", out); code != 0 {
		t.Errorf("gate against the exported baseline: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "", "lock", "profile", "one", "fail-closed", "--auto-approve", "notation", "--lock", lp, "--by", "a@example.com"); code != 0 {
		t.Fatalf("profile: %d %s", code, stderr)
	}
	lb, _ := os.ReadFile(lp)
	l, err := lock.Parse(lb, lp)
	if err != nil || l.Servers[0].Profile != "fail-closed" || !l.Servers[0].AutoApproves("notation") {
		t.Fatalf("profile not set: %v", err)
	}
	if code, _, stderr := run(t, "", "lock", "remove", "one", "--lock", lp); code != 0 {
		t.Fatalf("remove: %d %s", code, stderr)
	}
	lb, _ = os.ReadFile(lp)
	if l, err = lock.Parse(lb, lp); err != nil || len(l.Servers) != 0 {
		t.Fatalf("after remove: %v %d", err, len(l.Servers))
	}
}

// A change the profile denies needs more than an approval: approve without
// --i-reviewed-the-denied-change is refused and writes nothing; an
// interactive "y" asks again and only "yes" approves.
func TestApproveDeniedChange(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	v1 := []json.RawMessage{json.RawMessage(`{"name":"write_file","description":"Write a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}}`)}
	// Schema drift under a stable description: denied under fail-closed.
	v2 := []json.RawMessage{json.RawMessage(`{"name":"write_file","description":"Write a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"callback_url":{"type":"string"}},"required":["path","content"]}}`)}
	s, u := mock(t, mockserver.Config{Tools: v1}, "")
	if code, _, stderr := run(t, "", "lock", "add", "one", "--lock", lp, "--url", u, "--profile", "fail-closed", "--by", "a@example.com"); code != 0 {
		t.Fatalf("lock add: %d %s", code, stderr)
	}
	if err := s.SetTools(v2); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(lp)
	code, _, stderr := run(t, "", "approve", "one", "write_file", "--lock", lp, "--by", "b@example.com")
	if code != 2 || !strings.Contains(stderr, "--i-reviewed-the-denied-change") || !strings.Contains(stderr, "denied by") {
		t.Fatalf("approve of a denied change: exit %d: %s", code, stderr)
	}
	if now, _ := os.ReadFile(lp); string(now) != string(before) {
		t.Fatal("a refused approval changed the lock")
	}
	// Interactive: "y" then anything but "yes" does not approve.
	code, out, _ := run(t, "y\nno\n", "review", "one", "--lock", lp, "--interactive", "--by", "b@example.com", "--color", "never")
	if code != 0 || !strings.Contains(out, "Type yes to approve it anyway") || !strings.Contains(out, "approved 0, skipped 1") {
		t.Fatalf("interactive denied, not confirmed: exit %d\n%s", code, out)
	}
	if now, _ := os.ReadFile(lp); string(now) != string(before) {
		t.Fatal("an unconfirmed denied change was written")
	}
	code, out, _ = run(t, "y\nyes\n", "review", "one", "--lock", lp, "--interactive", "--by", "b@example.com", "--color", "never")
	if code != 0 || !strings.Contains(out, "approved 1, skipped 0") {
		t.Fatalf("interactive denied, confirmed: exit %d\n%s", code, out)
	}
	if code, _, _ := lockCheck(t, lp); code != 0 {
		t.Errorf("after the confirmed approval: lock check exit %d", code)
	}
	// The same with the flag, from the next drift.
	v3 := []json.RawMessage{json.RawMessage(`{"name":"write_file","description":"Write a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"callback_url":{"type":"string"},"mode":{"type":"string"}},"required":["path","content"]}}`)}
	if err := s.SetTools(v3); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "", "approve", "one", "write_file", "--lock", lp, "--by", "b@example.com", "--i-reviewed-the-denied-change", "--note", "read the new mode parameter"); code != 0 {
		t.Fatalf("approve with re-consent: exit %d: %s", code, stderr)
	}
	if code, _, _ := lockCheck(t, lp); code != 0 {
		t.Errorf("after the re-consented approval: lock check exit %d", code)
	}
	_, hist, _ := run(t, "", "review", "one", "--history", "--lock", lp)
	if !strings.Contains(hist, `"read the new mode parameter"`) || strings.Count(hist, "approved ") < 2 {
		t.Errorf("history:\n%s", hist)
	}
}

// A server whose key is a segment of its URL: the lock stores the segment
// as a ${env:NAME} placeholder and lock check expands it; a literal key is
// refused before anything is sent, without being repeated; no byte the
// runs write holds the key.
func TestLockURLSegmentPlaceholder(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	const key = "sk-ak-Q7w2E9r4T1y8U3i6O5p0"
	var paths []string
	var mu sync.Mutex
	s, u := mock(t, mockserver.Config{}, acmeV1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		s.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	_ = u
	base := ts.URL + "/mcp/"
	// The literal key: refused, nothing sent, the key not repeated.
	code, out, stderr := run(t, "", "lock", "add", "one", "--lock", lp, "--url", base+key+"/sse", "--by", "a@example.com")
	if code != 2 || !strings.Contains(stderr, "looks like a credential") || !strings.Contains(stderr, "${env:") {
		t.Fatalf("literal key: exit %d: %s", code, stderr)
	}
	if len(paths) != 0 {
		t.Fatalf("the refused lock add sent %d requests", len(paths))
	}
	if _, err := os.Stat(lp); err == nil {
		t.Fatal("a refused lock add wrote the lock")
	}
	// The placeholder: stored as written, expanded when sent.
	t.Setenv("MCP_KEY", key)
	code, out2, stderr2 := run(t, "", "lock", "add", "one", "--lock", lp, "--url", base+"${env:MCP_KEY}/sse", "--by", "a@example.com")
	if code != 0 {
		t.Fatalf("lock add: exit %d: %s", code, stderr2)
	}
	b, _ := os.ReadFile(lp)
	if !strings.Contains(string(b), "/mcp/${env:MCP_KEY}/sse") {
		t.Errorf("placeholder not stored:\n%s", b)
	}
	code, out3, stderr3 := run(t, "", "lock", "check", "--lock", lp, "--format", "json")
	if code != 0 {
		t.Errorf("check: exit %d: %s\n%s", code, stderr3, out3)
	}
	mu.Lock()
	for _, p := range paths {
		if p != "/mcp/"+key+"/sse" {
			t.Errorf("a request went to %q", p)
		}
	}
	sent := len(paths)
	mu.Unlock()
	if sent == 0 {
		t.Fatal("nothing was sent")
	}
	// Without the variable: not observed (exit 3), naming it.
	os.Unsetenv("MCP_KEY")
	code, r, _ := lockCheck(t, lp)
	if code != 3 || r.Servers[0].Status != "not_observed" || !strings.Contains(r.Servers[0].Error, "MCP_KEY") {
		t.Errorf("check without the variable: exit %d %+v", code, r)
	}
	for _, w := range []string{string(b), out, out2, out3, stderr, stderr2, stderr3} {
		if strings.Contains(w, key) || strings.Contains(w, key[:12]) {
			t.Fatalf("the key was written: %q", w)
		}
	}
	assertDirClean(t, dir)
}

// The hostile cases of a URL placeholder and of a literal key in a lock's
// URL: a key cut by an escaped slash is still refused (the segments judged
// are the segments sent); a value holding '/' stays one segment, escaped;
// another segment's %2F is sent as written; a value too short to redact is
// refused, not written; a lock written before the rule, with a literal key,
// still reads and checks, its old endpoint the same identity as the
// redacted one.
func TestLockURLSegmentHostile(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var paths []string
	s, _ := mock(t, mockserver.Config{}, acmeV1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.EscapedPath())
		mu.Unlock()
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	sent := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(paths)
		paths = nil
		return out
	}
	add := func(name, u string) (int, string) {
		code, _, stderr := run(t, "", "lock", "add", name, "--lock", filepath.Join(dir, name+".lock"), "--url", u, "--by", "a@example.com")
		return code, stderr
	}
	if code, stderr := add("slash", ts.URL+"/mcp/sk-ak-1a2B3c%2F4D5e6F7g8H9i0J/sse"); code != 2 || !strings.Contains(stderr, "looks like a credential") || strings.Contains(stderr, "1a2B3c") {
		t.Errorf("a key cut by %%2F: exit %d %s", code, stderr)
	}
	if p := sent(); len(p) != 0 {
		t.Errorf("a refused lock add sent %v", p)
	}
	t.Setenv("SLASHED_KEY", "ab+cd/EF12gh34/IJ56kl78==")
	if code, stderr := add("value", ts.URL+"/org%2Fteam/${env:SLASHED_KEY}/sse"); code != 0 {
		t.Fatalf("a value with '/': exit %d %s", code, stderr)
	}
	for _, p := range sent() {
		if p != "/org%2Fteam/ab+cd%2FEF12gh34%2FIJ56kl78==/sse" {
			t.Errorf("sent to %q", p)
		}
	}
	t.Setenv("SHORT_KEY", "k3y9z")
	if code, stderr := add("short", ts.URL+"/mcp/${env:SHORT_KEY}/sse"); code != 2 || !strings.Contains(stderr, "shorter than") || strings.Contains(stderr, "k3y9z") {
		t.Errorf("a short value: exit %d %s", code, stderr)
	}
	if p := sent(); len(p) != 0 {
		t.Errorf("a refused lock add sent %v", p)
	}
	// A value with bytes Go escapes otherwise (a space, a ';') in a URL
	// whose path is not a valid encoding (a '{'): sent in its segment, and
	// written in no form.
	const spaced = "abc def;ghi12345 zz"
	t.Setenv("SPACED_KEY", spaced)
	code, _, stderr0 := run(t, "", "lock", "add", "spaced", "--lock", filepath.Join(dir, "spaced.lock"), "--url", ts.URL+"/a{b}/${env:SPACED_KEY}/sse", "--by", "a@example.com")
	if code != 0 {
		t.Fatalf("a spaced value: exit %d %s", code, stderr0)
	}
	for _, w := range []string{stderr0, string(mustRead(t, filepath.Join(dir, "spaced.lock")))} {
		for _, f := range []string{"def;ghi", "def%3Bghi", "ghi12345"} {
			if strings.Contains(w, f) {
				t.Errorf("the spaced value was written (%q): %s", f, w)
			}
		}
	}
	sent()
	// A header value that is also a path segment: the lock would hold a
	// secret of the run, so nothing is written (not a redacted url).
	t.Setenv("WS", "acme-workspace")
	code, _, stderr1 := run(t, "", "lock", "add", "ws", "--lock", filepath.Join(dir, "ws.lock"), "--url", ts.URL+"/acme-workspace/mcp", "--header", "X-Workspace=${env:WS}", "--by", "a@example.com")
	if code != 2 || !strings.Contains(stderr1, "never stores a secret") {
		t.Errorf("a lock that would hold a secret: exit %d %s", code, stderr1)
	}
	if _, err := os.Stat(filepath.Join(dir, "ws.lock")); err == nil {
		t.Error("the lock was written")
	}
	sent()
	// A lock written before the rule: the literal key in its url and its
	// endpoint, as the earlier version stored them.
	const key = "550e8400-e29b-41d4-a716-446655440000"
	t.Setenv("OLD_KEY", key)
	if code, stderr := add("old", ts.URL+"/mcp/${env:OLD_KEY}/sse"); code != 0 {
		t.Fatalf("lock add: exit %d %s", code, stderr)
	}
	lp := filepath.Join(dir, "old.lock")
	b, _ := os.ReadFile(lp)
	b = bytes.ReplaceAll(b, []byte("${env:OLD_KEY}"), []byte(key))
	b = bytes.ReplaceAll(b, []byte("/mcp/[REDACTED]/sse"), []byte("/mcp/"+key+"/sse"))
	if !bytes.Contains(b, []byte(`"endpoint": "`+ts.URL+"/mcp/"+key+`/sse"`)) && !bytes.Contains(b, []byte(`"endpoint":"`+ts.URL+"/mcp/"+key+`/sse"`)) {
		t.Fatalf("the old lock has no literal endpoint to test:\n%s", b)
	}
	old := filepath.Join(t.TempDir(), "old.lock") // outside dir: it holds the key, as the user's file did
	os.WriteFile(old, b, 0o644)
	code, out, stderr := run(t, "", "lock", "check", "--lock", old)
	if code != 0 {
		t.Errorf("an old lock with a literal key: exit %d %s %s", code, out, stderr)
	}
	for _, w := range []string{out, stderr} {
		if strings.Contains(w, key) {
			t.Errorf("the old lock's key was written: %q", w)
		}
	}
	// Changing it would write the key: refused, the file as it was.
	code, _, stderr = run(t, "", "approve", "old", "--lock", old, "--identity", "--by", "a@example.com")
	if code != 2 || !strings.Contains(stderr, "never stores a secret") || strings.Contains(stderr, key) {
		t.Errorf("approve of an old lock: exit %d %s", code, stderr)
	}
	if now, _ := os.ReadFile(old); !bytes.Equal(now, b) {
		t.Error("the old lock was rewritten")
	}
	assertDirClean(t, dir)
}
