package jcs_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	gowebpki "github.com/gowebpki/jcs"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// addSeeds adds every conformance vector, the cyberphone inputs and a few
// random documents from the generator of TestGeneratedDocuments.
func addSeeds(f *testing.F) {
	for _, v := range allVectors() {
		f.Add([]byte(v.in))
	}
	for _, name := range []string{"arrays", "french", "structures", "unicode", "values", "weird"} {
		f.Add(readTestdata(f, "cyberphone/input/"+name+".json"))
	}
	g := &docGen{r: rand.New(rand.NewPCG(1, 2))}
	for range 32 {
		w := &writer{g: g, target: -1}
		w.value(g.value(0), "")
		f.Add(w.b)
	}
}

// gowebpkiDivergence reports why github.com/gowebpki/jcs (v1.0.2) may
// legitimately reject an input that this package accepts, or "" if there is
// no known reason.
//
// Known divergences in this direction: none. Five one-minute fuzzing runs
// (about 5 million inputs) and TestGeneratedDocuments found no input that
// this package accepts and gowebpki rejects, and none that both accept with
// different output. The one divergence in the other direction is the
// nesting limit, handled in FuzzCanonicalize: gowebpki allows 10,000 levels,
// this package MaxDepth = 1000.
func gowebpkiDivergence(in []byte) string {
	return ""
}

// FuzzCanonicalize is a differential test against github.com/gowebpki/jcs:
//
//   - if Canonicalize accepts, gowebpki must accept too and produce
//     byte-identical output (unless gowebpkiDivergence names a reason);
//   - if Canonicalize rejects and gowebpki accepts, the only allowed reason
//     is this package's lower nesting limit;
//   - accepted input is valid JSON for encoding/json, its canonical form is
//     valid UTF-8 and canonicalizes to itself, and jsontext.Value.Canonicalize
//     (github.com/go-json-experiment/json, also RFC 8785) gives the same
//     bytes. The reverse is not checked for jsontext: it accepts numbers
//     beyond the float64 range (1e400), clamping them to
//     ±1.7976931348623157e+308, where RFC 8785 requires an error, and it
//     allows 10,000 levels of nesting;
//   - every rejection is a well-formed *jcs.Error (see checkJCSError).
func FuzzCanonicalize(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		ours, err := jcs.Canonicalize(in)
		theirs, theirErr := gowebpki.Transform(in)
		if err != nil {
			e := checkJCSError(t, in, err)
			if theirErr == nil && !strings.Contains(e.Msg, "nesting deeper than") {
				t.Fatalf("rejected %q (%v) but gowebpki accepts it as %q", in, err, theirs)
			}
			return
		}
		if !json.Valid(in) {
			t.Fatalf("accepted %q, which encoding/json says is not valid JSON", in)
		}
		if !utf8.Valid(ours) {
			t.Fatalf("canonical form of %q is not valid UTF-8: %q", in, ours)
		}
		again, err := jcs.Canonicalize(ours)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", ours, in, err)
		}
		if !bytes.Equal(again, ours) {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, ours, again)
		}
		if theirErr != nil {
			if reason := gowebpkiDivergence(in); reason == "" {
				t.Fatalf("accepted %q as %q but gowebpki rejects it: %v", in, ours, theirErr)
			}
		} else if !bytes.Equal(ours, theirs) {
			t.Fatalf("input %q:\n ours     %q\n gowebpki %q", in, ours, theirs)
		}
		// Second opinion: jsontext (go-json-experiment), whose Canonicalize
		// also implements RFC 8785, must agree on everything we accept.
		jv := jsontext.Value(bytes.Clone(in))
		if err := jv.Canonicalize(); err != nil {
			t.Fatalf("accepted %q as %q but jsontext rejects it: %v", in, ours, err)
		}
		if !bytes.Equal(ours, jv) {
			t.Fatalf("input %q:\n ours     %q\n jsontext %q", in, ours, []byte(jv))
		}
	})
}

// FuzzParseAccessors walks every parsed tree through the Value accessors and
// checks that they agree with each other and with the canonical form.
func FuzzParseAccessors(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := jcs.Parse(in)
		if err != nil {
			checkJCSError(t, in, err)
			return
		}
		if !bytes.Equal(d.Source(), in) {
			t.Fatalf("Source() is not the input")
		}
		root := d.Root()
		if !root.Valid() || (jcs.Value{}).Valid() {
			t.Fatalf("Valid() wrong")
		}
		if got, want := root.Raw(), bytes.Trim(in, " \t\r\n"); !bytes.Equal(got, want) {
			t.Fatalf("root Raw() = %q, want %q", got, want)
		}
		canon, err := jcs.Canonicalize(in)
		if err != nil {
			t.Fatalf("Parse accepts %q but Canonicalize fails: %v", in, err)
		}
		if got := root.Canonical(); !bytes.Equal(got, canon) {
			t.Fatalf("Root().Canonical() = %q, Canonicalize = %q", got, canon)
		}
		if got := walkValue(t, d, root, 0); !bytes.Equal(got, canon) {
			t.Fatalf("rebuilt from accessors %q, canonical %q", got, canon)
		}
	})
}

// walkValue checks v and returns its canonical form rebuilt from the
// accessors of its parts.
func walkValue(t *testing.T, d *jcs.Doc, v jcs.Value, depth int) []byte {
	t.Helper()
	if depth > jcs.MaxDepth {
		t.Fatalf("tree deeper than MaxDepth")
	}
	raw := v.Raw()
	if off := v.Offset(); off < 0 || off+len(raw) > len(d.Source()) || !bytes.Equal(d.Source()[off:off+len(raw)], raw) {
		t.Fatalf("Raw() %q is not the source at Offset() %d", raw, off)
	}
	canon := v.Canonical()
	// Raw re-parses on its own to the same canonical form. (Checked for
	// small values and every 64th level, so that deep seeds stay linear.)
	if len(raw) <= 1024 || depth%64 == 0 {
		if re, err := jcs.Canonicalize(raw); err != nil || !bytes.Equal(re, canon) {
			t.Fatalf("Raw() %q re-canonicalizes to %q, %v; Canonical() is %q", raw, re, err, canon)
		}
	}
	if got := v.AppendCanonical([]byte("x")); string(got) != "x"+string(canon) {
		t.Fatalf("AppendCanonical does not append: %q", got)
	}
	k := v.Kind()
	if k.String() == "invalid" {
		t.Fatalf("Kind() = %v", k)
	}
	if k != jcs.Array && k != jcs.Object && v.Len() != 0 {
		t.Fatalf("Len() = %d for %v", v.Len(), k)
	}
	if k != jcs.String && (v.Str() != "" || v.StrEqual("") || v.StrBytes() != nil) {
		t.Fatalf("Str()/StrEqual/StrBytes on %v", k)
	}
	if k != jcs.Number && v.Float() != 0 {
		t.Fatalf("Float() = %v on %v", v.Float(), k)
	}
	if k != jcs.Object {
		if _, found := v.Get(""); found || v.Keys() != nil {
			t.Fatalf("Get/Keys on %v", k)
		}
	}
	if v.Bool() != (k == jcs.True) {
		t.Fatalf("Bool() = %v on %v", v.Bool(), k)
	}

	var out []byte
	switch k {
	case jcs.Null, jcs.True, jcs.False:
		out = []byte(k.String())
		if !bytes.Equal(raw, out) {
			t.Fatalf("%v literal has Raw() %q", k, raw)
		}
	case jcs.Number:
		f := v.Float()
		want, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f != want {
			t.Fatalf("Float() = %v for %q (ParseFloat: %v, %v)", f, raw, want, err)
		}
		out = jcs.AppendNumber(nil, f)
	case jcs.String:
		s := v.Str()
		if !utf8.ValidString(s) {
			t.Fatalf("Str() %q is not valid UTF-8", s)
		}
		if !v.StrEqual(s) || v.StrEqual(s+"x") {
			t.Fatalf("StrEqual inconsistent with Str() %q", s)
		}
		if string(v.StrBytes()) != s {
			t.Fatalf("StrBytes() %q, Str() %q", v.StrBytes(), s)
		}
		var ref string
		if err := json.Unmarshal(raw, &ref); err != nil || ref != s {
			t.Fatalf("Str() = %q, encoding/json decodes %q as %q (%v)", s, raw, ref, err)
		}
		out = jcs.AppendString(nil, s)
	case jcs.Array:
		out = append(out, '[')
		for i := range v.Len() {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, walkValue(t, d, v.Index(i), depth+1)...)
		}
		out = append(out, ']')
	case jcs.Object:
		keys := v.Keys()
		if len(keys) != v.Len() {
			t.Fatalf("Keys() has %d names, Len() = %d", len(keys), v.Len())
		}
		names := make(map[string]bool, len(keys))
		var prev []uint16
		out = append(out, '{')
		for i := range v.Len() {
			name, val := v.Member(i)
			if name.Kind() != jcs.String {
				t.Fatalf("member %d name has kind %v", i, name.Kind())
			}
			s := name.Str()
			if keys[i] != s {
				t.Fatalf("Keys()[%d] = %q, Member(%d) name %q", i, keys[i], i, s)
			}
			u := utf16.Encode([]rune(s))
			if i > 0 && !lessUTF16(prev, u) {
				t.Fatalf("members not strictly increasing in UTF-16 order: %q then %q", keys[i-1], s)
			}
			prev = u
			names[s] = true
			got, found := v.Get(s)
			if !found || got.Offset() != val.Offset() || got.Kind() != val.Kind() || !bytes.Equal(got.Raw(), val.Raw()) {
				t.Fatalf("Get(%q) = %v, %v; Member(%d) value at %d", s, found, got.Offset(), i, val.Offset())
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, walkValue(t, d, name, depth+1)...)
			out = append(out, ':')
			out = append(out, walkValue(t, d, val, depth+1)...)
		}
		out = append(out, '}')
		for _, probe := range []string{"", "a", "\x00", "\uffff", "\U0010ffff", "\xff"} {
			if _, found := v.Get(probe); found != names[probe] {
				t.Fatalf("Get(%q) found = %v, want %v", probe, found, names[probe])
			}
		}
		for s := range names {
			if _, found := v.Get(s + "\x00"); found != names[s+"\x00"] {
				t.Fatalf("Get(%q) found = %v, want %v", s+"\x00", found, names[s+"\x00"])
			}
		}
	}
	if !bytes.Equal(out, canon) {
		t.Fatalf("%v at offset %d: rebuilt %q, Canonical() %q", k, v.Offset(), out, canon)
	}
	return out
}
