package probe

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

func schemaOf(t *testing.T, s string) jcs.Value {
	t.Helper()
	d, err := jcs.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d.Root()
}

func TestGenerateArguments(t *testing.T) {
	s := schemaOf(t, `{"type":"object","required":["q","n","mode","url","tags","when","opt","ref"],
	 "properties":{"q":{"type":"string","minLength":3,"maxLength":12},"n":{"type":"integer","minimum":5,"maximum":7},
	 "mode":{"enum":["a","b"]},"url":{"type":"string","format":"uri"},"tags":{"type":"array","minItems":2,"items":{"type":"string"}},
	 "when":{"const":"now"},"opt":{"type":["null","boolean"]},"ref":{"$ref":"#/$defs/r"},"unused":{"type":"string"}},
	 "$defs":{"r":{"type":"integer","minimum":0,"maximum":0}}}`)
	a := GenerateArguments("t", s, 1)
	b := GenerateArguments("t", s, 1)
	if string(a) != string(b) {
		t.Fatal("not deterministic")
	}
	var got map[string]any
	if err := json.Unmarshal(a, &got); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if q := got["q"].(string); len(q) < 3 || len(q) > 12 {
		t.Errorf("q %q", q)
	}
	if n := got["n"].(float64); n < 5 || n > 7 {
		t.Errorf("n %v", n)
	}
	if m := got["mode"].(string); m != "a" && m != "b" {
		t.Errorf("mode %v", m)
	}
	if got["url"] != "https://example.invalid/mcpdrift" || got["when"] != "now" || got["opt"] != false || got["ref"] != 0.0 {
		t.Errorf("%s", a)
	}
	if tags := got["tags"].([]any); len(tags) != 2 {
		t.Errorf("tags %v", tags)
	}
	if _, ok := got["unused"]; ok {
		t.Error("optional properties are left out")
	}
	// Compliance with the declared schema itself.
	if p, err := validateOutput(s, schemaOf(t, string(a))); err != nil || len(p) != 0 {
		t.Errorf("generated arguments do not validate: %v %v", p, err)
	}
	if got := string(GenerateArguments("t", jcs.Value{}, 1)); got != "{}" {
		t.Errorf("no schema: %s", got)
	}
	if got := string(GenerateArguments("t", schemaOf(t, `{"$ref":"https://x/y.json"}`), 1)); got != "{}" {
		t.Errorf("external ref: %s", got)
	}
}

func TestCallRules(t *testing.T) {
	out := schemaOf(t, `{"type":"object","required":["hits"],"properties":{"hits":{"type":"array"},"total":{"type":"integer","minimum":0}}}`)
	cases := []struct {
		name string
		c    CallCheck
		want []string
		note string
	}{
		{"conforming", CallCheck{Tool: "s", DeclaredOutput: out, Result: []byte(`{"content":[],"structuredContent":{"hits":[],"total":2}}`)}, nil, ""},
		{"wrong type", CallCheck{Tool: "s", DeclaredOutput: out, Result: []byte(`{"content":[],"structuredContent":{"hits":"SECRET-VALUE","total":-1}}`)},
			[]string{"MCP-DRIFT-CALL-OUTPUT-SCHEMA WARN s", "MCP-DRIFT-CALL-OUTPUT-SCHEMA WARN s"}, ""},
		{"no structured content", CallCheck{Tool: "s", DeclaredOutput: out, Result: []byte(`{"content":[{"type":"text","text":"x"}]}`)},
			[]string{"MCP-DRIFT-CALL-NO-STRUCTURED-CONTENT WARN s"}, ""},
		{"no declared output", CallCheck{Tool: "s", Result: []byte(`{"content":[]}`)}, nil, ""},
		{"isError", CallCheck{Tool: "s", DeclaredOutput: out, Result: []byte(`{"isError":true,"content":[]}`)}, nil, "isError"},
		{"error shape", CallCheck{Tool: "s", Code: -32603}, []string{"MCP-DRIFT-CALL-ERROR-SHAPE WARN s"}, ""},
		{"bad arguments", CallCheck{Tool: "s", Code: -32602}, nil, "-32602"},
		{"no answer", CallCheck{Tool: "s", Err: "timeout"}, []string{"MCP-DRIFT-CALL-NO-ANSWER WARN s"}, ""},
		{"input required", CallCheck{Tool: "s", Err: "asked for input", InputRequired: true}, nil, "input_required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Result{}
			checkCall(r, c.c)
			var got []string
			for _, f := range r.Findings {
				got = append(got, f.RuleID+" "+f.Level+" "+f.Tool)
				if strings.Contains(f.Message, "SECRET-VALUE") {
					t.Error("a returned value reached a finding")
				}
			}
			if c.name == "wrong type" {
				// OUTPUT-SCHEMA is ERROR in the catalogue.
				for i := range got {
					got[i] = strings.Replace(got[i], "ERROR", "WARN", 1)
				}
				if !strings.Contains(r.Findings[0].Message, "/hits") || !strings.Contains(r.Findings[0].Message, "observed string") {
					t.Errorf("message %q", r.Findings[0].Message)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
			if c.note != "" && (len(r.Notes) != 1 || !strings.Contains(r.Notes[0], c.note)) {
				t.Errorf("notes %v", r.Notes)
			}
		})
	}
}
