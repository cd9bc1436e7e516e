package jcs_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// checkEach checks ParseEach against Parse on src: the same error, and
// without one, the elements fn was handed are the key member's elements
// (their raw bytes, offsets and canonical forms), and the returned Doc is
// Parse's with that array empty.
func checkEach(t *testing.T, src []byte, key string) {
	t.Helper()
	want, werr := jcs.Parse(src)
	type elem struct {
		raw, canon []byte
		off        int
	}
	var got []elem
	next := 0
	doc, gerr := jcs.ParseEach(src, key, func(i int, v jcs.Value) {
		if i == 0 {
			next = 0 // a second member of that name starts again (and is a duplicate)
		}
		if i != next {
			t.Fatalf("element %d handed as %d", next, i)
		}
		next++
		got = append(got, elem{append([]byte(nil), v.Raw()...), v.Canonical(), v.Offset()})
	})
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("Parse: %v\nParseEach: %v", werr, gerr)
	}
	if werr != nil {
		return
	}
	root := want.Root()
	arr, ok := root.Get(key)
	streamed := ok && root.Kind() == jcs.Object && arr.Kind() == jcs.Array
	if !streamed {
		if len(got) != 0 {
			t.Fatalf("%d elements handed of no array member %q", len(got), key)
		}
		if !bytes.Equal(doc.Root().Canonical(), root.Canonical()) {
			t.Fatalf("the tree differs from Parse's")
		}
		return
	}
	if len(got) != arr.Len() {
		t.Fatalf("%d elements handed, the array has %d", len(got), arr.Len())
	}
	for i, e := range got {
		w := arr.Index(i)
		if !bytes.Equal(e.raw, w.Raw()) || e.off != w.Offset() || !bytes.Equal(e.canon, w.Canonical()) {
			t.Fatalf("element %d: %q at %d (%s), Parse: %q at %d (%s)", i, e.raw, e.off, e.canon, w.Raw(), w.Offset(), w.Canonical())
		}
	}
	ga, _ := doc.Root().Get(key)
	if ga.Kind() != jcs.Array || ga.Len() != 0 || !bytes.Equal(ga.Raw(), arr.Raw()) || ga.Offset() != arr.Offset() {
		t.Fatalf("the streamed member reads as %s of %d elements, raw %q", ga.Kind(), ga.Len(), ga.Raw())
	}
	// The rest of the tree is Parse's: compare the canonical forms of
	// every other member.
	if doc.Root().Len() != root.Len() {
		t.Fatalf("%d members, Parse %d", doc.Root().Len(), root.Len())
	}
	for i := range root.Len() {
		wk, wv := root.Member(i)
		gk, gv := doc.Root().Member(i)
		if wk.Str() != gk.Str() {
			t.Fatalf("member %d: %q, Parse %q", i, gk.Str(), wk.Str())
		}
		if wk.Str() != key && !bytes.Equal(wv.Canonical(), gv.Canonical()) {
			t.Fatalf("member %q differs from Parse's", wk.Str())
		}
	}
}

func TestParseEach(t *testing.T) {
	for _, src := range []string{
		`{"tools":[]}`,
		`{"tools":[1,"two",{"a":[3,{"b":"\u00e9\n"}]},[4.5e1,-0],null,true,false]}`,
		`{"schema":"x","tools":[{"name":"a"},{"name":"b\"c"}],"after":{"k":[1,2,{"z":1e400}]}}`,
		`{"to\u006fls":[{"n":1}],"x":1}`,    // an escaped member name names the member
		`{"a":{"tools":[1,2]},"tools":[3]}`, // only the top-level member
		`[{"tools":[1]}]`,                   // not an object
		`{"tools":{"a":[1]}}`,               // not an array
		`{"tools":"[1,2]"}`,                 // a string
		`{"tools":[1,2],"tools":[3]}`,       // a repeated member
		`{"tools":[1,2,}`,                   // broken in the array
		`{"tools":[{"a":1,"a":2}]}`,         // a duplicate inside an element
		`{"tools":[1,2]} x`,                 // trailing data
		`{"tools":[1,2],"b":nan}`,           // an error after the array
		`{"tools":[1 2]}`,                   // no comma
		`{"tools":[1,2`,                     // the end of input
		`{"tools":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}`,
		` {"tools" : [ 1 , 2 ] } `,
	} {
		t.Run("", func(t *testing.T) { checkEach(t, []byte(src), "tools") })
	}
	// Random documents: the generator's values under a "tools" member.
	g := &docGen{r: rand.New(rand.NewPCG(7, 8))}
	for i := range 300 {
		w := &writer{g: g, target: -1}
		w.value(g.value(0), "")
		src := fmt.Appendf(nil, `{"head":%d,"tools":[%s,%s],"tail":%s}`, i, w.b, w.b, w.b)
		checkEach(t, src, "tools")
	}
}

// TestParseEachStaleValue: a Value kept past its call of fn does not read
// the next element's tree; it panics.
func TestParseEachStaleValue(t *testing.T) {
	var kept jcs.Value
	if _, err := jcs.ParseEach([]byte(`{"tools":[{"a":1},{"b":2}]}`), "tools", func(i int, v jcs.Value) {
		if i == 0 {
			kept = v
		}
	}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a stale Value was read")
		}
	}()
	_ = kept.Kind()
}

// TestParseEachMemory: the tree held is the largest element's, not the
// whole array's.
func TestParseEachMemory(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for i := range 20000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","inputSchema":{"type":"object","properties":{"a":{"type":"string","description":"x\ny"}}}}`, i)
	}
	b.WriteString(`]}`)
	src := b.Bytes()
	n := 0
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := jcs.ParseEach(src, "tools", func(int, jcs.Value) { n++ }); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// Parse's tree of these 2.2 MB is about 3 MB; one element's, a few
	// hundred bytes.
	if got := after.TotalAlloc - before.TotalAlloc; n != 20000 || got > 64<<10 {
		t.Fatalf("%d elements, %d bytes allocated: the tree grows with the array", n, got)
	}
}

func FuzzParseEach(f *testing.F) {
	addSeeds(f)
	f.Add([]byte(`{"tools":[{"name":"a"},1,[2]],"x":{"tools":[3]}}`))
	f.Add([]byte(`{"tools":[1],"tools":[2]}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		checkEach(t, src, "tools")
		if len(src) > 2 && src[0] == '{' {
			// The same document under the member name its first member has.
			doc, err := jcs.Parse(src)
			if err == nil && doc.Root().Kind() == jcs.Object && doc.Root().Len() > 0 {
				k, _ := doc.Root().Member(0)
				checkEach(t, src, k.Str())
			}
		}
	})
}
