package manifest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/jcs"
)

// wholeSnapshot is ParseSnapshot with the whole text parsed as one tree.
func wholeSnapshot(src []byte) (*Snapshot, error) {
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, &ArtifactError{"f", err}
	}
	return parseSnapshot(doc, "f")
}

// sameSnapshotRead fails t when the snapshot read in parts (when it is)
// is not the snapshot read whole: the same tools, bytes and digests, or
// the same error.
func sameSnapshotRead(t testing.TB, src []byte) (parts bool) {
	got, gerr, ok := parseSnapshotParts(src, "f")
	if !ok {
		return false
	}
	want, werr := wholeSnapshot(src)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%.200q:\n in parts: %v\n whole:    %v", src, gerr, werr)
	}
	if werr != nil {
		return true
	}
	if got.ManifestDigest != want.ManifestDigest || len(got.Tools) != len(want.Tools) || !bytes.Equal(got.Surface, want.Surface) ||
		got.ServerID != want.ServerID || !bytes.Equal(got.ClientCapabilities, want.ClientCapabilities) {
		t.Fatalf("%.200q: read in parts differs from whole", src)
	}
	for i := range got.Tools {
		g, w := &got.Tools[i], &want.Tools[i]
		if g.Name != w.Name || g.Pointer != w.Pointer || !bytes.Equal(g.Raw(), w.Raw()) || g.ToolDigest() != w.ToolDigest() ||
			g.FieldDigests() != w.FieldDigests() || g.ShapeProblem() != w.ShapeProblem() || g.Ambiguity() != w.Ambiguity() || g.inexact != w.inexact {
			t.Fatalf("tool %d read in parts differs from whole", i)
		}
	}
	return true
}

// TestSnapshotParts: a snapshot is read in parts exactly as it is read
// whole, and a text laid out otherwise, or hostile, is read whole (or
// refused as the whole read refuses it).
func TestSnapshotParts(t *testing.T) {
	good, err := MarshalSnapshot("s", Identity{Endpoint: "e"}, mustList(t, corpus.Tools(30, 4)), Complete)
	if err != nil {
		t.Fatal(err)
	}
	if !sameSnapshotRead(t, good) {
		t.Fatal("a snapshot mcpdrift wrote was not read in parts")
	}
	head := `{"schema":"mcpdrift.tool_snapshot.v1","server":{"id":"s"},"canonicalization":"assay.mcp_manifest_projection.v0","manifest_digest":null,"tools_list_complete":"complete",`
	deep := strings.Repeat("[", jcs.MaxDepth-3) + strings.Repeat("]", jcs.MaxDepth-3)
	for _, c := range []struct {
		tail  string
		parts bool // read in parts (else whole)
	}{
		{`"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`, true},
		{`"tools":[]}`, true},
		{`"tools":[{"name":"a"},{"name":"a"}]}`, true},
		{`"tools":[{"name":"a"} , {"name":"b","d":"]}\"["}]}`, true},
		{`"tools":[{"name":"a","x":` + deep + `}]}`, true},             // within the depth bound whole, and so in parts
		{`"tools":[{"name":"a","x":[` + deep + `]}]}`, false},          // beyond it: refused whole, and in parts
		{`"tools":[{"name":"a"}],"tools":[{"name":"b"}]}`, false},      // twice: the rest refuses a duplicate
		{`"tools":[{"name":"a"}],"\u0074ools":[{"name":"b"}]}`, false}, // twice, once escaped
		{`"\u0074ools":[{"name":"a"}]}`, false},                        // only escaped: not found, read whole
		{`"tools":[{"name":"a"} x]}`, false},
		{`"tools":[{"name":"a"},]}`, false},
		{`"tools":[{"name":"a"}}`, false},
		{`"tools":[{"name":"a","b":1,"b":2}]}`, false},
		{`"tools":[tru]}`, false},
		{`"tools":{"name":"a"}}`, false},
		{`"tools":[{"name":"\ud800"}]}`, false},
		{`"tools":[1]}`, true},
		{`"tools":["x"]}`, true},
	} {
		src := []byte(head + c.tail)
		if got := sameSnapshotRead(t, src); got != c.parts {
			_, err := wholeSnapshot(src)
			t.Errorf("%s: read in parts %v, want %v (whole: %v)", c.tail, got, c.parts, err)
		}
		// Either way, ParseSnapshot says what the whole read says.
		_, err := ParseSnapshot(src, "f")
		_, werr := wholeSnapshot(src)
		if fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Errorf("%s: ParseSnapshot %v, whole %v", c.tail, err, werr)
		}
	}
}

// FuzzSnapshotParts: whatever the text, reading it in parts agrees with
// reading it whole.
func FuzzSnapshotParts(f *testing.F) {
	good, _ := MarshalSnapshot("s", Identity{Endpoint: "e"}, mustList(f, corpus.Tools(3, 4)), Complete)
	f.Add(good)
	f.Add([]byte(`{"schema":"mcpdrift.tool_snapshot.v1","tools":[{"name":"a"},{"name":"b"}],"tools":[]}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		sameSnapshotRead(t, src)
		_, err := ParseSnapshot(src, "f")
		_, werr := wholeSnapshot(src)
		if fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("%.200q: ParseSnapshot %v, whole %v", src, err, werr)
		}
	})
}
