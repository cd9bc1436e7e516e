package manifest

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// countingAt counts the bytes read through it.
type countingAt struct {
	r    io.ReaderAt
	read atomic.Int64
}

func (c *countingAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.read.Add(int64(n))
	return n, err
}

// TestPeekHeadAtReadsTheHead: peeking a large snapshot or baseline file
// reads a few kilobytes, not PeekLimit bytes, and learns what PeekHead
// learns from the whole of it; a head that runs past PeekLimit is not
// peeked, however long the file.
func TestPeekHeadAtReadsTheHead(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 3000 {
		fmt.Fprintf(&b, `{"name":"t%d","description":"%s"},`, i, strings.Repeat("d", 1000))
	}
	b.WriteString(`{"name":"u"}]`)
	tools := b.String()
	tl, err := ParseToolList([]byte(`{"tools":` + tools + `}`))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := MarshalSnapshotWith("s", Identity{Endpoint: "e"}, tl, Complete, SnapshotOptions{ClientCapabilities: []byte(`{"roots":{"listChanged":true}}`)})
	if err != nil {
		t.Fatal(err)
	}
	base := declaredOf(t, tools)
	for name, doc := range map[string][]byte{"snapshot": snap, "baseline": base} {
		if len(doc) < 2*PeekLimit && name == "snapshot" {
			t.Fatalf("the %s is %d bytes: too small to tell", name, len(doc))
		}
		c := &countingAt{r: bytes.NewReader(doc)}
		got, want := PeekHeadAt(c, int64(len(doc))), PeekHead(doc)
		if got.Schema == "" || got.Schema != want.Schema || !bytes.Equal(got.ClientCapabilities, want.ClientCapabilities) {
			t.Fatalf("%s: PeekHeadAt %+v, PeekHead %+v", name, got, want)
		}
		if n := c.read.Load(); n > 16<<10 {
			t.Errorf("%s: peeking its head read %d bytes (at most 16 KiB)", name, n)
		}
	}
	if got := PeekHead(snap); got.Schema != SnapshotSchemaID || string(got.ClientCapabilities) != `{"roots":{"listChanged":true}}` {
		t.Fatalf("the snapshot's head: %+v", got)
	}
	// A head longer than PeekLimit: nothing learnt, and no more than
	// PeekLimit bytes read.
	long := []byte(`{"pad":"` + strings.Repeat("x", PeekLimit) + `","schema":"mcpdrift.tool_snapshot.v1","tools":[]}`)
	c := &countingAt{r: bytes.NewReader(long)}
	if got := PeekHeadAt(c, int64(len(long))); got.Schema != "" {
		t.Fatalf("a head past PeekLimit peeked as %+v", got)
	}
	if n := c.read.Load(); n > PeekLimit {
		t.Fatalf("read %d bytes past a head longer than PeekLimit (%d)", n, PeekLimit)
	}
}
