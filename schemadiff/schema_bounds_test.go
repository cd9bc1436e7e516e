package schemadiff

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// Bounded work on bad input: boolean schemas, cycles, missing targets,
// wide, deep, recursive and explosive schemas are compared in bounded
// time, and what was not compared is said (schema_unresolved), never
// silently dropped.

func timed(t *testing.T, limit time.Duration, f func() []Change) []Change {
	t.Helper()
	start := time.Now()
	cs := f()
	// The limits are what a quiet machine needs times five: enough to
	// absorb a loaded 2-core CI runner or the race detector, far below what
	// an unbounded walk (a ref-bomb, a cycle) would take.
	limit *= 5
	if el := time.Since(start); el > limit {
		t.Errorf("took %v, limit %v", el, limit)
	}
	return cs
}

func findKind(cs []Change, kind string) []Change {
	var out []Change
	for _, c := range cs {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

func TestSchemaBooleanSchemas(t *testing.T) {
	vals := map[string]jcs.Value{
		"absent": {}, "true": mustRoot(t, []byte("true")), "false": mustRoot(t, []byte("false")),
		"{}": mustRoot(t, []byte("{}")), "string": mustRoot(t, []byte(`{"type":"string"}`)),
	}
	type want struct {
		kind string
		dir  Direction
	}
	cases := []struct {
		old, new string
		want     []want
	}{
		// true, {} and an absent schema accept everything: spelled
		// differently, they are notation.
		{"absent", "true", []want{{SchemaNotationChanged, Neutral}}}, {"true", "absent", []want{{SchemaNotationChanged, Neutral}}},
		{"true", "{}", []want{{SchemaNotationChanged, Neutral}}}, {"false", "false", nil},
		{"true", "false", []want{{TypeNarrowed, Narrowing}}}, {"false", "true", []want{{TypeWidened, Widening}}},
		{"absent", "false", []want{{TypeNarrowed, Narrowing}}}, {"false", "absent", []want{{TypeWidened, Widening}}},
		{"false", "string", []want{{TypeWidened, Widening}}}, {"string", "false", []want{{TypeNarrowed, Narrowing}}},
		{"absent", "string", []want{{TypeNarrowed, Narrowing}}}, {"string", "true", []want{{TypeWidened, Widening}}},
	}
	for _, c := range cases {
		cs := DiffSchema("t", "/inputSchema", vals[c.old], vals[c.new], Options{})
		checkChanges(t, "t", "/inputSchema", cs)
		var got []want
		for _, x := range cs {
			got = append(got, want{x.Kind, x.Direction})
			if x.Pointer != "/inputSchema" && x.Pointer != "/inputSchema/type" {
				t.Errorf("%s→%s: pointer %q", c.old, c.new, x.Pointer)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s→%s: got %v, want %v", c.old, c.new, got, c.want)
		}
	}
}

func TestSchemaCyclesAndMissingTargets(t *testing.T) {
	cases := []struct {
		name, old, new, ptr, note string
	}{
		{"self", `{"$ref":"#"}`, `{"type":"string"}`, "/inputSchema/$ref", "cyclic"},
		{"mutual", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `{"type":"object"}`, "/inputSchema/$defs/b/$ref", "cyclic"},
		{"missing", `{"properties":{"x":{"$ref":"#/$defs/gone"}},"$defs":{}}`, `{"properties":{"x":{"type":"string"}}}`, "/inputSchema/properties/x/$ref", `no member "gone"`},
		{"missing definitions container", `{"$ref":"#/definitions/a"}`, `{}`, "/inputSchema/$ref", `no member "definitions"`},
		{"bad escape", `{"$ref":"#/$defs/a~2","$defs":{"a~2":{}}}`, `{}`, "/inputSchema/$ref", "invalid ~ escape"},
		{"bad percent", `{"$ref":"#/$defs/%zz"}`, `{}`, "/inputSchema/$ref", "invalid %-escape"},
		{"missing anchor", `{"$ref":"#nowhere"}`, `{}`, "/inputSchema/$ref", "no $anchor"},
		{"ambiguous anchor", `{"$ref":"#a","$defs":{"x":{"$anchor":"a"},"y":{"$anchor":"a"}}}`, `{}`, "/inputSchema/$ref", "more than once"},
		{"array index", `{"$ref":"#/allOf/01","allOf":[{},{}]}`, `{"$ref":"#/allOf/01","allOf":[{},{}],"type":"string"}`, "/inputSchema/$ref", `no element "01"`},
		{"mixed ref to missing", `{"$ref":"#/$defs/x","type":"string"}`, `{"$ref":"#/$defs/x","type":"integer"}`, "/inputSchema/$ref", `no member "$defs"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, new := mustRoot(t, []byte(c.old)), mustRoot(t, []byte(c.new))
			for _, dir := range []string{"fwd", "back"} {
				cs := timed(t, time.Second, func() []Change { return DiffSchema("t", "/inputSchema", old, new, Options{}) })
				checkChanges(t, "t", "/inputSchema", cs)
				u := findKind(cs, SchemaUnresolved)
				if len(u) != 1 || u[0].Pointer != c.ptr || !strings.Contains(u[0].Note, c.note) {
					t.Errorf("%s: want one schema_unresolved at %s with note ~%q, got %+v", dir, c.ptr, c.note, cs)
				}
				old, new = new, old
			}
			if cs := DiffSchema("t", "/inputSchema", old, old, Options{}); cs != nil {
				t.Errorf("self diff: %+v", cs)
			}
		})
	}
}

func manyProps(n int, extra string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","additionalProperties":false,"properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%05d":{"type":"string","maxLength":%d}`, i, 10+i%7)
	}
	b.WriteString(extra)
	b.WriteString(`},"required":["p00000","p00001"]}`)
	return b.Bytes()
}

func TestSchemaManyProperties(t *testing.T) {
	old := mustRoot(t, manyProps(10000, ""))
	new := mustRoot(t, bytes.Replace(manyProps(10000, `,"webhook":{"type":"string"}`), []byte(`"p05000":{"type":"string"`), []byte(`"p05000":{"type":"integer"`), 1))
	cs := timed(t, time.Second, func() []Change { return DiffSchema("t", "/inputSchema", old, new, Options{}) })
	checkChanges(t, "t", "/inputSchema", cs)
	if len(cs) != 2 || cs[0].Kind != TypeChanged || cs[0].Pointer != "/inputSchema/properties/p05000/type" ||
		cs[1].Kind != ParamAddedOptional || cs[1].Severity != "high" {
		t.Fatalf("got %+v", cs)
	}
	// Every property different: 10,000 removed and 10,000 added.
	other := mustRoot(t, bytes.ReplaceAll(manyProps(10000, ""), []byte(`"p0`), []byte(`"q0`)))
	cs = timed(t, time.Second, func() []Change { return DiffSchema("t", "/inputSchema", old, other, Options{}) })
	if n := len(findKind(cs, ParamRemoved)) + len(findKind(cs, ParamAddedOptional)) + len(findKind(cs, ParamAddedRequired)); n != 20000 {
		t.Fatalf("%d param changes", n)
	}
}

func TestSchemaDeepNesting(t *testing.T) {
	nest := func(levels int, leaf string) []byte {
		return []byte(strings.Repeat(`{"allOf":[`, levels) + leaf + strings.Repeat(`]}`, levels))
	}
	if _, err := jcs.Parse(nest(10000, `{}`)); err == nil {
		t.Fatal("jcs accepted 20,000 levels of nesting")
	}
	const levels = (jcs.MaxDepth - 1) / 2
	old := mustRoot(t, nest(levels, `{"type":"string"}`))
	new := mustRoot(t, nest(levels, `{"type":"integer"}`))
	cs := timed(t, time.Second, func() []Change { return DiffSchema("t", "/inputSchema", old, new, Options{}) })
	if len(cs) != 1 || cs[0].Kind != TypeChanged || strings.Count(cs[0].Pointer, "/allOf/0") != levels {
		t.Fatalf("got %+v", cs)
	}
}

// refChain builds n definitions, each referring to the next (through
// allOf when mixed), with leaf at the end.
func refChain(n int, mixed bool, leaf string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range n {
		if mixed {
			fmt.Fprintf(&b, `"d%d":{"type":"object","allOf":[{"$ref":"#/$defs/d%d"}]},`, i, i+1)
		} else {
			fmt.Fprintf(&b, `"d%d":{"$ref":"#/$defs/d%d"},`, i, i+1)
		}
	}
	fmt.Fprintf(&b, `"d%d":%s}}`, n, leaf)
	return b.Bytes()
}

func TestSchemaRefDepth(t *testing.T) {
	for _, mixed := range []bool{false, true} {
		old := mustRoot(t, refChain(10000, mixed, `{"type":"string"}`))
		new := mustRoot(t, refChain(10000, mixed, `{"type":"integer"}`))
		cs := timed(t, time.Second, func() []Change { return DiffSchema("t", "/inputSchema", old, new, Options{}) })
		checkChanges(t, "t", "/inputSchema", cs)
		u := findKind(cs, SchemaUnresolved)
		if len(u) != 1 || !strings.Contains(u[0].Note, "more than 64 nested $ref expansions") {
			t.Fatalf("mixed=%v: %+v", mixed, cs)
		}
		// Within the limit the leaf change is found.
		old = mustRoot(t, refChain(20, mixed, `{"type":"string"}`))
		new = mustRoot(t, refChain(20, mixed, `{"type":"integer"}`))
		cs = DiffSchema("t", "/inputSchema", old, new, Options{})
		if len(cs) != 1 || cs[0].Kind != TypeChanged || cs[0].Pointer != "/inputSchema/$defs/d20/type" {
			t.Fatalf("mixed=%v: %+v", mixed, cs)
		}
	}
}

// TestSchemaDeepThroughRefs: definitions nested hundreds of levels deep,
// each ending in a reference to the next, reach far deeper than one
// document can; the walk stops at its frame limit instead of growing the
// stack without bound.
func TestSchemaDeepThroughRefs(t *testing.T) {
	build := func(leaf string) []byte {
		var b bytes.Buffer
		b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
		for i := range 60 {
			fmt.Fprintf(&b, `"d%d":%s{"$ref":"#/$defs/d%d","type":"object"}%s,`, i,
				strings.Repeat(`{"allOf":[`, 450), i+1, strings.Repeat(`]}`, 450))
		}
		fmt.Fprintf(&b, `"d60":%s}}`, leaf)
		return b.Bytes()
	}
	old, new := mustRoot(t, build(`{"type":"string"}`)), mustRoot(t, build(`{"type":"integer"}`))
	cs := timed(t, time.Second, func() []Change { return DiffSchema("t", "/inputSchema", old, new, Options{}) })
	checkChanges(t, "t", "/inputSchema", cs)
	u := findKind(cs, SchemaUnresolved)
	if len(u) != 1 || !strings.Contains(u[0].Note, "nest too deeply") {
		t.Fatalf("got %+v", cs)
	}
}

// refBomb: each level is an anyOf of two references to the next, so a
// naive expansion visits 2^levels leaves.
func refBomb(levels int, leaf string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/l0"}},"$defs":{`)
	for i := range levels {
		fmt.Fprintf(&b, `"l%d":{"anyOf":[{"$ref":"#/$defs/l%d"},{"$ref":"#/$defs/l%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"l%d":%s}}`, levels, leaf)
	return b.Bytes()
}

func TestSchemaRefBomb(t *testing.T) {
	old := mustRoot(t, refBomb(30, `{"type":"string"}`))
	new := mustRoot(t, refBomb(30, `{"type":"string","maxLength":3}`))
	cs := timed(t, 200*time.Millisecond, func() []Change { return DiffSchema("t", "/inputSchema", old, new, Options{}) })
	if len(cs) != 1 || cs[0].Kind != ConstraintTightened || cs[0].Pointer != "/inputSchema/$defs/l30/maxLength" {
		t.Fatalf("got %+v", cs)
	}
	// Different shapes on each side: pairs are still memoised.
	other := mustRoot(t, bytes.ReplaceAll(refBomb(30, `{"type":"integer"}`), []byte(`"l`), []byte(`"m`)))
	cs = timed(t, 200*time.Millisecond, func() []Change { return DiffSchema("t", "/inputSchema", old, other, Options{}) })
	if len(cs) == 0 {
		t.Fatal("no change")
	}
}

func TestSchemaWorkBudget(t *testing.T) {
	inputs, _ := corpusSchemas(t, 172, 1)
	slices.SortFunc(inputs, func(a, b []byte) int { return len(b) - len(a) })
	a, b := mustRoot(t, inputs[0]), mustRoot(t, inputs[1])
	full := DiffSchema("t", "/inputSchema", a, b, Options{})
	// (A $schema the two schemas read differently is said unresolved
	// too: not what this test is about.)
	full = slices.DeleteFunc(full, func(c Change) bool { return strings.HasSuffix(c.Pointer, "/$schema") })
	if len(findKind(full, SchemaUnresolved)) != 0 {
		t.Fatalf("default budget exhausted on a corpus schema: %+v", findKind(full, SchemaUnresolved))
	}
	cs := DiffSchema("t", "/inputSchema", a, b, Options{MaxNodes: 20})
	checkChanges(t, "t", "/inputSchema", cs)
	u := findKind(slices.DeleteFunc(cs, func(c Change) bool { return strings.HasSuffix(c.Pointer, "/$schema") }), SchemaUnresolved)
	if len(u) != 1 || !strings.Contains(u[0].Note, "work budget exhausted after 20 schema nodes") {
		t.Fatalf("got %+v", u)
	}
	if len(cs) >= len(full) {
		t.Errorf("budgeted diff found %d changes, full %d", len(cs), len(full))
	}
	// The budget also stops a wide, deep comparison quickly.
	wide := func(kw string) []byte {
		var b bytes.Buffer
		b.WriteString(`{"anyOf":[`)
		for i := range 5000 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"properties":{"a":{"%s":%d}},"$ref":"#/$defs/x"}`, kw, i)
		}
		b.WriteString(`],"$defs":{"x":{"type":"object"}}}`)
		return b.Bytes()
	}
	cs = timed(t, time.Second, func() []Change {
		return DiffSchema("t", "/inputSchema", mustRoot(t, wide("minimum")), mustRoot(t, wide("maximum")), Options{MaxNodes: 1000})
	})
	if u := findKind(cs, SchemaUnresolved); len(u) != 1 {
		t.Fatalf("got %d unresolved", len(u))
	}
}

// wideAnyOf builds an anyOf of n object branches; branch i has property
// "p<i>" with the bound f(i).
func wideAnyOf(n int, kw string, f func(i int) int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"anyOf":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"object","properties":{"p%d":{"type":"integer","%s":%d}},"required":["p%d"]}`, i, kw, f(i), i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestSchemaBranchMatchingBounded: matching branches is never quadratic in
// diffs beyond its caps, and past them it is conservative: every edited
// branch still shows, as a change inside its pair or as removed and added.
func TestSchemaBranchMatchingBounded(t *testing.T) {
	id := func(i int) int { return i }
	// Equal branches pair up in linear time; the one changed pairs with the
	// one left.
	old := mustRoot(t, wideAnyOf(5000, "maximum", id))
	new := mustRoot(t, wideAnyOf(5000, "maximum", func(i int) int {
		if i == 2500 {
			return 9999
		}
		return i
	}))
	cs := timed(t, time.Second, func() []Change { return DiffSchema("t", "/inputSchema", old, new, Options{}) })
	if len(cs) != 1 || cs[0].Kind != ConstraintLoosened || cs[0].Pointer != "/inputSchema/anyOf/2500/properties/p2500/maximum" {
		t.Fatalf("one changed branch of 5000: %+v", cs)
	}
	// Up to 64 candidate pairs: trial diffs choose (8 × 8, shuffled order).
	perm := func(i int) int { return (i*3 + 5) % 8 }
	oldB := mustRoot(t, wideAnyOf(8, "maximum", id))
	var nb bytes.Buffer
	nb.WriteString(`{"anyOf":[`)
	for k := range 8 {
		i := perm(k)
		if k > 0 {
			nb.WriteByte(',')
		}
		fmt.Fprintf(&nb, `{"type":"object","properties":{"p%d":{"type":"integer","maximum":%d}},"required":["p%d"]}`, i, i+100, i)
	}
	nb.WriteString(`]}`)
	cs = DiffSchema("t", "/inputSchema", oldB, mustRoot(t, nb.Bytes()), Options{})
	if len(cs) != 8 {
		t.Fatalf("8 edited branches: %+v", cs)
	}
	for k, c := range cs {
		_ = k
		if c.Kind != ConstraintLoosened || !strings.HasSuffix(c.Pointer, "/maximum") {
			t.Errorf("trial pairing: %+v", c)
		}
	}
	// Up to 4096: paired by likeness (shared property names), each pair
	// diffed.
	cs = timed(t, time.Second, func() []Change {
		return DiffSchema("t", "/inputSchema", mustRoot(t, wideAnyOf(60, "maximum", id)), mustRoot(t, wideAnyOf(60, "maximum", func(i int) int { return i + 1 })), Options{})
	})
	if len(cs) != 60 || len(findKind(cs, ConstraintLoosened)) != 60 {
		t.Fatalf("60 edited branches paired by likeness: %d changes, %d loosened", len(cs), len(findKind(cs, ConstraintLoosened)))
	}
	for _, c := range cs {
		var i int
		fmt.Sscanf(c.Pointer, "/inputSchema/anyOf/%d/", &i)
		if c.Pointer != fmt.Sprintf("/inputSchema/anyOf/%d/properties/p%d/maximum", i, i) {
			t.Errorf("paired with the wrong branch: %s", c.Pointer)
		}
	}
	// Past 4096 pairs: not paired, every branch removed and added, with a
	// note; bounded.
	cs = timed(t, time.Second, func() []Change {
		return DiffSchema("t", "/inputSchema", mustRoot(t, wideAnyOf(100, "maximum", id)), mustRoot(t, wideAnyOf(100, "maximum", func(i int) int { return i + 1 })), Options{})
	})
	if len(findKind(cs, CompositionWidened)) != 100 || len(findKind(cs, CompositionNarrowed)) != 100 {
		t.Fatalf("100 × 100 edited branches: %d changes", len(cs))
	}
	for _, c := range cs {
		if !strings.Contains(c.Note, "not matched, reported as removed and added") {
			t.Fatalf("no note: %+v", c)
		}
	}
	// Nested choices with trials at every level (4 × 4 per level, six
	// levels, 4096 leaves) stay bounded: trials are memoised and their
	// records reused, and branches are paired by their shape (differences
	// near a branch's root weigh more than deep ones), so every leaf change
	// is found where it is.
	nest := func(leaf int) []byte {
		s := fmt.Sprintf(`{"type":"integer","maximum":%d}`, leaf)
		for d := range 6 {
			var b bytes.Buffer
			b.WriteString(`{"anyOf":[`)
			for k := range 4 {
				if k > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"type":"object","properties":{"k%d_%d":%s}}`, d, k, s)
			}
			b.WriteString(`]}`)
			s = b.String()
		}
		return []byte(s)
	}
	cs = timed(t, 2*time.Second, func() []Change {
		return DiffSchema("t", "/inputSchema", mustRoot(t, nest(1)), mustRoot(t, nest(2)), Options{})
	})
	checkChanges(t, "t", "/inputSchema", cs)
	if len(cs) != 4096 || len(findKind(cs, ConstraintLoosened)) != 4096 {
		t.Fatalf("nested choices: %d changes, %d loosened", len(cs), len(findKind(cs, ConstraintLoosened)))
	}
}
