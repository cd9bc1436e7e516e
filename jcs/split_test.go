package jcs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
)

// parseWith parses src serially (groups 0) or with that many parts and no
// size threshold, and returns how many helpers' trees were spliced in.
func parseWith(t testing.TB, src []byte, groups int) (*Doc, error, int64) {
	t.Helper()
	oldMin, oldGroups, oldWait := parallelMin, parallelGroups, splitWait
	defer func() { parallelMin, parallelGroups, splitWait = oldMin, oldGroups, oldWait }()
	if groups == 0 {
		parallelMin = math.MaxInt
	} else {
		parallelMin, parallelGroups, splitWait = 0, groups, true
	}
	before := splices.Load()
	d, err := Parse(src)
	return d, err, splices.Load() - before
}

// sameParse fails unless the parallel parse of src with groups parts gives
// the serial parse's Doc (every slice equal) or its error (every field),
// and returns how many helpers were spliced in.
func sameParse(t testing.TB, name string, src []byte, groups int) int64 {
	t.Helper()
	want, wantErr, _ := parseWith(t, src, 0)
	got, gotErr, n := parseWith(t, src, groups)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s (%d groups): serial error %v, parallel error %v", name, groups, wantErr, gotErr)
	}
	if wantErr != nil {
		if !reflect.DeepEqual(wantErr, gotErr) || wantErr.Error() != gotErr.Error() {
			t.Fatalf("%s (%d groups): errors differ:\n serial   %#v\n parallel %#v", name, groups, wantErr, gotErr)
		}
		return n
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s (%d groups): trees differ: %s", name, groups, docDiff(want, got))
	}
	if !bytes.Equal(want.Root().Canonical(), got.Root().Canonical()) {
		t.Fatalf("%s (%d groups): canonical forms differ", name, groups)
	}
	return n
}

func docDiff(a, b *Doc) string {
	switch {
	case !reflect.DeepEqual(a.nodes, b.nodes):
		return fmt.Sprintf("nodes (%d vs %d)", len(a.nodes), len(b.nodes))
	case !reflect.DeepEqual(a.kinds, b.kinds):
		return "kinds"
	case !reflect.DeepEqual(a.kids, b.kids):
		return fmt.Sprintf("kids (%d vs %d)", len(a.kids), len(b.kids))
	case !reflect.DeepEqual(a.escs, b.escs):
		return "escs"
	case !reflect.DeepEqual(a.floats, b.floats):
		return "floats"
	case !reflect.DeepEqual(a.sbuf, b.sbuf):
		return "sbuf"
	}
	return "src"
}

func indent(t testing.TB, src []byte) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, src, "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// splitDocs are valid documents of several shapes: the corpus's tool
// lists (bare, in a response, pages of responses), indented, and the
// cyberphone inputs.
func splitDocs(t testing.TB) map[string][]byte {
	docs := map[string][]byte{
		"Tools(40,1)":             corpus.Tools(40, 1),
		"LeanTools(300,2)":        corpus.LeanTools(300, 2),
		"ToolsListResponse(30,3)": corpus.ToolsListResponse(30, 3),
		"Pages(60,7,4)":           corpus.Pages(60, 7, 4),
		"Pages(5,1,5)":            corpus.Pages(5, 1, 5),
		"LeanTools(2,6)":          corpus.LeanTools(2, 6),
		"LeanTools(0,6)":          corpus.LeanTools(0, 6),
		"LeanTools(1500,8)":       corpus.LeanTools(1500, 8), // ~2.5 MB: the index moves of a splice in two halves
	}
	docs["indented LeanTools(200,7)"] = indent(t, corpus.LeanTools(200, 7))
	docs["indented Pages(40,9,8)"] = indent(t, corpus.Pages(40, 9, 8))
	// Array-looking text inside strings, and arrays of scalars.
	docs["strings"] = []byte(`[` + strings.Repeat(`"],[1,2],{\"a\":[3,4]}\\",`, 400) + `"end"]`)
	docs["numbers"] = []byte(`{"a":[` + strings.Repeat(`1.5e3, -0, 12345678901234567890, 0.1,`, 300) + `7]}`)
	docs["nested"] = []byte(`[[` + strings.Repeat(`[[1,[2]],{"k":[3]}],`, 300) + `[]],[]]`)
	ins, err := filepath.Glob("testdata/cyberphone/input/*.json")
	if err != nil || len(ins) == 0 {
		t.Fatalf("cyberphone inputs: %v %v", ins, err)
	}
	for _, f := range ins {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)] = b
	}
	return docs
}

// TestParallelParseSame: for every document and 2 to 5 parts, the
// parallel parse gives the serial parse's Doc, slice for slice, and the
// large documents do take helpers' trees (a parse that never spliced
// would pass the comparison trivially).
func TestParallelParseSame(t *testing.T) {
	for name, doc := range splitDocs(t) {
		var n int64
		for groups := 2; groups <= 5; groups++ {
			n += sameParse(t, name, doc, groups)
		}
		if len(doc) > 50000 && n == 0 {
			t.Errorf("%s (%d bytes): no helper's trees were used", name, len(doc))
		}
	}
}

// TestParallelParseErrors: corrupted documents (cut short, a byte changed,
// a duplicate member name, a bad escape, invalid UTF-8, a raw control
// character, trailing data, nesting too deep, a bad number), mostly in the
// second half where a helper reads, give exactly the serial parse's error.
func TestParallelParseErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	bases := [][]byte{corpus.LeanTools(200, 3), corpus.ToolsListResponse(40, 5), indent(t, corpus.Pages(30, 4, 2))}
	var spliced int64
	for bi, base := range bases {
		// Positions of the second half where a string body starts.
		var strs []int
		for i := len(base) / 2; i < len(base)-1; i++ {
			if base[i] == '"' && base[i+1] >= 'a' && base[i+1] <= 'z' {
				strs = append(strs, i+1)
			}
		}
		at := func() int { return strs[r.IntN(len(strs))] }
		insert := func(pos int, s string) []byte {
			return append(append(append([]byte{}, base[:pos]...), s...), base[pos:]...)
		}
		cases := map[string][]byte{
			"trailing data": append(bytes.Clone(base), " x"...),
			"no end":        base[:len(base)-1],
		}
		for i := range 12 {
			cut := len(base)/2 + r.IntN(len(base)/2)
			cases[fmt.Sprint("truncated ", i)] = base[:cut]
			flip := bytes.Clone(base)
			pos := r.IntN(len(base))
			flip[pos] = "{}[],:\"\\x0 \x01\xff"[r.IntN(13)]
			cases[fmt.Sprint("byte changed ", i)] = flip
			cases[fmt.Sprint("bad escape ", i)] = insert(at(), `\q`)
			cases[fmt.Sprint("bad \\u ", i)] = insert(at(), `\ud800x`)
			cases[fmt.Sprint("invalid UTF-8 ", i)] = insert(at(), "\xc3(")
			cases[fmt.Sprint("control ", i)] = insert(at(), "\x02")
		}
		// A duplicate member name inside an element of the second half.
		if j := bytes.Index(base[len(base)*3/4:], []byte(`{"`)); j >= 0 {
			pos := len(base)*3/4 + j + 1
			end := bytes.IndexByte(base[pos+1:], '"') + pos + 2
			name := string(base[pos:end])
			cases["duplicate"] = insert(pos, name+`:1,`)
			cases["duplicate escaped"] = insert(pos, `"\u00`+fmt.Sprintf("%02x", name[1])+name[2:]+`:1,`)
		}
		// Nesting: fine below the limit, too deep in the second half.
		if j := bytes.Index(base[len(base)*3/4:], []byte(`{"`)); j >= 0 {
			pos := len(base)*3/4 + j + 1
			nest := func(d int) string { return `"zzdeep":` + strings.Repeat("[", d) + strings.Repeat("]", d) + `,` }
			cases["too deep"] = insert(pos, nest(MaxDepth))
			cases["deep"] = insert(pos, nest(MaxDepth-10))
		}
		cases["bad number"] = insert(at()-1, `01,`)
		for name, doc := range cases {
			for groups := 2; groups <= 3; groups++ {
				spliced += sameParse(t, fmt.Sprint(bi, " ", name), doc, groups)
			}
		}
	}
	if spliced == 0 {
		t.Error("no helper's trees were used")
	}
}

// TestParallelParseDepth: an array deep in the text whose elements nest
// a few levels more: the helpers see only the nesting below the array, so
// the main parser must add the array's depth before taking their trees.
func TestParallelParseDepth(t *testing.T) {
	elems := strings.Repeat(`[[[[1]]]],`, 3000)
	for _, d := range []int{MaxDepth - 10, MaxDepth - 5, MaxDepth - 4, MaxDepth - 3} {
		doc := []byte(strings.Repeat("[", d) + elems + "1" + strings.Repeat("]", d))
		sameParse(t, fmt.Sprint("depth ", d), doc, 2)
		sameParse(t, fmt.Sprint("depth ", d), doc, 4)
	}
}

// TestParallelParseRandom: random documents from the corpus generators
// with random whitespace and random cuts, at 2 to 4 parts.
func TestParallelParseRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for i := range 40 {
		seed := r.Uint64()
		var doc []byte
		switch i % 3 {
		case 0:
			doc = corpus.LeanTools(1+r.IntN(60), seed)
		case 1:
			doc = corpus.Pages(1+r.IntN(30), 1+r.IntN(8), seed)
		default:
			doc = indent(t, corpus.ToolsListResponse(1+r.IntN(20), seed))
		}
		groups := 2 + r.IntN(3)
		sameParse(t, fmt.Sprint("random ", i), doc, groups)
		sameParse(t, fmt.Sprint("random cut ", i), doc[:r.IntN(len(doc))], groups)
	}
}

// TestParallelParseLevels: with a small window the helpers' guesses fall
// at different levels (the pages of a list of responses, the tools of
// one page), so that one helper's elements cover the next one's guess:
// the main parser passes that helper over (and waits for it, since a
// later helper's trees are moved over its stretch of the arrays).
func TestParallelParseLevels(t *testing.T) {
	old := splitWindow
	defer func() { splitWindow = old }()
	splitWindow = 2048
	before := passes.Load()
	for _, doc := range [][]byte{corpus.Pages(120, 12, 9), corpus.Pages(80, 30, 10), indent(t, corpus.Pages(40, 9, 11))} {
		for groups := 2; groups <= 6; groups++ {
			sameParse(t, fmt.Sprintf("Pages, %d groups", groups), doc, groups)
		}
	}
	if passes.Load() == before {
		t.Error("no helper was passed over")
	}
}

// TestQuoteState: the eight-bytes-at-a-time quote count agrees with a
// byte loop at every cut of texts full of quotes and backslashes.
func TestQuoteState(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var never atomic.Bool
	for range 200 {
		src := make([]byte, r.IntN(80))
		for i := range src {
			src[i] = `"\a\"`[r.IntN(4)]
		}
		for to := 0; to <= len(src); to++ {
			in, esc := false, false
			for _, c := range src[:to] {
				switch {
				case esc:
					esc = false
				case c == '\\':
					esc = true
				case c == '"':
					in = !in
				}
			}
			gin, gesc, ok := quoteState(src, 0, to, false, false, &never)
			if !ok || gin != in || gesc != esc {
				t.Fatalf("%q to %d: got %v %v, want %v %v", src, to, gin, gesc, in, esc)
			}
		}
	}
}

// FuzzParallelParse: any input parses in parts (threshold 0, 2 to 4
// parts, the helpers' work done in order: splitSync) as it parses
// serially: the same Doc or the same error.
func FuzzParallelParse(f *testing.F) {
	// Small seeds: the fuzzer minimizes every new input it finds, and
	// minimizing a large one (each step two parses) stalls a short run.
	for _, doc := range splitDocs(f) {
		if len(doc) < 2500 {
			f.Add(doc, uint8(2))
		}
	}
	f.Add(corpus.LeanTools(1, 1), uint8(2))
	f.Add([]byte(`[`+strings.Repeat(`"],[1,2],{\"a\":[3,4]}\\",`, 5)+`"end"]`), uint8(3))
	f.Add([]byte(`{"a":[`+strings.Repeat(`1.5e3, -0, 12345678901234567890, 0.1,`, 5)+`7]}`), uint8(2))
	f.Add([]byte(`[1,[2,3],{"a":[4,5]},"x\"],[",6]`), uint8(3))
	f.Add([]byte(`{"tools":[{"a":1},{"a":2,"a":3},{"b":[]}]}`), uint8(2))
	f.Add([]byte(`[[[[[[1,2],[3,4]]]]],[5]]`), uint8(4))
	f.Fuzz(func(t *testing.T, src []byte, groups uint8) {
		splitSync = true
		defer func() { splitSync = false }()
		sameParse(t, "fuzz", src, 2+int(groups%3))
	})
}

// TestSubtree: the node range subtreeEnd finds is the one
// a scan finds (every node after i that starts before i's token ends),
// for every node of every document, parsed serially and in parts, and
// holds exactly the nodes a walk of the children reaches.
func TestSubtree(t *testing.T) {
	for name, src := range splitDocs(t) {
		for _, groups := range []int{0, 3} {
			d, err, _ := parseWith(t, src, groups)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for i := int32(0); i < int32(len(d.nodes)); i++ {
				end := d.end(i)
				want := i + 1
				for want < int32(len(d.nodes)) && d.nodes[want].start < end {
					want++
				}
				if hi := d.subtreeEnd(i); hi != want {
					t.Fatalf("%s (%d groups): node %d: subtree [%d, %d), scan [%d, %d)", name, groups, i, i, hi, i, want)
				}
			}
			var count func(i int32) int32
			count = func(i int32) int32 {
				n := int32(1)
				if k := d.kind(i); k == Array || k == Object {
					for _, c := range d.children(i) {
						n += count(c)
						if k == Object {
							n += count(c + 1) // the member's value follows its key
						}
					}
				}
				return n
			}
			if hi := d.subtreeEnd(0); hi != count(0) || hi != int32(len(d.nodes)) {
				t.Fatalf("%s (%d groups): the root's subtree [0, %d) of %d nodes; a walk reaches %d", name, groups, hi, len(d.nodes), count(0))
			}
		}
	}
}
