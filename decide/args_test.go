package decide_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// callList is a list that serves src's tools as pinned.
func callList(t testing.TB, src string) *decide.List {
	t.Helper()
	tl, err := manifest.ParseToolList([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b := decide.NewBaseline("args", manifest.Identity{}, tl.Tools)
	return decide.DecideList(b, &decide.Served{Tools: tl.Tools, Completeness: manifest.Complete}, decide.Options{})
}

type callCase struct {
	name, tool, args string
	strict           bool
	reason, pointer  string // "" allowed
}

func checkCalls(t *testing.T, l *decide.List, cases []callCase) {
	t.Helper()
	for _, c := range cases {
		got := l.DecideCall(c.tool, args(t, c.args), decide.CallOptions{Strict: c.strict})
		if got.Allowed != (c.reason == "") || got.Reason != c.reason || got.Pointer != c.pointer {
			t.Errorf("%s: %s %s: %+v, want reason %q at %q", c.name, c.tool, c.args, got, c.reason, c.pointer)
		}
		if strings.Contains(got.Message, "SECRET") || strings.Contains(got.Constraint, "SECRET") {
			t.Errorf("%s: the refusal quotes an argument value: %+v", c.name, got)
		}
	}
}

// TestStrictNestedUndeclared: strict arguments refuse a member declared
// nowhere wherever it stands: inside a value matched by
// patternProperties, inside prefixItems (2020-12) and inside a draft-07
// tuple's items, inside an additionalProperties schema. A value whose
// schema is true or {} may hold anything, at any depth.
func TestStrictNestedUndeclared(t *testing.T) {
	l := callList(t, `[
 {"name":"hdr","inputSchema":{"type":"object","patternProperties":{"^x-":{"type":"object","properties":{"v":{"type":"string"}}}}}},
 {"name":"ops","inputSchema":{"type":"object","properties":{"ops":{"type":"array","prefixItems":[{"type":"object","properties":{"op":{"enum":["read"]}}}]}}}},
 {"name":"tup","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"pair":{"type":"array","items":[{"type":"object","properties":{"k":{"type":"string"}}}],"additionalItems":{"type":"object","properties":{"j":{}}}}}}},
 {"name":"map","inputSchema":{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"object","properties":{"v":{}}}}}}},
 {"name":"open","inputSchema":{"type":"object","properties":{"meta":true,"any":{},"free":{"type":"object","additionalProperties":true},"rec":{"type":"object","additionalProperties":{}},"obj":{"type":"object"}}}}
]`)
	const r = decide.ReasonUndeclaredArg
	checkCalls(t, l, []callCase{
		{"pattern", "hdr", `{"x-1":{"v":"a","sudo":true}}`, true, r, "/x-1/sudo"},
		{"pattern, declared", "hdr", `{"x-1":{"v":"a"}}`, true, "", ""},
		{"pattern, not strict", "hdr", `{"x-1":{"v":"a","sudo":true}}`, false, "", ""},
		{"prefixItems", "ops", `{"ops":[{"op":"read","sudo":true}]}`, true, r, "/ops/0/sudo"},
		{"tuple", "tup", `{"pair":[{"k":"a","sudo":true}]}`, true, r, "/pair/0/sudo"},
		{"tuple, additionalItems", "tup", `{"pair":[{"k":"a"},{"j":1,"k":"b"}]}`, true, r, "/pair/1/k"},
		{"additionalProperties schema", "map", `{"m":{"a":{"v":1},"b":{"v":2,"sudo":true}}}`, true, r, "/m/b/sudo"},
		{"additionalProperties schema, declared", "map", `{"m":{"a":{"v":1}}}`, true, "", ""},
		{"true and {}, any depth", "open", `{"meta":{"a":{"b":[{"c":1}]}},"any":{"a":{"b":1}},"free":{"x":{"y":1}},"rec":{"x":{"y":[{"z":1}]}}}`, true, "", ""},
		{"an object that declares nothing", "open", `{"obj":{"a":1}}`, true, r, "/obj/a"},
	})
}

// runSchema declares path at the top and a PATH of its own under env.
const runTools = `[
 {"name":"run","inputSchema":{"type":"object","required":["cmd"],"properties":{"cmd":{"enum":["ls","make"]},"path":{"type":"string","pattern":"^/workspace/"},"env":{"type":"object","properties":{"PATH":{"type":"string"}}}}}},
 {"name":"places","inputSchema":{"type":"object","properties":{
   "pp":{"type":"object","patternProperties":{"^p":{"type":"object","properties":{"mode":{"type":"string"}}}}},
   "all":{"allOf":[{"$ref":"#/$defs/a"},{"properties":{"b":{}}}]},
   "list":{"type":"array","items":{"$ref":"#/$defs/a"}},
   "pre":{"type":"array","prefixItems":[{"type":"object","properties":{"first":{}}}]},
   "more":{"type":"object","additionalProperties":{"type":"object","properties":{"level":{}}}},
   "dep":{"type":"object","properties":{"kind":{}},"dependentSchemas":{"kind":{"properties":{"target":{}}}}},
   "cond":{"type":"object","if":{"properties":{"kind":{"const":"x"}}},"then":{"properties":{"src":{}}},"else":{"properties":{"dst":{}}}},
   "MODE":{"type":"string"},"LEVEL":{},"TARGET":{},"SRC":{},"FIRST":{},"A":{}},
  "$defs":{"a":{"type":"object","properties":{"a":{"type":"string","maxLength":1}}}}}}
]`

// TestCaseVariantWhereItApplies: a member is a case variant of the
// properties that apply at its own place in the schema. A name the schema
// declares elsewhere (env's PATH) does not make a variant of a property
// that applies here (path) a plain argument; a name declared only
// elsewhere is no variant here.
func TestCaseVariantWhereItApplies(t *testing.T) {
	l := callList(t, runTools)
	const amb = decide.ReasonAmbiguousArg
	checkCalls(t, l, []callCase{
		{"declared elsewhere", "run", `{"cmd":"ls","PATH":"/etc/SECRET"}`, false, amb, "/PATH"},
		{"declared elsewhere, nested", "run", `{"cmd":"ls","env":{"path":"/SECRET"}}`, false, amb, "/env/path"},
		{"exact at each place", "run", `{"cmd":"ls","path":"/workspace/a","env":{"PATH":"/usr/bin"}}`, true, "", ""},
		{"pattern", "places", `{"pp":{"p1":{"Mode":"SECRET"}}}`, false, amb, "/pp/p1/Mode"},
		{"pattern, exact", "places", `{"pp":{"p1":{"mode":"x"}}}`, true, "", ""},
		{"allOf through a $ref", "places", `{"all":{"A":"SECRET"}}`, false, amb, "/all/A"},
		{"allOf, exact", "places", `{"all":{"a":"x","b":1}}`, true, "", ""},
		{"items through a $ref", "places", `{"list":[{"a":"x"},{"A":"SECRET"}]}`, false, amb, "/list/1/A"},
		{"prefixItems", "places", `{"pre":[{"First":1}]}`, false, amb, "/pre/0/First"},
		{"additionalProperties schema", "places", `{"more":{"x":{"Level":1}}}`, false, amb, "/more/x/Level"},
		{"dependentSchemas", "places", `{"dep":{"kind":1,"Target":2}}`, false, amb, "/dep/Target"},
		{"dependentSchemas, exact", "places", `{"dep":{"kind":1,"target":2}}`, true, "", ""},
		{"then", "places", `{"cond":{"kind":"x","Src":1}}`, false, amb, "/cond/Src"},
		// Names declared only at the top are no variants below it.
		{"declared only elsewhere", "places", `{"pp":{"p1":{"mode":"x","level":1}},"more":{"x":{"src":1}}}`, false, "", ""},
		// A variant of a top-level property by a name declared below.
		{"top-level variant of a name declared below", "places", `{"mode":"x"}`, false, amb, "/mode"},
	})
}

// TestCaseVariantUnknownPlace: where what applies cannot all be read (an
// anchor, a schema embedding a resource of its own, below maxStrictDepth),
// a member is refused when another name declared anywhere has its key,
// unless it is exactly a property that applies there.
func TestCaseVariantUnknownPlace(t *testing.T) {
	deep := `{"$ref":"#/$defs/n"}`
	for range 70 {
		deep = `{"next":` + deep + `}`
	}
	l := callList(t, `[
 {"name":"anchor","inputSchema":{"type":"object","properties":{"path":{"type":"string","pattern":"^/w/"},"Name":{},"sub":{"$ref":"#node","properties":{"name":{"type":"string"}}}},
   "$defs":{"node":{"$anchor":"node","type":"object","properties":{"name":{"type":"string"},"PATH":{}}}}}},
 {"name":"embedded","inputSchema":{"type":"object","properties":{"sub":{"$ref":"#/$defs/e"},"beside":{"$ref":"#/$defs/b"}},
   "$defs":{"x":{"type":"object","properties":{"path":{}}},
    "e":{"$id":"https://example.com/e.json","type":"object","properties":{"q":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"object","properties":{"PATH":{}}}}},
    "b":{"$id":"https://example.com/b.json","$ref":"#/$defs/x","$defs":{"x":{"properties":{"a":{}}}}}}}},
 {"name":"deep","inputSchema":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"},"path":{"type":"string"}}}}}}
]`)
	deepVariant := strings.Replace(deep, `{"$ref":"#/$defs/n"}`, `{"PATH":"SECRET"}`, 1)
	deepExact := strings.Replace(deep, `{"$ref":"#/$defs/n"}`, `{"path":"x"}`, 1)
	deepPtr := strings.Repeat("/next", 70) + "/PATH"
	const amb = decide.ReasonAmbiguousArg
	checkCalls(t, l, []callCase{
		{"anchor: known part exact", "anchor", `{"sub":{"name":"a"}}`, false, "", ""},
		{"anchor: variant of a name declared anywhere", "anchor", `{"sub":{"Path":"SECRET"}}`, false, amb, "/sub/Path"},
		// path and PATH are both declared: at a place not read, either
		// may be the one the server decodes.
		{"anchor: a name with two spellings", "anchor", `{"sub":{"path":"SECRET"}}`, false, amb, "/sub/path"},
		{"anchor: the one spelling", "anchor", `{"sub":{"other":1}}`, false, "", ""},
		{"anchor: strict refuses what nothing known declares", "anchor", `{"sub":{"other":1}}`, true, decide.ReasonUndeclaredArg, "/sub/other"},
		// Inside e.json, #/$defs/x is e's own x (PATH), not the root's (path).
		{"embedded resource", "embedded", `{"sub":{"q":{"path":"SECRET"}}}`, false, amb, "/sub/q/path"},
		{"embedded resource, exact", "embedded", `{"sub":{"q":{"PATH":"x"}}}`, true, "", ""},
		// A $ref beside an $id: draft-07 and 2020-12 read it differently.
		{"$ref beside $id", "embedded", `{"beside":{"A":1}}`, false, amb, "/beside/A"},
		{"$ref beside $id, strict", "embedded", `{"beside":{"a":1}}`, true, decide.ReasonUndeclaredArg, "/beside/a"},
		{"deep variant", "deep", deepVariant, false, amb, deepPtr},
		{"deep exact, not strict", "deep", deepExact, false, "", ""},
		{"deep, strict", "deep", deepExact, true, decide.ReasonUndeclaredArg, strings.Repeat("/next", 65)},
	})
}

// TestArgsRefCycles: recursive and self-referring schemas end (the
// validator refuses an in-place cycle; the walk that runs before it must
// end all the same).
func TestArgsRefCycles(t *testing.T) {
	l := callList(t, `[
 {"name":"tree","inputSchema":{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}},
 {"name":"self","inputSchema":{"type":"object","allOf":[{"$ref":"#"}],"anyOf":[{"$ref":"#/allOf/0"}],"properties":{"a":{"$ref":"#"}}}}
]`)
	checkCalls(t, l, []callCase{
		{"tree", "tree", `{"name":"r","kids":[{"name":"a","kids":[{"name":"b"}]}]}`, true, "", ""},
		{"tree, undeclared", "tree", `{"name":"r","kids":[{"name":"a","kids":[{"name":"b","x":1}]}]}`, true, decide.ReasonUndeclaredArg, "/kids/0/kids/0/x"},
		{"tree, variant", "tree", `{"name":"r","kids":[{"Name":"a"}]}`, false, decide.ReasonAmbiguousArg, "/kids/0/Name"},
		{"self, variant", "self", `{"a":{"a":{"A":{}}}}`, false, decide.ReasonAmbiguousArg, "/a/a/A"},
	})
}

// readIn is fuzzTools' "read" as a Go server decodes it.
type readIn struct {
	Cmd  string            `json:"cmd"`
	Path string            `json:"path"`
	Env  map[string]string `json:"env"`
	Opts *struct {
		Mode  string `json:"mode"`
		Level int    `json:"Level"`
	} `json:"opts"`
	Steps []readStep `json:"steps"`
	Pair  []readStep `json:"pair"`
	Tags  map[string]readStep
}

type readStep struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

const fuzzTools = `[{"name":"read","inputSchema":{"type":"object","properties":{
 "cmd":{"type":"string"},"path":{"type":"string","pattern":"^/w/"},
 "env":{"type":"object","properties":{"PATH":{"type":"string"}},"additionalProperties":{"type":"string"}},
 "opts":{"$ref":"#/$defs/opts"},
 "steps":{"type":"array","items":{"$ref":"#/$defs/step"}},
 "pair":{"type":"array","prefixItems":[{"$ref":"#/$defs/step"}]},
 "Tags":{"type":"object","patternProperties":{"^t":{"$ref":"#/$defs/step"}}}},
 "$defs":{"opts":{"type":"object","properties":{"mode":{"type":"string"},"Level":{"type":"integer"}}},
  "step":{"type":"object","properties":{"name":{"type":"string"},"path":{"type":"string","pattern":"^/w/"}}}}}}]`

// FuzzCallReadAsDeclared: arguments the gateway allows, decoded into a
// Go server's struct by encoding/json (member names matched without
// regard to case), give the values a decoder that matches names exactly
// gives: the values the schema check saw under those names.
func FuzzCallReadAsDeclared(f *testing.F) {
	for _, s := range []string{
		`{"cmd":"ls","path":"/w/a","env":{"PATH":"/bin","x":"y"},"opts":{"mode":"m","Level":2}}`,
		`{"cmd":"ls","PATH":"/etc"}`, `{"env":{"path":"x"}}`, `{"opts":{"level":3}}`,
		`{"steps":[{"name":"a","Path":"/etc"}]}`, `{"pair":[{"NAME":"a"}]}`, `{"Tags":{"t1":{"path":"/w/"}},"tags":{}}`,
		`{"K\u0131nd":1,"\u017fteps":[]}`, `{"cmd\u0000":"x"}`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	l := callList(f, fuzzTools)
	f.Fuzz(func(t *testing.T, a string, strict bool) {
		d, err := jcs.Parse([]byte(a))
		if err != nil {
			return
		}
		if c := l.DecideCall("read", d.Root(), decide.CallOptions{Strict: strict}); !c.Allowed {
			return
		}
		var folded, exact readIn
		if json.Unmarshal([]byte(a), &folded) != nil || jsonv2.Unmarshal([]byte(a), &exact) != nil {
			return
		}
		if !reflect.DeepEqual(folded, exact) {
			t.Fatalf("allowed %s: encoding/json reads %+v, the exact names %+v", a, folded, exact)
		}
	})
}
