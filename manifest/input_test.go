package manifest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

func TestInputForms(t *testing.T) {
	tool := func(n string) string { return `{"name":"` + n + `","inputSchema":{"type":"object"}}` }
	cases := []struct {
		name, in string
		form     string
		n, pages int
		comp     manifest.Completeness
	}{
		{"jsonrpc", `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tool("a") + `]}}`, manifest.FormJSONRPC, 1, 1, manifest.Complete},
		{"jsonrpc-next", `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tool("a") + `],"nextCursor":"p2"}}`, manifest.FormJSONRPC, 1, 1, manifest.Partial},
		{"jsonrpc-next-null", `{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":null}}`, manifest.FormJSONRPC, 0, 1, manifest.Complete},
		{"empty-cursor-is-a-cursor", `{"tools":[],"nextCursor":""}`, manifest.FormResult, 0, 1, manifest.Partial},
		{"result", `{"tools":[` + tool("a") + `,` + tool("b") + `]}`, manifest.FormResult, 2, 1, manifest.Complete},
		{"bare-array", `[` + tool("a") + `,` + tool("b") + `]`, manifest.FormToolArray, 2, 0, manifest.Unknown},
		{"empty-array", `[]`, manifest.FormToolArray, 0, 0, manifest.Unknown},
		{"pages", `[{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tool("a") + `],"nextCursor":"c1"}},{"jsonrpc":"2.0","id":2,"result":{"tools":[` + tool("b") + `]}}]`, manifest.FormPages, 2, 2, manifest.Complete},
		{"pages-results", `[{"tools":[` + tool("a") + `],"nextCursor":"c1"},{"tools":[` + tool("b") + `],"nextCursor":"c2"}]`, manifest.FormPages, 2, 2, manifest.Partial},
		{"pages-cycle", `[{"tools":[],"nextCursor":"c1"},{"tools":[],"nextCursor":"c1"}]`, manifest.FormPages, 0, 2, manifest.Partial},
		{"transcript", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tool("a") + `],"nextCursor":"c1"}},{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"c1"}},{"jsonrpc":"2.0","id":2,"result":{"tools":[` + tool("b") + `]}}]`, manifest.FormPages, 2, 2, manifest.Complete},
		{"transcript-starts-mid-chain", `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c0"}},{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tool("a") + `]}}]`, manifest.FormPages, 1, 1, manifest.Partial},
		{"transcript-unanswered", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"c1"}},{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"c1"}}]`, manifest.FormPages, 0, 1, manifest.Partial},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl, err := manifest.ParseToolList([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if tl.Form != c.form || len(tl.Tools) != c.n || tl.Pages != c.pages || tl.Completeness != c.comp {
				t.Errorf("form %s tools %d pages %d completeness %s (%s)", tl.Form, len(tl.Tools), tl.Pages, tl.Completeness, tl.Reason)
			}
			if tl.Reason == "" {
				t.Error("completeness must come with a reason")
			}
		})
	}
}

// Each bad input is a clear error that says where.
func TestBadInput(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	cases := []struct {
		name, in, ptr, msg string
	}{
		{"truncated", `{"tools":[{"name":"a"`, "/tools/0", "unexpected end of input"},
		{"duplicate-key-in-tool", `{"tools":[{"name":"a","inputSchema":{"type":"object","type":"string"}}]}`, "/tools/0/inputSchema/type", "duplicate member name"},
		{"duplicate-key-envelope", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]},"result":{"tools":[]}}`, "/result", "duplicate member name"},
		{"invalid-utf8", "{\"tools\":[{\"name\":\"a\xff\"}]}", "/tools/0/name", "invalid UTF-8"},
		{"1e400", `{"tools":[{"name":"a","inputSchema":{"maximum":1e400}}]}`, "/tools/0/inputSchema/maximum", "outside the range"},
		{"lone-surrogate", `{"tools":[{"name":"a","description":"\ud800x"}]}`, "/tools/0/description", "lone high surrogate"},
		{"entry-not-object", `{"tools":[{"name":"a"},"b"]}`, "/tools/1", "must be an object"},
		{"name-missing", `{"tools":[{"description":"x"}]}`, "/tools/0", "without a name"},
		{"name-not-string", `{"tools":[{"name":7}]}`, "/tools/0/name", "must be a string"},
		{"name-empty", `{"tools":[{"name":""}]}`, "/tools/0/name", "must not be empty"},
		{"deep", deep, strings.Repeat("/0", 1000), "nesting deeper than 1000"},
		{"empty", ``, "", "empty input"},
		{"whitespace", " \n", "", "no JSON value"},
		{"jsonrpc-error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found\u001b[31m"}}`, "/error", "JSON-RPC error response, not a tools/list result (code -32601)"},
		{"tools-not-array", `{"tools":{}}`, "/tools", "must be an array"},
		{"cursor-not-string", `{"tools":[],"nextCursor":5}`, "/nextCursor", "must be a string"},
		{"page-after-end", `[{"tools":[]},{"tools":[]}]`, "/1", "without nextCursor"},
		{"mixed", `[{"name":"a"},{"tools":[]}]`, "/1", "mixed forms"},
		{"wrong-jsonrpc", `{"jsonrpc":"1.0","result":{"tools":[]}}`, "/jsonrpc", "must be \"2.0\""},
		{"no-result", `{"jsonrpc":"2.0","id":1}`, "", "without a result"},
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "", "not a response"},
		{"scalar", `"tools"`, "", "expected a JSON-RPC response"},
		{"transcript-cursor-mismatch", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"a"}},{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"b"}},{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]`, "/3", "did not send the previous page's nextCursor"},
		{"trailing", `{"tools":[]} {}`, "", "trailing data"},
		{"nan", `{"tools":[{"name":"a","inputSchema":{"x":NaN}}]}`, "/tools/0/inputSchema/x", "NaN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := manifest.ParseToolList([]byte(c.in))
			if err == nil {
				t.Fatal("accepted")
			}
			if !manifest.IsInputError(err) {
				t.Errorf("not an input error: %T", err)
			}
			var ptr string
			var je *jcs.Error
			var ie *manifest.InputError
			switch {
			case errors.As(err, &je):
				ptr = je.Pointer
			case errors.As(err, &ie):
				ptr = ie.Pointer
			}
			if ptr != c.ptr {
				t.Errorf("pointer %q, want %q (%v)", ptr, c.ptr, err)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not say %q", err, c.msg)
			}
			if strings.ContainsRune(err.Error(), 0x1b) {
				t.Error("raw escape character in the error message")
			}
		})
	}
}

func TestAmbiguousAndNotObserved(t *testing.T) {
	tl, err := manifest.ParseToolList([]byte(`{"tools":[{"name":"search","description":"a"},{"name":"search","description":"b"},{"name":"github.add_deploy_key"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o := manifest.BuildObserved("srv", tl, tl.Completeness, nil)
	if o.Status != manifest.StatusAmbiguous || o.Observed.ManifestDigest != nil {
		t.Errorf("status %s digest %v", o.Status, o.Observed.ManifestDigest)
	}
	if o.Observed.ToolCount != 3 || len(o.Observed.ToolDigests) != 3 || o.Observed.PrivilegedToolCount != 1 {
		t.Errorf("ambiguous must keep per-tool detail and counts: %+v", o.Observed)
	}
	if _, err := manifest.Pin(o, manifest.PinOptions{}); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("pin of an ambiguous record: %v", err)
	}
	n := manifest.NotObserved("srv")
	if n.Observed.ToolsListObserved || n.Observed.ToolsListComplete != manifest.Unknown || n.Observed.ManifestDigest != nil || n.Observed.ToolDigests == nil {
		t.Errorf("not observed: %+v", n.Observed)
	}
	if _, err := manifest.Pin(n, manifest.PinOptions{}); err == nil || !strings.Contains(err.Error(), "not observed") {
		t.Errorf("pin of not_observed: %v", err)
	}
}

func TestPinRefusals(t *testing.T) {
	tl, _ := manifest.ParseToolList([]byte(`[{"name":"a"}]`))
	o := manifest.BuildObserved("s", tl, manifest.Unknown, nil)
	if _, err := manifest.Pin(o, manifest.PinOptions{}); err == nil || !strings.Contains(err.Error(), "unknown, not complete") {
		t.Errorf("unknown completeness: %v", err)
	}
	o = manifest.BuildObserved("s", tl, manifest.Partial, nil)
	if _, err := manifest.Pin(o, manifest.PinOptions{}); err == nil || !strings.Contains(err.Error(), "partial, not complete") {
		t.Errorf("partial: %v", err)
	}
	o = manifest.BuildObserved("s", tl, manifest.Complete, nil)
	d, err := manifest.Pin(o, manifest.PinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.ManifestDigest != *o.Observed.ManifestDigest || len(d.Tools) != 1 || d.Tools[0].FieldDigests == nil {
		t.Errorf("declared %+v", d)
	}
	empty, _ := manifest.ParseToolList([]byte(`{"tools":[]}`))
	o = manifest.BuildObserved("s", empty, manifest.Complete, nil)
	if _, err := manifest.Pin(o, manifest.PinOptions{}); err == nil {
		t.Error("an empty list pins only with AllowEmpty")
	}
	if _, err := manifest.Pin(o, manifest.PinOptions{AllowEmpty: true}); err != nil {
		t.Error(err)
	}
	// A tampered record: the digest no longer recomputes.
	o = manifest.BuildObserved("s", tl, manifest.Complete, nil)
	o.Observed.ToolDigests[0].ToolDigest = "sha256:" + strings.Repeat("0", 64)
	if _, err := manifest.Pin(o, manifest.PinOptions{}); err == nil || !strings.Contains(err.Error(), "does not recompute") {
		t.Errorf("tampered: %v", err)
	}
}

// A snapshot keeps the tool bytes: digests recompute, and the tools come
// back byte for byte.
func TestSnapshotRoundTrip(t *testing.T) {
	src := `{"tools":[{"name":"a","description":"caf\u00e9","inputSchema":{"type":"object","properties":{"n":{"maximum":1E3}}},"x-vendor":{"k":1}},{"name":"b"}]}`
	tl, err := manifest.ParseToolList([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	id := manifest.Identity{Endpoint: "stdio:npx -y server", PublisherKey: "SHA256:k", ServerName: "srv", ServerVersion: "1.2.3"}
	b, err := manifest.MarshalSnapshot("s", id, tl, manifest.Complete)
	if err != nil {
		t.Fatal(err)
	}
	s, err := manifest.ParseSnapshot(b, "snap.json")
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	o := manifest.BuildObserved("s", tl, manifest.Complete, nil)
	if s.ManifestDigest != *o.Observed.ManifestDigest || s.Identity != id || s.ServerID != "s" || s.Completeness != manifest.Complete {
		t.Errorf("snapshot %+v", s)
	}
	for i := range tl.Tools {
		if string(s.Tools[i].Value.Raw()) != string(tl.Tools[i].Value.Raw()) {
			t.Errorf("tool %d bytes changed", i)
		}
	}
	// Tampering is refused.
	bad := strings.Replace(string(b), `caf\u00e9`, `cafe`, 1)
	if _, err := manifest.ParseSnapshot([]byte(bad), "x"); err == nil || !strings.Contains(err.Error(), "does not recompute") {
		t.Errorf("tampered snapshot: %v", err)
	}
	if _, err := manifest.ParseSnapshot([]byte(strings.Replace(string(b), `"identity"`, `"identty"`, 1)), "x"); err == nil {
		t.Error("typo key accepted")
	}
	// Ambiguous lists snapshot with a null digest.
	dup, _ := manifest.ParseToolList([]byte(`[{"name":"a"},{"name":"a"}]`))
	b, _ = manifest.MarshalSnapshot("s", manifest.Identity{}, dup, manifest.Unknown)
	if s, err := manifest.ParseSnapshot(b, "x"); err != nil || s.ManifestDigest != "" {
		t.Errorf("ambiguous snapshot: %v %+v", err, s)
	}
}
