package manifest

import (
	"bytes"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
)

// TestMarshalArtifactFast: the artifacts written without encoding/json are
// byte for byte what encoding/json writes, for every shape an entry and a
// record can take.
func TestMarshalArtifactFast(t *testing.T) {
	ac := "fs_write"
	odd := []string{"plain", "", "a<b>&c", "quote\"back\\slash", "tab\tnl\n\x01ctl", "é日本語😀", "\u2028\u2029", "bad\xffutf8", "\x7f"}
	var entries []ToolEntry
	for i, n := range odd {
		e := ToolEntry{Name: n, ToolDigest: "sha256:" + n, Privileged: i%2 == 0, PrivilegeClassification: n}
		switch i % 4 {
		case 0:
			e.ActionClass = &ac
			e.FieldDigests = &FieldDigests{Description: "d" + n, InputSchema: "i", OutputSchema: "o", Annotations: "a"}
		case 1:
			e.FieldDigests = &FieldDigests{}
		case 2:
			e.FieldDigests = &FieldDigests{InputSchema: n}
			e.ActionClass = &n
		}
		entries = append(entries, e)
	}
	md := "sha256:x<y"
	cases := []any{
		&Declared{Schema: DeclaredSchemaID, Server: Server{ID: "s&<>"}, Canonicalization: ProjectionID, ManifestDigest: md, Tools: entries},
		&Declared{Schema: DeclaredSchemaID, Note: "a note\n", Server: Server{ID: "s"}, Tools: []ToolEntry{}},
		&Declared{},
		NotObserved("srv"),
		&Observed{Schema: ObservedSchemaID, Status: StatusObserved, Server: Server{ID: "日本"}, NonClaims: []string{},
			Observed: ObservedBody{ManifestDigest: &md, Canonicalization: ProjectionID, ToolCount: 3, PrivilegedToolCount: -1, ToolsListObserved: true, ToolsListComplete: Partial, ToolDigests: entries}},
		&Observed{},
	}
	o, d := corpusRecords(t, 300, 7)
	cases = append(cases, o, d)
	for i, c := range cases {
		want, err := marshalIndented(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := MarshalArtifact(c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			j := 0
			for j < len(got) && j < len(want) && got[j] == want[j] {
				j++
			}
			t.Errorf("case %d differs at byte %d:\n got %q\nwant %q", i, j, got[max(j-60, 0):min(j+60, len(got))], want[max(j-60, 0):min(j+60, len(want))])
		}
	}
}

// TestMarshalFastPresized: a record of typical tools is written into the
// buffer marshalFast allocates, never grown (growing to a large baseline
// by doubling allocates up to twice its size), and the estimate
// is close (at most 16 bytes an entry over).
func TestMarshalFastPresized(t *testing.T) {
	const n = 2000
	o, d := corpusRecords(t, n, 3)
	for _, c := range []any{o, d} {
		b, ok := marshalFast(c)
		if !ok {
			t.Fatalf("%T: not written fast", c)
		}
		if size := fastSize(c); len(b) > size || cap(b) != size || size-len(b) > 16*n+1024 {
			t.Errorf("%T: %d bytes written in a buffer of %d presized to %d", c, len(b), cap(b), size)
		}
	}
}

// corpusRecords are the observed record and the baseline of n corpus
// tools.
func corpusRecords(t *testing.T, n int, seed uint64) (*Observed, *Declared) {
	t.Helper()
	tl, err := ParseToolList(corpus.LeanTools(n, seed))
	if err != nil {
		t.Fatal(err)
	}
	o := BuildObserved("corpus", tl, Complete, nil)
	d, err := Pin(o, PinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return o, d
}
