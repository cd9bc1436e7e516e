package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
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

// TestDeclaredHollow: drift's declared snapshot, read from a regular file,
// is held hollow (no parse, no bytes) and unsettled until the listing;
// settled, it reads as loadTools reads it; its tools read their bytes
// again from the file, and a file changed under the run is refused.
func TestDeclaredHollow(t *testing.T) {
	dir := t.TempDir()
	decl, _ := pinnedExample(t, dir)
	want, err := loadTools(&env{}, decl, DefaultMaxInput)
	if err != nil {
		t.Fatal(err)
	}
	d := startDeclared(&env{}, decl, DefaultMaxInput, nil)
	defer d.close()
	in, _, err := d.wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Tools) != len(want.Tools) || len(in.Tools) == 0 {
		t.Fatalf("%d tools, want %d", len(in.Tools), len(want.Tools))
	}
	for i := range in.Tools {
		if !in.Tools[i].IsHollow() {
			t.Fatalf("%s: not hollow", in.Tools[i].Name)
		}
	}
	// Settled with served tools of the same bytes for some, none for the
	// others: the digests are those loadTools computes.
	served := append([]manifest.Tool(nil), want.Tools[1:]...)
	if err := d.settle(served); err != nil {
		t.Fatal(err)
	}
	in, _, _ = d.wait()
	if in.ManifestDigest != want.ManifestDigest {
		t.Fatalf("manifest digest %s, want %s", in.ManifestDigest, want.ManifestDigest)
	}
	for i := range in.Tools {
		if in.Tools[i].ToolDigest() != want.Tools[i].ToolDigest() || in.Tools[i].FieldDigests() != want.Tools[i].FieldDigests() {
			t.Fatalf("%s: digests differ", in.Tools[i].Name)
		}
	}
	// The file changes in place under the run: reading a tool again is
	// refused, whatever reads it.
	sp := snapshotPathFor(decl)
	b := mustRead(t, sp)
	i := bytes.Index(b, []byte(`"search_issues"`))
	if i < 0 {
		t.Fatal("the snapshot does not name search_issues")
	}
	b[i+1] = 'S'
	if err := os.WriteFile(sp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	err = attachAll(in.Tools, nil)
	if !errors.Is(err, manifest.ErrBytesChanged) {
		t.Fatalf("attached from a changed file: %v", err)
	}
}

// TestHollowServed: a lean served tool with the bytes of the declared tool
// of its name becomes hollow on it; any other keeps a copy of its bytes
// of its own.
func TestHollowServed(t *testing.T) {
	dir := t.TempDir()
	decl, _ := pinnedExample(t, dir)
	d := startDeclared(&env{}, decl, DefaultMaxInput, nil)
	defer d.close()
	in, _, err := d.wait()
	if err != nil {
		t.Fatal(err)
	}
	served := leanServed(t, exampleV2)
	// The declared tools are framed: nameless until settled, known by
	// their bytes.
	for i := range in.Tools {
		if in.Tools[i].Name != "" {
			t.Fatalf("a framed tool is named %q before it is settled", in.Tools[i].Name)
		}
	}
	byName := bySum(in.Tools)
	want, err := loadTools(&env{}, decl, DefaultMaxInput)
	if err != nil {
		t.Fatal(err)
	}
	declared := manifest.FirstByName(want.Tools)
	same := map[string]bool{}
	for i := range served {
		if dt := declared[served[i].Name]; dt != nil && dt.SameBytes(&served[i]) {
			same[served[i].Name] = true
		}
	}
	if len(same) == 0 || len(same) == len(served) {
		t.Fatalf("%d of %d served tools are unchanged: the example needs both", len(same), len(served))
	}
	hollowServed(byName, served)
	for i := range served {
		st := &served[i]
		if st.IsHollow() != same[st.Name] {
			t.Errorf("%s: hollow %v, unchanged %v", st.Name, st.IsHollow(), same[st.Name])
		}
		if !st.IsHollow() {
			b, err := st.Bytes()
			if err != nil || len(b) == 0 {
				t.Errorf("%s: bytes %v", st.Name, err)
			}
		}
	}
	// Settled from them: each unchanged tool takes its digests.
	if err := d.settle(served); err != nil {
		t.Fatal(err)
	}
}

// TestDriftDeclaredFileChanges: the declared snapshot changes in place
// while drift lists the server. Whichever the run read (the file before
// or after the change, or a tool of it again afterwards), it never gives
// a verdict from bytes it did not check: exit 2, nothing written.
func TestDriftDeclaredFileChanges(t *testing.T) {
	dir := t.TempDir()
	decl, _ := pinnedExample(t, dir)
	sp := snapshotPathFor(decl)
	orig := mustRead(t, sp)
	i := bytes.Index(orig, []byte(`"search_issues"`))
	if i < 0 {
		t.Fatal("the snapshot does not name search_issues")
	}
	s := mockserver.MustNew(mockserver.Config{Era: mockserver.DualEra, Tools: mustTools(t, exampleV1)})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/list"`)) {
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
	for _, format := range []string{"html", "json"} {
		once = sync.Once{}
		if err := os.WriteFile(sp, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "report."+format)
		code, _, stderr := run(t, "", "drift", decl, "--base-url", ts.URL, "--format", format, "-o", out)
		t.Logf("%s: exit %d: %s", format, code, stderr)
		if format == "json" && code != 2 {
			// A json report reads no unchanged tool again: a run that
			// read the whole file before it changed has no reason to
			// read it again, and its verdict is on what it read.
			if code != 0 && code != 1 {
				t.Fatalf("json: exit %d: %s", code, stderr)
			}
			continue
		}
		if code != 2 || !(strings.Contains(stderr, "changed while it was read") || strings.Contains(stderr, "does not recompute")) {
			t.Fatalf("%s: exit %d, want 2: %s", format, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s: a report was written", format)
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
// it whole says (loadTools, the reading of every other command), exit 2,
// nothing written: the framed, deferred reading finds some of it late,
// or only from the baseline's side, and must not say it otherwise.
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
			code, _, stderr := run(t, "", "drift", manifestArg, "--base-url", url, "--format", "json", "-o", out)
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

// TestSharedServed: a declared side that keeps its bytes (read from stdin,
// which cannot be read again) is not made hollow, and a served tool with
// the bytes of a declared tool shares that tool's bytes instead of
// keeping its page's; a changed one keeps a copy of its own.
func TestSharedServed(t *testing.T) {
	src := mustRead(t, exampleV1)
	d := startDeclared(&env{stdin: bytes.NewReader(src)}, "-", DefaultMaxInput, nil)
	defer d.close()
	in, _, err := d.wait()
	if err != nil {
		t.Fatal(err)
	}
	for i := range in.Tools {
		if in.Tools[i].IsHollow() || !in.Tools[i].IsLean() {
			t.Fatalf("%s: hollow %v, lean %v", in.Tools[i].Name, in.Tools[i].IsHollow(), in.Tools[i].IsLean())
		}
	}
	served := leanServed(t, exampleV2)
	declared := manifest.FirstByName(in.Tools)
	hollowServed(bySum(in.Tools), served)
	shared, owned := 0, 0
	for i := range served {
		st := &served[i]
		dt := declared[st.Name]
		same := dt != nil && dt.SameBytes(st)
		if st.IsHollow() {
			t.Fatalf("%s: hollow on a declared side that keeps its bytes", st.Name)
		}
		switch {
		case same && &st.Raw()[0] == &dt.Raw()[0]:
			shared++
		case same:
			t.Errorf("%s: unchanged, but keeps bytes of its own", st.Name)
		default:
			owned++
		}
	}
	if shared == 0 || owned == 0 {
		t.Fatalf("%d shared, %d of their own: the example needs both", shared, owned)
	}
	if err := d.settle(served); err != nil {
		t.Fatal(err)
	}
}

// leanServed are the tools of path, lean, as a listing holds them.
func leanServed(t *testing.T, path string) []manifest.Tool {
	t.Helper()
	list, err := loadTools(&env{}, path, DefaultMaxInput)
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Tools {
		list.Tools[i].Lean()
	}
	return list.Tools
}
