package schemas_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

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
	for _, n := range []string{schemas.Observed, schemas.Declared, schemas.Policy, schemas.Snapshot} {
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
