package schemas_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/schemas"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Each shipped schema is itself valid (compiled against its meta-schema).
func TestSchemasCompile(t *testing.T) {
	for _, n := range []string{schemas.Observed, schemas.Declared, schemas.Policy, schemas.Snapshot, schemas.Surface, schemas.SurfaceObserved} {
		b, err := schemas.Files().ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("%s is not JSON", n)
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(nil)
		doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err := c.AddResource("mem:///"+n, doc); err != nil {
			t.Fatal(err)
		}
		if n == schemas.Snapshot || n == schemas.SurfaceObserved {
			// They refer to the surface's schema, as the lock to the
			// declared baseline's.
			sb, _ := schemas.Files().ReadFile(schemas.Surface)
			sd, _ := jsonschema.UnmarshalJSON(bytes.NewReader(sb))
			if err := c.AddResource("mem:///"+schemas.Surface, sd); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Compile("mem:///" + n); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
}

func TestValidateReportsLocations(t *testing.T) {
	doc := decode(t, `{"schema":"assay.declared_mcp_manifest.v0","server":{"id":"s"},"canonicalization":"c","manifest_digest":"sha256:xyz","tools":[{"name":"a","tool_digest":"md5:1","privileged":true,"extra":1}]}`)
	err := schemas.Validate(schemas.Declared, doc)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{`"/manifest_digest"`, `"/tools/0/tool_digest"`, `"/tools/0"`, "extra"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if err := schemas.Validate("nope.json", doc); err == nil {
		t.Error("unknown schema accepted")
	}
}

// ValidateValue (the parsed instance) agrees with Validate (its text) on
// valid and invalid instances: escapes, number spellings, nesting.
func TestValidateValueAgrees(t *testing.T) {
	c, err := schemas.Compile([]byte(`{"type":"object","properties":{
		"s":{"type":"string","maxLength":3,"pattern":"^[a-zé]*$"},
		"n":{"type":"integer","minimum":1,"maximum":1000},
		"f":{"type":"number","multipleOf":0.5},
		"a":{"type":"array","items":{"enum":["x","y",null,true]},"uniqueItems":true},
		"o":{"type":"object","properties":{"k":{"const":{"z":[1,2]}}},"additionalProperties":false}},
		"required":["s"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, inst := range []string{
		`{"s":"ab"}`, `{"s":"\u00e9\u00e9"}`, `{"s":"abcd"}`, `{"s":"A"}`, `{}`, `[]`, `"s"`, `null`,
		`{"s":"a","n":1E3}`, `{"s":"a","n":1.0}`, `{"s":"a","n":1001}`, `{"s":"a","n":0.5}`, `{"s":"a","n":-0}`,
		`{"s":"a","f":2.5}`, `{"s":"a","f":2.25}`, `{"s":"a","f":1e-1}`, `{"s":"a","n":123456789012345678901234567890}`,
		`{"s":"a","a":["x",null,true]}`, `{"s":"a","a":["x","x"]}`, `{"s":"a","a":[false]}`,
		`{"s":"a","o":{"k":{"z":[1,2.0]}}}`, `{"s":"a","o":{"k":{"z":[2,1]}}}`, `{"s":"a","o":{"q":1}}`, `{"s":"a","x":1}`,
	} {
		d, err := jcs.Parse([]byte(inst))
		if err != nil {
			t.Fatal(inst, err)
		}
		want, err := c.Validate([]byte(inst))
		if err != nil {
			t.Fatal(inst, err)
		}
		got, err := c.ValidateValue(d.Root())
		if err != nil {
			t.Fatal(inst, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n ValidateValue %v\n      Validate %v", inst, got, want)
		}
	}
}

// TestValidateMessagesDeterministic: the same document gets the same
// message every time (the library lists additional properties in map
// order).
func TestValidateMessagesDeterministic(t *testing.T) {
	src := `{"schema":"assay.declared_mcp_manifest.v0","server":{"id":"s"},"canonicalization":"c","manifest_digest":"sha256:xyz","tools":[],"zeta":1,"alpha":2,"mu":3,"beta":4,"omega":5,"kappa":6}`
	first := ""
	for i := range 50 {
		err := schemas.Validate(schemas.Declared, decode(t, src))
		if err == nil {
			t.Fatal("accepted")
		}
		if i == 0 {
			first = err.Error()
			if !strings.Contains(first, `"alpha", "beta", "kappa", "mu", "omega", "zeta"`) {
				t.Fatalf("additional properties not in order: %s", first)
			}
		} else if err.Error() != first {
			t.Fatalf("run %d: %s\nfirst: %s", i, err, first)
		}
	}
}

// TestEverySchemaValidates: each shipped schema compiles as Validate
// compiles it (lazily, the first time it is named) and judges a document:
// an empty object is accepted or refused with problems, never met with a
// compile error or an unknown name.
func TestEverySchemaValidates(t *testing.T) {
	names, err := fs.Glob(schemas.Files(), "*.schema.json")
	if err != nil || len(names) < 9 {
		t.Fatalf("%d schemas shipped (%v)", len(names), err)
	}
	for _, n := range names {
		err := schemas.Validate(n, map[string]any{})
		var se *schemas.Error
		if err != nil && !errors.As(err, &se) {
			t.Errorf("%s: %v", n, err)
		}
	}
}
