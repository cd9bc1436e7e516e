package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/internal/par"
)

// TestParallelDigestsAgree: a list large enough to be digested on every
// CPU (digestTools, BuildObserved) gets, tool by tool, the digests, field
// digests and classification computed one tool at a time, in order, and
// the same through a snapshot. (par.Range covering every index once is internal/par's test.)
func TestParallelDigestsAgree(t *testing.T) {
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	n := 4*par.Chunk + 37
	tl, err := ParseToolList(corpus.LeanTools(n, 7))
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Tools) != n {
		t.Fatalf("%d tools", len(tl.Tools))
	}
	o := BuildObserved("s", tl, tl.Completeness, nil)
	c := classify.Default()
	for i := range tl.Tools {
		tool := &tl.Tools[i]
		want := Digest(tool.Proj().AppendToolPreimage(nil))
		if tool.digest != want {
			t.Fatalf("tool %d: digest %s, want %s", i, tool.digest, want)
		}
		fd, _ := tool.Proj().FieldDigests(nil)
		e := o.Observed.ToolDigests[i]
		r := c.Classify(tool.Name)
		if e.Name != tool.Name || e.ToolDigest != want || *e.FieldDigests != fd || e.Privileged != r.Privileged || e.PrivilegeClassification != r.Classification {
			t.Fatalf("tool %d: entry %+v, want %s %s %+v %+v", i, e, tool.Name, want, fd, r)
		}
	}
	sb, err := MarshalSnapshot("s", Identity{Endpoint: "e"}, tl, tl.Completeness)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadTools(sb, "snap.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Snapshot.Tools {
		if d := got.Snapshot.Tools[i].digest; d != tl.Tools[i].digest {
			t.Fatalf("snapshot tool %d: digest %s, want %s", i, d, tl.Tools[i].digest)
		}
	}
}

// TestSnapshotWriterAgrees: WriteTo writes, byte for byte, what
// MarshalSnapshotWith returns, Size says how many, and a failing writer's
// error is returned: an empty list, one tool, a list with client
// capabilities, and a large list.
func TestSnapshotWriterAgrees(t *testing.T) {
	one, err := ParseToolList([]byte(`[{"name":"a","inputSchema":{"type":"object"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	empty, err := ParseToolList([]byte(`{"tools":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	large, err := ParseToolList(corpus.LeanTools(300, 2))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		tl  *ToolList
		opt SnapshotOptions
	}{
		"empty": {empty, SnapshotOptions{}}, "one": {one, SnapshotOptions{}},
		"caps":  {one, SnapshotOptions{ClientCapabilities: []byte(`{"sampling":{}, "roots":{"listChanged":true}}`)}},
		"large": {large, SnapshotOptions{}},
	} {
		want, err := MarshalSnapshotWith("s", Identity{Endpoint: "e"}, c.tl, Complete, c.opt)
		if err != nil {
			t.Fatal(name, err)
		}
		sw, err := NewSnapshotWriter("s", Identity{Endpoint: "e"}, c.tl, Complete, c.opt)
		if err != nil {
			t.Fatal(name, err)
		}
		var b bytes.Buffer
		n, err := sw.WriteTo(&b)
		if err != nil || !bytes.Equal(b.Bytes(), want) || n != int64(len(want)) || sw.Size() != len(want) {
			t.Errorf("%s: WriteTo %d bytes (%v), Size %d, MarshalSnapshotWith %d, equal %v", name, n, err, sw.Size(), len(want), bytes.Equal(b.Bytes(), want))
		}
		if _, err := ReadTools(b.Bytes(), "snap.json"); err != nil {
			t.Errorf("%s: the written snapshot does not read back: %v", name, err)
		}
		// Into a buffer holding bytes already: after them, in one array.
		held := bytes.NewBufferString("held")
		if _, err := sw.WriteTo(held); err != nil || held.String() != "held"+string(want) || held.Cap() > (len(want)+4)*17/16+64 {
			t.Errorf("%s: into a buffer holding 4 bytes: %v, %d bytes in an array of %d", name, err, held.Len(), held.Cap())
		}
		if _, err := sw.WriteTo(failAfter{n: 40}); !errors.Is(err, errFailAfter) {
			t.Errorf("%s: a failing writer gave %v", name, err)
		}
	}
	if _, err := NewSnapshotWriter("s", Identity{}, one, Complete, SnapshotOptions{ClientCapabilities: []byte(`[]`)}); err == nil {
		t.Error("client capabilities that are not an object were accepted")
	}
}

var errFailAfter = errors.New("the writer failed")

// failAfter accepts n bytes, then fails.
type failAfter struct{ n int }

func (f failAfter) Write(b []byte) (int, error) {
	if len(b) > f.n {
		return f.n, errFailAfter
	}
	return len(b), nil
}

// ImpreciseNumbers over many tools (spread over the CPUs) finds what one
// walk in tool order finds: the same first numbers up to the limit, in
// the same order, and the same total.
func TestImpreciseNumbersParallel(t *testing.T) {
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	const n = 4 * par.Chunk
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","inputSchema":{"type":"object"`, i)
		if i%7 == 3 {
			fmt.Fprintf(&b, `,"properties":{"id":{"maximum":%d}}`, int64(9007199254740993)+int64(2*i))
		}
		if i%11 == 5 {
			b.WriteString(`,"x":{"y":[1,12345678901234567890.5e3]}`)
		}
		b.WriteString(`}}`)
	}
	b.WriteString(`]}`)
	tl, err := ParseToolList([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{-1, 0, 1, 50, 500} {
		got, gotTotal := ImpreciseNumbers(tl.Tools, limit)
		want, wantTotal := impreciseNumbersOf(tl.Tools, limit)
		if gotTotal != wantTotal || !reflect.DeepEqual(got, want) {
			t.Fatalf("limit %d: %d numbers (total %d), want %d (total %d)", limit, len(got), gotTotal, len(want), wantTotal)
		}
		if limit < 0 && wantTotal < n/7 {
			t.Fatalf("only %d numbers found", wantTotal)
		}
	}
}

// A list sorted on two CPUs (sortedEntries) is sorted as one sort sorts it,
// repeated names and entries included.
func TestSortedEntriesParallel(t *testing.T) {
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	var es []NameDigest
	for i := range 3*parallelSort + 7 {
		es = append(es, NameDigest{Name: fmt.Sprintf("t%d", (i*7919)%(parallelSort+11)), ToolDigest: fmt.Sprintf("d%d", i%3)})
	}
	got := sortedEntries(es)
	want := slices.Clone(es)
	slices.SortFunc(want, compareEntries)
	if !slices.Equal(got, want) {
		t.Fatal("the parallel sort differs from one sort")
	}
	if !slices.IsSortedFunc(got, compareEntries) || len(got) != len(es) {
		t.Fatal("not sorted")
	}
}

// A list read on every CPU (addTools) is the list read on one: the same
// tools in order with their pointers and digests, the same unreadable
// entries in order, and the same first error.
func TestAddToolsParallelAgrees(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	const n = 6*par.Chunk + 5
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case i%97 == 13:
			b.WriteString(`17`)
		case i%89 == 7:
			b.WriteString(`{"description":"no name"}`)
		default:
			fmt.Fprintf(&b, `{"name":"t%d","inputSchema":{"type":"object","properties":{"p%d":{"type":"string"}}}}`, i, i)
		}
	}
	b.WriteString(`]}`)
	src := []byte(b.String())
	read := func(procs int, opt ParseOptions) (*ToolList, error) {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		return ParseToolListWith(src, opt)
	}
	one, err := read(1, ParseOptions{SkipInvalidTools: true})
	if err != nil {
		t.Fatal(err)
	}
	many, err := read(4, ParseOptions{SkipInvalidTools: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Tools) != len(many.Tools) || !reflect.DeepEqual(one.Invalid, many.Invalid) || len(one.Invalid) < 50 {
		t.Fatalf("%d tools, %d invalid on one CPU; %d, %d on four", len(one.Tools), len(one.Invalid), len(many.Tools), len(many.Invalid))
	}
	for i := range one.Tools {
		a, c := &one.Tools[i], &many.Tools[i]
		if a.Name != c.Name || a.Pointer != c.Pointer || a.ToolDigest() != c.ToolDigest() || a.FieldDigests() != c.FieldDigests() {
			t.Fatalf("tool %d: %s %s / %s %s", i, a.Name, a.Pointer, c.Name, c.Pointer)
		}
	}
	_, e1 := read(1, ParseOptions{})
	_, e4 := read(4, ParseOptions{})
	if e1 == nil || e4 == nil || e1.Error() != e4.Error() {
		t.Fatalf("first error: %v / %v", e1, e4)
	}
	// A bare tool array with a page in it, after an unreadable entry: the
	// first error in order, and when unreadable entries are skipped, the
	// page is still an error.
	bare := []byte(`[{"name":"a"},17,{"tools":[]},{"name":"b"}]`)
	if _, err := ParseToolListWith(bare, ParseOptions{}); err == nil || !strings.Contains(err.Error(), "must be an object") {
		t.Fatalf("bare array: %v", err)
	}
	if _, err := ParseToolListWith(bare, ParseOptions{SkipInvalidTools: true}); err == nil || !strings.Contains(err.Error(), "mixed forms") {
		t.Fatalf("bare array, skipping: %v", err)
	}
}

// TestManifestDigestSizedOnce: the manifest projection is written into one
// buffer sized for it, whatever the length of the names (a list of long
// names was copied as its buffer grew): as many allocations for names of
// 200 bytes as for names of 2.
func TestManifestDigestSizedOnce(t *testing.T) {
	entries := func(nameLen int) []NameDigest {
		es := make([]NameDigest, 2000)
		for i := range es {
			es[i] = NameDigest{Name: fmt.Sprintf("%0*d", nameLen, i), ToolDigest: "sha256:" + strings.Repeat("ab", 32)}
		}
		return es
	}
	short, long := entries(4), entries(200)
	a := testing.AllocsPerRun(5, func() { ManifestDigest(short) })
	b := testing.AllocsPerRun(5, func() { ManifestDigest(long) })
	if b > a {
		t.Errorf("%v allocations for long names, %v for short ones", b, a)
	}
}
