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
	// Every other change to a record built in this process is caught too
	// (Pin trusts the digest BuildObserved computed only for the entries
	// it was computed from).
	for name, tamper := range map[string]func(o *manifest.Observed){
		"a name":              func(o *manifest.Observed) { o.Observed.ToolDigests[0].Name += "x" },
		"the manifest digest": func(o *manifest.Observed) { d := "sha256:" + strings.Repeat("1", 64); o.Observed.ManifestDigest = &d },
		"an entry added": func(o *manifest.Observed) {
			o.Observed.ToolDigests = append(o.Observed.ToolDigests, manifest.ToolEntry{Name: "zz", ToolDigest: "sha256:" + strings.Repeat("2", 64), PrivilegeClassification: "unclassified"})
		},
		"an entry removed": func(o *manifest.Observed) { o.Observed.ToolDigests = o.Observed.ToolDigests[:0] },
	} {
		o := manifest.BuildObserved("s", tl, manifest.Complete, nil)
		tamper(o)
		if _, err := manifest.Pin(o, manifest.PinOptions{AllowEmpty: true}); err == nil || !strings.Contains(err.Error(), "does not recompute") {
			t.Errorf("tampered %s: %v", name, err)
		}
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
		if string(s.Tools[i].Raw()) != string(tl.Tools[i].Raw()) {
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

// A snapshot records the client capabilities the list was observed with,
// canonically; a snapshot without them (an older one) still reads.
func TestSnapshotClientCapabilities(t *testing.T) {
	tl, err := manifest.ParseToolList([]byte(`[{"name":"a"}]`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifest.MarshalSnapshotWith("s", manifest.Identity{}, tl, manifest.Complete,
		manifest.SnapshotOptions{ClientCapabilities: []byte(` { "sampling" : {}, "roots": {"listChanged": true} }`)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := manifest.ParseSnapshot(b, "snap.json")
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if got := string(s.ClientCapabilities); got != `{"roots":{"listChanged":true},"sampling":{}}` {
		t.Errorf("capabilities %s", got)
	}
	// Recorded as none ({}) is not the same as not recorded.
	b, _ = manifest.MarshalSnapshotWith("s", manifest.Identity{}, tl, manifest.Complete, manifest.SnapshotOptions{ClientCapabilities: []byte(`{}`)})
	if s, err := manifest.ParseSnapshot(b, "x"); err != nil || string(s.ClientCapabilities) != "{}" {
		t.Errorf("empty capabilities: %v %s", err, s.ClientCapabilities)
	}
	old, _ := manifest.MarshalSnapshot("s", manifest.Identity{}, tl, manifest.Complete)
	if strings.Contains(string(old), "client_capabilities") {
		t.Errorf("a snapshot without capabilities names them:\n%s", old)
	}
	if s, err := manifest.ParseSnapshot(old, "x"); err != nil || s.ClientCapabilities != nil {
		t.Errorf("old snapshot: %v %+v", err, s)
	}
	for _, bad := range []string{`[]`, `{"sampling":true}`, `"sampling"`} {
		doc := strings.Replace(string(old), `"canonicalization"`, `"client_capabilities": `+bad+`, "canonicalization"`, 1)
		if _, err := manifest.ParseSnapshot([]byte(doc), "x"); err == nil {
			t.Errorf("client_capabilities %s accepted", bad)
		}
	}
	if _, err := manifest.MarshalSnapshotWith("s", manifest.Identity{}, tl, manifest.Complete, manifest.SnapshotOptions{ClientCapabilities: []byte(`[]`)}); err == nil {
		t.Error("an array written as capabilities")
	}
}

// JSON-RPC ids in every form: a response answers a request only with the
// request's id (the same JSON value: 1 and 1.0 are one number, "1" and 1
// are not), a request without an id is a notification nobody answers, and
// "id": null is what a server sends when it could not read the request's
// id, never an answer to tools/list.
func TestJSONRPCIDs(t *testing.T) {
	req := func(id string, cursor string) string {
		s := `{"jsonrpc":"2.0"`
		if id != "-" {
			s += `,"id":` + id
		}
		s += `,"method":"tools/list"`
		if cursor != "" {
			s += `,"params":{"cursor":"` + cursor + `"}`
		}
		return s + "}"
	}
	res := func(id, next string) string {
		s := `{"jsonrpc":"2.0"`
		if id != "-" {
			s += `,"id":` + id
		}
		s += `,"result":{"tools":[]`
		if next != "" {
			s += `,"nextCursor":"` + next + `"`
		}
		return s + "}}"
	}
	arr := func(els ...string) string { return "[" + strings.Join(els, ",") + "]" }
	bad := []struct {
		name, in, ptr, msg string
	}{
		{"mismatched-id", arr(req("1", ""), res("2", "")), "/1/id", "does not answer the request at \"/0\""},
		{"mismatched-second-page", arr(req("1", ""), res("1", "c"), req("2", "c"), res("1", "")), "/3/id", "does not answer the request at \"/2\""},
		{"string-vs-number", arr(req(`"1"`, ""), res("1", "")), "/1/id", "does not answer"},
		{"beyond-float64", arr(req("9007199254740993", ""), res("9007199254740992", "")), "/1/id", "does not answer"},
		{"null-id-transcript", arr(req("1", ""), res("null", "")), "/1/id", "null"},
		{"null-id-single", res("null", ""), "/id", "null"},
		{"null-id-pages", arr(res("null", "c"), res("2", "")), "/0/id", "null"},
		{"missing-id-single", res("-", ""), "", "without an id"},
		{"missing-id-transcript", arr(req("1", ""), res("-", "")), "/1", "without an id"},
		{"missing-id-pages", arr(res("1", "c"), res("-", "")), "/1", "without an id"},
		{"object-id-response", res(`{"a":1}`, ""), "/id", "must be a string or a number, found object"},
		{"array-id-request", arr(req(`[1]`, ""), res("1", "")), "/0/id", "must be a string or a number, found array"},
		{"bool-id-response", arr(req("1", ""), res("true", "")), "/1/id", "found true"},
		{"null-id-request", arr(req("null", ""), res("null", "")), "/0/id", "null"},
		{"object-id-request", arr(req(`{}`, ""), res(`{}`, "")), "/0/id", "found object"},
		{"notification-request", arr(req("-", ""), res("1", "")), "/0", "notification"},
		{"repeated-request-ids", arr(req("1", ""), res("1", "c"), req("1", "c"), res("1", "")), "/2/id", "repeats the id of the request at \"/0\""},
		{"repeated-request-ids-1.0", arr(req("7", ""), res("7", "c"), req("7.0", "c"), res("7.0", "")), "/2/id", "repeats the id"},
		{"bare-result-in-transcript", arr(req("1", ""), `{"tools":[]}`), "/1", "bare result"},
		{"response-before-first-request", arr(res("1", "c"), req("2", "c"), res("2", "")), "/0", "without its request"},
		{"request-wrong-jsonrpc", arr(`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, res("1", "")), "/0/jsonrpc", `must be "2.0"`},
		{"request-params-not-object", arr(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":["c0"]}`, res("1", "")), "/0/params", "must be an object"},
		{"hostile-id-text", arr(req(`"\u202eevil\u001b[31m"`, ""), res(`"x"`, "")), "/1/id", "does not answer"},
		{"hostile-raw-id", arr(req("\"\u202eevil\"", ""), res("\"x\u202e\"", "")), "/1/id", `\u202e`},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := manifest.ParseToolList([]byte(c.in))
			if err == nil {
				t.Fatal("accepted")
			}
			var ie *manifest.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %T %v", err, err)
			}
			if ie.Pointer != c.ptr {
				t.Errorf("pointer %q, want %q (%v)", ie.Pointer, c.ptr, err)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not say %q", err, c.msg)
			}
			if strings.ContainsRune(err.Error(), 0x1b) || strings.ContainsRune(err.Error(), 0x202e) {
				t.Error("raw server text in the error message")
			}
		})
	}
	good := []struct {
		name, in string
		comp     manifest.Completeness
	}{
		{"number-ids", arr(req("1", ""), res("1", "c"), req("2", "c"), res("2", "")), manifest.Complete},
		{"string-ids", arr(req(`"a"`, ""), res(`"a"`, "")), manifest.Complete},
		{"same-string-escaped", arr(req(`"a"`, ""), res(`"\u0061"`, "")), manifest.Complete},
		{"same-number-written-differently", arr(req("1", ""), res("1.0", "c"), req("2", "c"), res("2e0", "")), manifest.Complete},
		{"zero-and-negative", arr(req("0", ""), res("-0", "c"), req("-5", "c"), res("-5", "")), manifest.Complete},
		{"big-ids-exact", arr(req("9007199254740993", ""), res("9007199254740993", "")), manifest.Complete},
		{"single-string-id", res(`"x"`, ""), manifest.Complete},
		{"pages-ids-may-repeat-across-sessions", arr(res("1", "c"), res("1", "")), manifest.Complete},
	}
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			tl, err := manifest.ParseToolList([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if tl.Completeness != c.comp {
				t.Errorf("completeness %s (%s)", tl.Completeness, tl.Reason)
			}
		})
	}
}
