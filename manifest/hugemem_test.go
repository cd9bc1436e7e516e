package manifest

import (
	"bytes"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/internal/hugemem"
)

// TestReadToolsAdvisedSame: a list large enough for its tools, its parse
// and its record to be advised into huge pages (hugemem, as the command
// line's file runs have them) reads, digests and writes the same as
// without the advice, and the advice is given. 14,000 tools: the tools
// are 4.5 MB of manifest.Tool, the record 5 MB.
func TestReadToolsAdvisedSame(t *testing.T) {
	defer hugemem.Enable(hugemem.Enabled())
	if hugemem.Enable(true); !hugemem.Enabled() {
		t.Skip("GODEBUG=disablethp is set: the advice stays off")
	}
	src := append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":`), corpus.LeanTools(14000, 3)...), "}}"...)
	read := func(on bool) (*ToolList, []byte, int64) {
		hugemem.Enable(on)
		before := hugemem.Advised()
		tl := mustList(t, src)
		b, err := MarshalArtifact(BuildObserved("big", tl, tl.Completeness, nil))
		if err != nil {
			t.Fatal(err)
		}
		return tl, b, hugemem.Advised() - before
	}
	want, wantRecord, _ := read(false)
	got, gotRecord, advised := read(true)
	if advised < 3 { // the parse's arrays, the tools, the record
		t.Fatalf("%d buffers advised, want the parse's, the tools' and the record's", advised)
	}
	if len(got.Tools) != len(want.Tools) || len(got.Tools) != 14000 {
		t.Fatalf("%d tools advised, %d not", len(got.Tools), len(want.Tools))
	}
	for i := range want.Tools {
		w, g := &want.Tools[i], &got.Tools[i]
		if w.Name != g.Name || w.Pointer != g.Pointer || w.ToolDigest() != g.ToolDigest() || !bytes.Equal(w.Value.Raw(), g.Value.Raw()) {
			t.Fatalf("tool %d: %q %s, advised %q %s", i, w.Name, w.ToolDigest(), g.Name, g.ToolDigest())
		}
	}
	if !bytes.Equal(wantRecord, gotRecord) {
		t.Fatal("the observed records differ")
	}
}
