package schemadiff_test

import (
	"reflect"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

func oneTool(t *testing.T, tool string) *manifest.Tool {
	t.Helper()
	tl, err := manifest.ParseToolList([]byte("[" + tool + "]"))
	if err != nil {
		t.Fatal(err)
	}
	return &tl.Tools[0]
}

// DeclAt reads what a change's pointer names: the type the diff would say
// (enum and references included), the description through a pure
// reference (the outer one wins, as the diff layers them), nothing where
// the pointer leads nowhere.
func TestDeclAt(t *testing.T) {
	tool := oneTool(t, `{"name":"t","inputSchema":{"type":"object","$defs":{"Url":{"type":"string","format":"uri","description":"where to send it","title":"URL"}},
	 "properties":{
	  "plain":{"type":"string","description":"a plain one"},
	  "viaRef":{"$ref":"#/$defs/Url"},
	  "overridden":{"$ref":"#/$defs/Url","description":"outer wins"},
	  "mode":{"enum":["a","b",null]},
	  "num":{"description":42},
	  "a~b/c":{"type":"integer"}}},
	 "output_schema":{"type":"object","properties":{"sha":{"type":"string","description":"commit"}}}}`)
	for _, c := range []struct {
		ptr  string
		want schemadiff.Decl
		ok   bool
	}{
		{"/inputSchema/properties/plain", schemadiff.Decl{Type: "string", Description: "a plain one"}, true},
		{"/inputSchema/properties/viaRef", schemadiff.Decl{Type: "string", Title: "URL", Description: "where to send it"}, true},
		{"/inputSchema/properties/overridden", schemadiff.Decl{Type: "string", Title: "URL", Description: "outer wins"}, true},
		{"/inputSchema/properties/mode", schemadiff.Decl{Type: "null|string"}, true},
		{"/inputSchema/properties/num", schemadiff.Decl{Type: "any"}, true},
		{"/inputSchema/properties/a~0b~1c", schemadiff.Decl{Type: "integer"}, true},
		{"/output_schema/properties/sha", schemadiff.Decl{Type: "string", Description: "commit"}, true},
		{"/inputSchema", schemadiff.Decl{Type: "object"}, true},
		{"/inputSchema/properties/missing", schemadiff.Decl{}, false},
		{"/annotations/readOnlyHint", schemadiff.Decl{}, false},
		{"inputSchema", schemadiff.Decl{}, false},
	} {
		got, ok := schemadiff.DeclAt(tool, c.ptr)
		if ok != c.ok || got != c.want {
			t.Errorf("DeclAt(%s) = %+v, %v; want %+v, %v", c.ptr, got, ok, c.want, c.ok)
		}
	}
	if s, ok := schemadiff.StringAt(tool, "/inputSchema/$defs/Url/format"); !ok || s != "uri" {
		t.Errorf("StringAt = %q, %v", s, ok)
	}
	if _, ok := schemadiff.StringAt(tool, "/inputSchema/properties/num/description"); ok {
		t.Error("StringAt of a number")
	}
	if _, ok := schemadiff.DeclAt(nil, "/inputSchema"); ok {
		t.Error("DeclAt(nil)")
	}
}

// Params lists an added tool's parameters: canonical order, required or
// not, declarations read as DeclAt reads them; a root reference followed.
func TestParams(t *testing.T) {
	tool := oneTool(t, `{"name":"t","inputSchema":{"type":"object","required":["cmd"],"properties":{"cmd":{"type":"string","description":"the command"},"cwd":{"type":"string"}}}}`)
	want := []schemadiff.Param{
		{Name: "cmd", Pointer: "/inputSchema/properties/cmd", Required: true, Decl: schemadiff.Decl{Type: "string", Description: "the command"}},
		{Name: "cwd", Pointer: "/inputSchema/properties/cwd", Decl: schemadiff.Decl{Type: "string"}},
	}
	if got := schemadiff.Params(tool); !reflect.DeepEqual(got, want) {
		t.Errorf("Params = %+v, want %+v", got, want)
	}
	ref := oneTool(t, `{"name":"t","inputSchema":{"$ref":"#/$defs/Args","$defs":{"Args":{"type":"object","properties":{"q":{"type":"string"}}}}}}`)
	if got := schemadiff.Params(ref); len(got) != 1 || got[0].Pointer != "/inputSchema/$defs/Args/properties/q" {
		t.Errorf("Params through a root $ref = %+v", got)
	}
	if got := schemadiff.Params(oneTool(t, `{"name":"t"}`)); got != nil {
		t.Errorf("Params without a schema = %+v", got)
	}
}

// HintText says a hint as the reports do, "default (X)" when absent.
func TestHintText(t *testing.T) {
	tool := oneTool(t, `{"name":"t","annotations":{"readOnlyHint":true,"idempotentHint":"yes"}}`)
	a := tool.Proj().Annotations
	for key, want := range map[string]string{
		"readOnlyHint": "true", "destructiveHint": "default (true)", "idempotentHint": `"yes"`, "openWorldHint": "default (true)",
	} {
		if got := schemadiff.HintText(a, key); got != want {
			t.Errorf("HintText(%s) = %q, want %q", key, got, want)
		}
	}
	if !reflect.DeepEqual(schemadiff.HintKeys(), []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}) {
		t.Errorf("HintKeys = %q", schemadiff.HintKeys())
	}
	if !schemadiff.HintMeaningless("destructiveHint", a, a) || schemadiff.HintMeaningless("readOnlyHint", a, a) {
		t.Error("HintMeaningless")
	}
}
