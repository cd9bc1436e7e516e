package schemadiff_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

func capSchema(t *testing.T, s string) jcs.Value {
	t.Helper()
	d, err := jcs.Parse([]byte(s))
	if err != nil {
		t.Fatalf("%v in %s", err, s)
	}
	return d.Root()
}

// caps renders Capabilities as "kind param (type) via".
func caps(t *testing.T, schema string) []string {
	t.Helper()
	var out []string
	for _, c := range schemadiff.Capabilities(capSchema(t, schema), "/inputSchema") {
		out = append(out, fmt.Sprintf("%s %s (%s) %s", c.Kind, c.Param, c.Type, c.Via))
	}
	return out
}

func TestCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         []string
	}{
		{"each kind by name", `{"type":"object","properties":{
			"cmd":{"type":"string"},"code":{"type":"string"},"script":{"type":"string"},"sql":{"type":"string"},
			"callback_url":{"type":"string"},"file_path":{"type":"string"},"env":{"type":"object","additionalProperties":{"type":"string"}},
			"extraHTTPHeaders":{"type":"object","additionalProperties":{"type":"string"}}}}`,
			[]string{"command cmd (string) name", "code code (string) name", "script script (string) name", "sql sql (string) name",
				"url callback_url (string) name", "path file_path (string) name", "env env (object) name", "headers extraHTTPHeaders (object) name"}},
		{"more spellings", `{"type":"object","properties":{
			"command":{"type":"array","items":{"type":"string"}},"shell_command":{"type":"string"},"working_directory":{"type":"string"},
			"webhookURL":{"type":"string"},"endpoint":{"type":"string"},"fileName":{"type":"string"},"env_vars":{"type":"object"},
			"script_body":{"type":"string"},"URIs":{"type":"array","items":{"type":"string"}},"cypher":{"type":"string"}}}`,
			[]string{"command command (array) name", "command shell_command (string) name", "path working_directory (string) name",
				"url webhookURL (string) name", "url endpoint (string) name", "path fileName (string) name",
				"free_form env_vars (object) shape", "env env_vars (object) name", "script script_body (string) name",
				"url URIs (array) name", "sql cypher (string) name"}},
		{"descriptions", `{"type":"object","properties":{
			"input":{"type":"string","description":"The shell command to run"},
			"fn":{"type":"string","description":"A JavaScript function to evaluate in the page"},
			"q":{"type":"string","description":"SQL statement, e.g. SELECT 1"},
			"vars":{"type":"object","properties":{"a":{"type":"string"}},"description":"Environment variables for the process"},
			"extra":{"type":"array","items":{"type":"string"},"description":"HTTP headers as NAME: VALUE"}}}`,
			[]string{"command input (string) description", "code fn (string) description", "sql q (string) description",
				"env vars (object) description", "headers extra (array) description"}},
		{"nested with their path, array items, anyOf branches and internal refs", `{"type":"object","properties":{
			"options":{"type":"object","properties":{"headers":{"type":"object","additionalProperties":{"type":"string"}},"timeout":{"type":"number"}}},
			"files":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}},
			"target":{"anyOf":[{"type":"string","description":"a name"},{"type":"object","properties":{"url":{"type":"string"}}}]},
			"step":{"$ref":"#/$defs/step"}},
			"$defs":{"step":{"type":"object","properties":{"script":{"type":"string"},"next":{"$ref":"#/$defs/step"}}}}}`,
			[]string{"headers options.headers (object) name", "path files (array) name", "path files[].path (string) name", "url target.url (string) name",
				"script step.script (string) name"}},
		{"free-form objects", `{"type":"object","properties":{
			"flags":{"type":"object","description":"Command flags as key-value pairs","additionalProperties":true},
			"launchOptions":{"type":"object"},"anything":{},"meta":{"type":["object","null"],"additionalProperties":{}},
			"typed":{"type":"object","properties":{"a":{"type":"string"}}},
			"closed":{"type":"object","additionalProperties":false},
			"mapOfStrings":{"type":"object","additionalProperties":{"type":"string"}},
			"shaped":{"type":"object","patternProperties":{"^x-":{"type":"string"}}}}}`,
			[]string{"free_form flags (object) shape", "free_form launchOptions (object) shape", "free_form anything (any) shape",
				"free_form meta (object|null) shape"}},
		{"false-positive guards", `{"type":"object","properties":{
			"query":{"type":"string","description":"Search query, e.g. 'weather in Paris'"},
			"allNamespaces":{"type":"boolean","description":"If true, run the command across all namespaces"},
			"allowCode":{"type":"boolean"},"url_count":{"type":"integer"},"timeout":{"type":"number","description":"Timeout for the shell command"},
			"code_language":{"type":"string"},"file_type":{"type":"string"},"urlPattern":{"type":"string"},
			"format":{"type":"string","enum":["url","path","code"]},"mode":{"const":"sql"},
			"environment":{"type":"string","description":"Deployment target: production or staging"},
			"env":{"type":"string","description":"staging or production"},
			"header":{"type":"string","description":"Column title of the table"},
			"limit":{"type":"integer","description":"Maximum number of URLs to return"},
			"format2":{"type":"string","description":"markdown, html or links (the page's URLs)"},
			"selector":{"type":"string","description":"CSS selector of the element with the file input"}}}`,
			nil},
		{"the root schema is never free-form", `{"type":"object"}`, nil},
		{"a root with properties and open additionalProperties is not free-form", `{"type":"object","properties":{"a":{"type":"string"}}}`, nil},
		{"no schema", `null`, nil},
		{"a cyclic ref ends", `{"$ref":"#/$defs/a","$defs":{"a":{"type":"object","properties":{"x":{"$ref":"#/$defs/a"},"path":{"type":"string"}}}}}`,
			[]string{"path path (string) name"}},
		{"kubectl_generic", strings.Replace(kubectlGenericSchema, "ALLNS", "", 1),
			[]string{"command command (string) name", "command subCommand (string) name", "free_form flags (object) shape"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := caps(t, tc.schema)
			slices.Sort(got)
			slices.Sort(tc.want)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// kubectlGenericSchema is the input schema mcp-server-kubernetes 4.1.7
// serves for kubectl_generic (descriptions shortened); ALLNS stands where
// it has allNamespaces, which 2.9.6 lacked.
const kubectlGenericSchema = `{"type":"object","properties":{
	"command":{"type":"string","description":"The kubectl command to execute (e.g. patch, rollout, top)"},
	"subCommand":{"type":"string","description":"Subcommand if applicable"},
	"resourceType":{"type":"string"},"name":{"type":"string"},
	"namespace":{"type":"string","default":"default"},
	ALLNS
	"outputFormat":{"type":"string","enum":["json","yaml","wide","name","custom"]},
	"flags":{"type":"object","description":"Command flags as key-value pairs","additionalProperties":true},
	"args":{"type":"array","items":{"type":"string"},"description":"Additional command arguments"},
	"context":{"type":"string","default":""}},"required":["command"]}`

func kubectlGeneric(withAllNamespaces bool) string {
	allNS := ""
	if withAllNamespaces {
		allNS = `"allNamespaces":{"type":"boolean","description":"If true, run the command across all namespaces","default":false},`
	}
	schema := strings.Replace(kubectlGenericSchema, "ALLNS", allNS, 1)
	return `{"name":"kubectl_generic","description":"Execute any kubectl command with the provided arguments and flags","inputSchema":` + schema + `}`
}

func TestCapabilityRaisesSeverity(t *testing.T) {
	const harmless = `{"name":"list_notes","description":"List notes.","inputSchema":{"type":"object","properties":{"limit":{"type":"integer"}}}}`
	const harmlessNew = `{"name":"list_notes","description":"List the notes.","inputSchema":{"type":"object","properties":{"limit":{"type":"integer"}}}}`
	old := "[" + kubectlGeneric(false) + "," + harmless + "]"
	nw := "[" + kubectlGeneric(true) + "," + harmlessNew + "]"
	r := compare(t, old, nw, nil)
	// kubectl_generic's new optional parameter outranks the harmless
	// description change elsewhere: the tool takes a command.
	if len(r.Changes) < 2 || r.Changes[0].Name != "kubectl_generic" {
		t.Fatalf("kubectl_generic is not ranked first: %+v", r.Changes)
	}
	var added, desc *schemadiff.Change
	for i := range r.Changes {
		c := &r.Changes[i]
		switch {
		case c.Name == "kubectl_generic" && c.Kind == schemadiff.ParamAddedOptional:
			added = c
		case c.Name == "list_notes" && c.Kind == schemadiff.DescriptionChanged:
			desc = c
		}
	}
	if added == nil || desc == nil {
		t.Fatalf("missing changes: %+v", r.Changes)
	}
	if added.Severity != "high" || added.SeverityRaised == nil || added.SeverityRaised.From != "medium" ||
		added.SeverityRaised.Kind != schemadiff.CapCommand || added.SeverityRaised.Param != "command" {
		t.Errorf("allNamespaces: %+v raised %+v", added, added.SeverityRaised)
	}
	if want := `the tool takes a command parameter "command" (string)`; added.SeverityRaised.Reason != want {
		t.Errorf("reason %q, want %q", added.SeverityRaised.Reason, want)
	}
	if desc.Severity != "medium" || desc.SeverityRaised != nil {
		t.Errorf("the harmless change was raised: %+v", desc)
	}
	// Privilege stays name-derived: kubectl_generic is privileged by its
	// name, list_notes is not, and neither answer comes from the schema.
	if !classify.Default().Classify("kubectl_generic").Privileged || classify.Default().Classify("list_notes").Privileged {
		t.Error("privilege moved")
	}

	// The report says why, in every format.
	var text strings.Builder
	if err := report.RenderDiff(&text, r, "text", report.Options{}); err != nil {
		t.Fatal(err)
	}
	if want := `HIGH gained optional parameter "allNamespaces" ("boolean"): widening [severity raised from medium: the tool takes a command parameter "command" (string)]`; !strings.Contains(text.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, text.String())
	}
	var js strings.Builder
	if err := report.RenderDiff(&js, r, "json", report.Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Changes []map[string]any `json:"changes"`
	}
	if err := json.Unmarshal([]byte(js.String()), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range doc.Changes {
		if c["kind"] == schemadiff.ParamAddedOptional {
			raised, _ := c["severity_raised"].(map[string]any)
			found = raised["from"] == "medium" && raised["capability"] == "command" && raised["parameter"] == "command" && raised["via"] == "name"
		}
		if c["kind"] == schemadiff.DescriptionChanged {
			if _, ok := c["severity_raised"]; ok {
				t.Errorf("severity_raised on an unraised change: %v", c)
			}
		}
	}
	if !found {
		t.Errorf("JSON lacks severity_raised: %s", js.String())
	}
}

func TestCapabilityRaiseRules(t *testing.T) {
	cmdTool := func(desc, extra string) string {
		return `{"name":"runner","description":"` + desc + `","title":"T` + desc + `","inputSchema":{"type":"object","properties":{"cmd":{"type":"string"}` + extra + `}}}`
	}
	t.Run("low to medium, medium to high, high stays", func(t *testing.T) {
		r := compare(t, "["+cmdTool("a", "")+"]", "["+cmdTool("b", `,"x":{"type":"string"}`)+"]", nil)
		for _, c := range r.Changes {
			if c.SeverityRaised == nil {
				// The tool's title is outside the digest projection:
				// information, never raised.
				if c.Severity != "high" && !schemadiff.NeedsNoReview(c) {
					t.Errorf("%s not raised: %+v", c.Kind, c)
				}
				continue
			}
			want := map[string]string{"low": "medium", "medium": "high"}[c.SeverityRaised.From]
			if c.Severity != want {
				t.Errorf("%s: %s raised to %s", c.Kind, c.SeverityRaised.From, c.Severity)
			}
		}
	})
	t.Run("the change inside a capability parameter names it", func(t *testing.T) {
		old := `[{"name":"t","inputSchema":{"type":"object","properties":{"url":{"type":"string"},"cmd":{"type":"string","maxLength":10}}}}]`
		nw := `[{"name":"t","inputSchema":{"type":"object","properties":{"url":{"type":"string"},"cmd":{"type":"string","maxLength":20}}}}]`
		r := compare(t, old, nw, nil)
		for _, c := range r.Changes {
			if c.Kind == schemadiff.ConstraintLoosened && (c.SeverityRaised == nil || c.SeverityRaised.Param != "cmd") {
				t.Errorf("%+v raised %+v", c, c.SeverityRaised)
			}
		}
	})
	t.Run("narrowing is not raised", func(t *testing.T) {
		old := `[{"name":"t","inputSchema":{"type":"object","properties":{"cmd":{"type":"string"},"n":{"type":"string"}}}}]`
		nw := `[{"name":"t","inputSchema":{"type":"object","properties":{"cmd":{"type":"string","maxLength":9},"n":{"type":"string"}},"required":["n"]}}]`
		r := compare(t, old, nw, nil)
		seen := 0
		for _, c := range r.Changes {
			if c.Direction == schemadiff.Narrowing {
				seen++
				if c.SeverityRaised != nil {
					t.Errorf("narrowing raised: %+v", c)
				}
			}
		}
		if seen == 0 {
			t.Fatalf("no narrowing change: %+v", r.Changes)
		}
	})
	t.Run("the old side's capabilities count", func(t *testing.T) {
		old := `[{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"script":{"type":"string"}}}}]`
		nw := `[{"name":"t","description":"d2","inputSchema":{"type":"object","properties":{"script":{"type":"string"}}}}]`
		for _, pair := range [][2]string{{old, nw}, {old, strings.Replace(nw, `"script"`, `"name"`, 1)}} {
			r := compare(t, pair[0], pair[1], nil)
			for _, c := range r.Changes {
				if c.Kind == schemadiff.DescriptionChanged && c.Severity != "high" {
					t.Errorf("%+v", c)
				}
			}
		}
	})
	t.Run("a new tool with a capability parameter; a removed one is not raised", func(t *testing.T) {
		r := compare(t, `[{"name":"gone","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}]`,
			`[{"name":"run_page","inputSchema":{"type":"object","properties":{"url":{"type":"string"},"cmd":{"type":"string"}}}}]`, nil)
		for _, c := range r.Changes {
			switch c.Kind {
			case schemadiff.ToolAdded:
				if c.Severity != "high" || c.SeverityRaised == nil || c.SeverityRaised.Kind != schemadiff.CapCommand {
					t.Errorf("%+v", c)
				}
			case schemadiff.ToolRemoved:
				if c.SeverityRaised != nil || c.Severity != "low" {
					t.Errorf("%+v", c)
				}
			}
		}
	})
	t.Run("a path or a URL alone raises low to medium, never medium to high", func(t *testing.T) {
		r := compare(t, `[{"name":"fetch","description":"a","inputSchema":{"type":"object","properties":{"url":{"type":"string"}}}}]`,
			`[{"name":"fetch","description":"b","inputSchema":{"type":"object","properties":{"url":{"type":"string"},"timeout":{"type":"integer"}}}},{"name":"fetch_page","inputSchema":{"type":"object","properties":{"url":{"type":"string"}}}}]`, nil)
		for _, c := range r.Changes {
			if c.Severity == "high" {
				t.Errorf("a URL-only tool raised to high: %+v", c)
			}
			if c.Kind == schemadiff.ToolAdded && c.SeverityRaised != nil {
				t.Errorf("a medium change of a URL-only tool raised: %+v", c)
			}
		}
	})
	t.Run("no capability, no raise", func(t *testing.T) {
		r := compare(t, `[{"name":"t","description":"a","inputSchema":{"type":"object","properties":{"query":{"type":"string"}}}}]`,
			`[{"name":"t","description":"b","inputSchema":{"type":"object","properties":{"query":{"type":"string"}}}}]`, nil)
		for _, c := range r.Changes {
			if c.SeverityRaised != nil {
				t.Errorf("%+v", c)
			}
		}
	})
	t.Run("notation is never raised", func(t *testing.T) {
		cs := []schemadiff.Change{
			{Name: "t", Kind: "schema_notation_changed", Severity: "low"},
			{Name: "t", Kind: schemadiff.TitleChanged, Severity: "low"},
		}
		schemadiff.RaiseForCapabilities(cs, schemadiff.Capabilities(capSchema(t, `{"type":"object","properties":{"cmd":{"type":"string"}}}`), "/inputSchema"))
		if cs[0].Severity != "low" || cs[0].SeverityRaised != nil {
			t.Errorf("notation raised: %+v", cs[0])
		}
		if cs[1].Severity != "medium" || cs[1].SeverityRaised == nil {
			t.Errorf("title not raised: %+v", cs[1])
		}
		// Raising twice changes nothing.
		schemadiff.RaiseForCapabilities(cs, schemadiff.Capabilities(capSchema(t, `{"type":"object","properties":{"cmd":{"type":"string"}}}`), "/inputSchema"))
		if cs[1].Severity != "medium" {
			t.Errorf("raised twice: %+v", cs[1])
		}
	})
	t.Run("a hostile parameter name and type are escaped in reports", func(t *testing.T) {
		r := &schemadiff.SeverityRaise{From: "low", Capability: schemadiff.Capability{Kind: schemadiff.CapPath, Param: "p\x1b[31m", Type: "str\x1bing", Via: "name"}}
		s := r.Sentence(safetext.Quote)
		if strings.Contains(s, "\x1b") {
			t.Errorf("unescaped: %q", s)
		}
	})
}
