package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// pinnedExample pins the example server (v1) into dir and returns the
// baseline's path.
func pinnedExample(t *testing.T, dir string) (decl, url string) {
	t.Helper()
	_, base := mockSSE(t, mockserver.Config{Era: mockserver.DualEra}, exampleV1)
	url = base + "/mcp"
	decl = filepath.Join(dir, "declared.json")
	if code, _, stderr := run(t, "", "pin", "--url", url, "--server-id", "s", "-o", decl); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	return decl, url
}

// TestDriftDeclaredReadOnce: the declared snapshot changes in place while
// drift lists the server. The run reads it once, whole, once the server is
// listed (its head is only peeked at before): its outcome is the outcome
// of a run against the file as changed, in every format, never a mix of
// the two files.
func TestDriftDeclaredReadOnce(t *testing.T) {
	dir := t.TempDir()
	decl, _ := pinnedExample(t, dir)
	sp := snapshotPathFor(decl)
	orig := mustRead(t, sp)
	i := bytes.Index(orig, []byte(`"search_issues"`))
	if i < 0 {
		t.Fatal("the snapshot does not name search_issues")
	}
	changed := bytes.Clone(orig)
	changed[i+1] = 'S'
	s := mockserver.MustNew(mockserver.Config{Era: mockserver.DualEra, Tools: mustTools(t, exampleV2)})
	var change bool
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if change && bytes.Contains(body, []byte(`"tools/list"`)) {
			once.Do(func() {
				// In place: one byte, the file never shorter.
				f, err := os.OpenFile(sp, os.O_WRONLY, 0)
				if err == nil {
					_, err = f.WriteAt([]byte{'S'}, int64(i+1))
					f.Close()
				}
				if err != nil {
					t.Error(err)
				}
			})
		}
		s.ServeHTTP(w, r)
	}))
	defer ts.Close()
	defer s.Close()
	for _, format := range []string{"html", "json", "text"} {
		type outcome struct {
			code           int
			stderr, report string
		}
		var got [2]outcome
		for k, changing := range []bool{false, true} {
			start := changed // the file as changed, before the run
			if changing {
				start = orig // changed while the server is listed
			}
			if err := os.WriteFile(sp, start, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "report."+format)
			os.Remove(out)
			change, once = changing, sync.Once{}
			code, _, stderr := run(t, "", "drift", decl, "--url", ts.URL, "--format", format, "--color", "never", "-o", out)
			report, _ := os.ReadFile(out)
			got[k] = outcome{code, stderr, string(report)}
		}
		if !bytes.Equal(mustRead(t, sp), changed) {
			t.Fatal("the snapshot was not changed while the server was listed")
		}
		if got[0].code != 2 || !strings.Contains(got[0].stderr, "does not recompute") {
			t.Fatalf("%s: the changed snapshot: exit %d, %s", format, got[0].code, got[0].stderr)
		}
		if got[0] != got[1] {
			t.Errorf("%s: a run whose declared file changed while it listed: %+v; against the file as changed: %+v", format, got[1], got[0])
		}
	}
}

func mustTools(t *testing.T, path string) []json.RawMessage {
	t.Helper()
	tools, err := mockserver.LoadToolsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// TestDriftDeclaredErrorsAsBefore: whatever is wrong with the declared
// snapshot (beside a baseline, or given itself), drift says what reading
// it alone says (loadTools, the reading of every other command), exit 2,
// nothing written, although it reads it beside the listing.
func TestDriftDeclaredErrorsAsBefore(t *testing.T) {
	dir := t.TempDir()
	decl, url := pinnedExample(t, dir)
	sp := snapshotPathFor(decl)
	orig := mustRead(t, sp)
	digest := regexp.MustCompile(`"manifest_digest": ?"sha256:[0-9a-f]{64}"`)
	if !digest.Match(orig) || !bytes.Contains(orig, []byte(`"name":"search_issues"`)) && !bytes.Contains(orig, []byte(`"name": "search_issues"`)) {
		t.Fatal("the pinned snapshot is not as this test expects")
	}
	name := regexp.MustCompile(`"name": ?"search_issues"`)
	edits := map[string]func([]byte) []byte{
		"another digest": func(b []byte) []byte {
			return digest.ReplaceAll(b, []byte(`"manifest_digest":"sha256:`+strings.Repeat("0", 64)+`"`))
		},
		"a null digest":    func(b []byte) []byte { return digest.ReplaceAll(b, []byte(`"manifest_digest":null`)) },
		"a repeated name":  func(b []byte) []byte { return name.ReplaceAll(b, []byte(`"name":"search_issues","name":"x"`)) },
		"a bad escape":     func(b []byte) []byte { return name.ReplaceAll(b, []byte(`"name":"search_issues","z":"\q"`)) },
		"an edited tool":   func(b []byte) []byte { return name.ReplaceAll(b, []byte(`"name":"search_issuez"`)) },
		"a nameless tool":  func(b []byte) []byte { return name.ReplaceAll(b, []byte(`"nome":"search_issues"`)) },
		"truncated":        func(b []byte) []byte { return b[:len(b)*2/3] },
		"trailing garbage": func(b []byte) []byte { return append(bytes.Clone(b), "x"...) },
		"no server id":     func(b []byte) []byte { return bytes.Replace(b, []byte(`"server"`), []byte(`"servre"`), 1) },
	}
	for what, edit := range edits {
		if err := os.WriteFile(sp, edit(bytes.Clone(orig)), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, manifestArg := range []string{decl, sp} {
			_, lerr := loadTools(&env{}, manifestArg, DefaultMaxInput)
			if lerr == nil {
				t.Fatalf("%s: loadTools accepted it", what)
			}
			out := filepath.Join(dir, "r.json")
			code, _, stderr := run(t, "", "drift", manifestArg, "--url", url, "--format", "json", "-o", out)
			if code != 2 || !strings.Contains(stderr, lerr.Error()) {
				t.Errorf("%s (%s): drift exit %d: %q\nwant the message: %v", what, filepath.Base(manifestArg), code, stderr, lerr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s: a report was written", what)
				os.Remove(out)
			}
		}
	}
}
