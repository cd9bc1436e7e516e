package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/reffetch"
)

// docServer serves one schema document whose bytes a test can change,
// and counts the requests that reach it.
type docServer struct {
	*httptest.Server
	mu   sync.Mutex
	body []byte
	hits atomic.Int32
}

func newDocServer(t *testing.T, body string) *docServer {
	d := &docServer{body: []byte(body)}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.hits.Add(1)
		if r.URL.Path != "/schemas/rec.json" {
			http.NotFound(w, r)
			return
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		w.Write(d.body)
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *docServer) set(body string) {
	d.mu.Lock()
	d.body = []byte(body)
	d.mu.Unlock()
}

// refLock pins a live mock server whose tool "lookup" refers to the
// document server's schema, under fail-closed.
func refLock(t *testing.T, doc *docServer) (lockPath, docURL string) {
	t.Helper()
	docURL = doc.URL + "/schemas/rec.json"
	tools := []json.RawMessage{
		json.RawMessage(fmt.Sprintf(`{"name":"lookup","description":"Look up a record.","inputSchema":{"type":"object","properties":{"rec":{"$ref":%q}}}}`, docURL+"#/$defs/rec")),
		json.RawMessage(`{"name":"plain","description":"No refs.","inputSchema":{"type":"object"}}`),
	}
	s, err := mockserver.New(mockserver.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = s.ConnContext
	ts.Start()
	t.Cleanup(ts.Close)
	lockPath = filepath.Join(t.TempDir(), "mcpdrift.lock")
	if code, _, stderr := run(t, "", "lock", "add", "refs", "--lock", lockPath, "--url", ts.URL+"/mcp", "--profile", "fail-closed", "--by", "alice@example.com"); code != 0 {
		t.Fatalf("lock add: exit %d: %s", code, stderr)
	}
	return lockPath, docURL
}

func readLock(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The loop, as a user runs it: under fail-closed a tool with an unpinned
// external $ref is denied; pin-ref without --allow-private-refs refuses a
// loopback document and changes nothing; with it the document is fetched
// and pinned and the check is clean, also with --verify-refs; the
// document changes and --verify-refs denies the tool with the URL and both
// digests; --from-file pins the new copy without fetching.
func TestPinRefLoop(t *testing.T) {
	v1 := `{"$defs":{"rec":{"type":"string"}}}`
	doc := newDocServer(t, v1)
	lp, docURL := refLock(t, doc)

	code, r, stderr := lockCheck(t, lp)
	if code != 1 || len(r.Servers) != 1 || strings.Join(r.Servers[0].Pending, ",") != "lookup" {
		t.Fatalf("unpinned: exit %d %+v %s", code, r, stderr)
	}

	// Refused without --allow-private-refs: nothing fetched, nothing written.
	before := readLock(t, lp)
	code, _, stderr = run(t, "", "lock", "pin-ref", "refs", docURL+"#/$defs/rec", "--lock", lp, "--by", "bob@example.com")
	if code != 2 || !strings.Contains(stderr, "loopback") || !strings.Contains(stderr, "--allow-private-refs") || !strings.Contains(stderr, "not changed") {
		t.Fatalf("private refused: exit %d: %s", code, stderr)
	}
	if !bytes.Equal(before, readLock(t, lp)) || doc.hits.Load() != 0 {
		t.Fatalf("a refused pin changed the lock or reached the server (%d requests)", doc.hits.Load())
	}

	code, _, stderr = run(t, "", "lock", "pin-ref", "refs", docURL+"#/$defs/rec", "--lock", lp, "--allow-private-refs", "--by", "bob@example.com", "--note", "read it")
	d1 := reffetch.Digest([]byte(v1))
	if code != 0 || !strings.Contains(stderr, d1) || strings.Contains(stderr, "warning") {
		t.Fatalf("pin-ref: exit %d: %s", code, stderr)
	}
	l, err := lock.Parse(readLock(t, lp), lp)
	if err != nil {
		t.Fatal(err)
	}
	ref := l.Server("refs").Ref(docURL)
	if ref == nil || ref.SHA256 != d1 || ref.Bytes == nil || *ref.Bytes != int64(len(v1)) || ref.By != "bob@example.com" || ref.FromFile {
		t.Fatalf("the pin: %+v (refs %+v)", ref, l.Server("refs").Refs)
	}
	if h := l.Server("refs").History; h[len(h)-1].Action != lock.ActionRefPinned || h[len(h)-1].Note != "read it" {
		t.Errorf("history %+v", h)
	}

	if code, r, stderr = lockCheck(t, lp); code != 0 {
		t.Fatalf("pinned: exit %d %+v %s", code, r, stderr)
	}
	hits := doc.hits.Load()
	if code, r, stderr = lockCheck(t, lp, "--verify-refs", "--allow-private-refs"); code != 0 || doc.hits.Load() != hits+1 {
		t.Fatalf("verified: exit %d %+v %s (%d fetches)", code, r, stderr, doc.hits.Load()-hits)
	}

	// The document changes under the same URL.
	v2 := `{"$defs":{"rec":{}}}`
	doc.set(v2)
	d2 := reffetch.Digest([]byte(v2))
	if code, _, _ = lockCheck(t, lp); code != 0 {
		t.Errorf("without --verify-refs nothing is fetched and the pin stands: exit %d", code)
	}
	code, out, _ := run(t, "", "lock", "check", "--lock", lp, "--format", "json", "--verify-refs", "--allow-private-refs")
	if code != 1 || !strings.Contains(out, "external_ref_document_changed") || !strings.Contains(out, d1) || !strings.Contains(out, d2) || !strings.Contains(out, docURL) {
		t.Fatalf("changed document: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "", "lock", "check", "--lock", lp, "--color", "never", "--verify-refs", "--allow-private-refs")
	if code != 1 || !strings.Contains(out, d1) || !strings.Contains(out, d2) {
		t.Errorf("text of a changed document: exit %d\n%s", code, out)
	}
	// Verification without --allow-private-refs cannot fetch a loopback
	// document: unverified, denied under fail-closed, with a warning.
	code, out, stderr = run(t, "", "lock", "check", "--lock", lp, "--format", "json", "--verify-refs")
	if code != 1 || !strings.Contains(out, "external_ref_unverified") || !strings.Contains(stderr, "could not fetch") || !strings.Contains(stderr, "--allow-private-refs") {
		t.Errorf("unverifiable: exit %d\n%s\n%s", code, out, stderr)
	}

	// --from-file records the copy held, fetching nothing.
	held := writeFile(t, t.TempDir(), "rec.json", []byte(v2))
	hits = doc.hits.Load()
	code, _, stderr = run(t, "", "lock", "pin-ref", "refs", docURL, "--from-file", held, "--lock", lp, "--by", "bob@example.com")
	if code != 0 || !strings.Contains(stderr, "was "+d1) || doc.hits.Load() != hits {
		t.Fatalf("--from-file: exit %d: %s (%d fetches)", code, stderr, doc.hits.Load()-hits)
	}
	l, _ = lock.Parse(readLock(t, lp), lp)
	if ref := l.Server("refs").Ref(docURL); ref == nil || ref.SHA256 != d2 || !ref.FromFile {
		t.Fatalf("from-file pin: %+v", ref)
	}
	if code, r, stderr = lockCheck(t, lp, "--verify-refs", "--allow-private-refs"); code != 0 {
		t.Fatalf("re-pinned: exit %d %+v %s", code, r, stderr)
	}
}

// What pin-ref refuses, each with exit 2 and the lock unchanged.
func TestPinRefRefusals(t *testing.T) {
	doc := newDocServer(t, strings.Repeat(" ", 100))
	lp, docURL := refLock(t, doc)
	port := doc.Listener.Addr().(*net.TCPAddr).Port
	before := readLock(t, lp)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"refs", fmt.Sprintf("http://localhost:%d/schemas/rec.json", port)}, "loopback"},
		{[]string{"refs", fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/schemas/rec.json", port)}, "IPv4-mapped"},
		{[]string{"refs", "rec.json#/x"}, "relative"},
		{[]string{"refs", "urn:example:rec"}, "only http and https"},
		{[]string{"refs", "https://user:pw@schemas.example.com/rec.json"}, "user info"},
		{[]string{"nosuch", docURL, "--allow-private-refs"}, "not in"},
		{[]string{"refs", docURL, "--allow-private-refs", "--max-ref-bytes", "10"}, "larger than the limit"},
		{[]string{"refs", docURL, "--from-file", filepath.Join(t.TempDir(), "missing.json")}, "missing.json"},
		{[]string{"refs", docURL, "--from-file", t.TempDir()}, "regular file"},
		{[]string{"refs"}, "NAME and URL"},
	} {
		code, _, stderr := run(t, "", append([]string{"lock", "pin-ref", "--lock", lp, "--by", "bob@example.com"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 with %q: %s", c.args, code, c.want, stderr)
		}
		if strings.Contains(stderr, "pw@") {
			t.Errorf("%v: the URL's password was written: %s", c.args, stderr)
		}
	}
	if !bytes.Equal(before, readLock(t, lp)) {
		t.Error("a refused pin-ref changed the lock")
	}
	if n := doc.hits.Load(); n != 1 {
		t.Errorf("%d requests reached the document server, want 1 (the too-large fetch)", n)
	}
	// A document no approved tool refers to is pinned, with a warning
	// naming the documents they do refer to.
	code, _, stderr := run(t, "", "lock", "pin-ref", "refs", doc.URL+"/other.json", "--lock", lp, "--by", "bob@example.com", "--from-file", writeFile(t, t.TempDir(), "o.json", []byte("{}")))
	if code != 0 || !strings.Contains(stderr, "warning: no approved tool") || !strings.Contains(stderr, docURL) {
		t.Errorf("unreferenced: exit %d: %s", code, stderr)
	}
	// A document that cannot be had is exit 3.
	code, _, stderr = run(t, "", "lock", "pin-ref", "refs", doc.URL+"/missing.json", "--lock", lp, "--by", "bob@example.com", "--allow-private-refs")
	if code != 3 || !strings.Contains(stderr, "404") {
		t.Errorf("404: exit %d: %s", code, stderr)
	}
}

// A tool whose bytes are as approved but whose decision its external
// $refs make cannot be approved: approve says what to pin (exit 2, the
// lock unchanged), --all skips it with the same note, the interactive
// review does not ask; after pin-ref the check is clean.
func TestApproveRefOnly(t *testing.T) {
	doc := newDocServer(t, `{}`)
	lp, docURL := refLock(t, doc)
	before := readLock(t, lp)
	code, _, stderr := run(t, "", "approve", "refs", "lookup", "--lock", lp, "--by", "bob@example.com", "--i-reviewed-the-denied-change")
	if code != 2 || !strings.Contains(stderr, "lock pin-ref") || !strings.Contains(stderr, docURL) || !strings.Contains(stderr, "external_ref_present") {
		t.Fatalf("approve: exit %d: %s", code, stderr)
	}
	code, _, stderr = run(t, "", "approve", "refs", "--all", "--lock", lp, "--by", "bob@example.com")
	if code != 0 || !strings.Contains(stderr, "not approved") || !strings.Contains(stderr, docURL) {
		t.Fatalf("approve --all: exit %d: %s", code, stderr)
	}
	code, out, _ := run(t, "y\ny\n", "review", "refs", "--interactive", "--lock", lp, "--by", "bob@example.com")
	if code != 0 || !strings.Contains(out, "not asked") || strings.Contains(out, "Approve this change") {
		t.Fatalf("review: exit %d\n%s", code, out)
	}
	if !bytes.Equal(before, readLock(t, lp)) {
		t.Error("the lock changed")
	}
	if code, _, stderr = run(t, "", "lock", "pin-ref", "refs", docURL, "--lock", lp, "--by", "bob@example.com", "--allow-private-refs"); code != 0 {
		t.Fatalf("pin-ref: exit %d: %s", code, stderr)
	}
	if code, r, stderr := lockCheck(t, lp); code != 0 {
		t.Fatalf("after pin-ref: exit %d %+v %s", code, r, stderr)
	}
}
