package manifest_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

func FuzzParseToolList(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"x"}}`,
		`[{"tools":[{"name":"a"}],"nextCursor":"c"},{"tools":[{"name":"b","description":"\u00e9"}]}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}]`,
		`[{"name":"a","annotations":{"readOnlyHint":true}},{"name":"a"}]`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`,
		`{"tools":[{"name":"x","input_schema":{"type":"object"},"outputSchema":null}]}`,
		// JSON-RPC ids (TestJSONRPCIDs): mismatched, null, missing, repeated,
		// object, notification-style, and the same value written two ways.
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":null,"result":{"tools":[]}}]`,
		`{"jsonrpc":"2.0","id":null,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","result":{"tools":[]}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"c"}},{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}},{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}]`,
		`[{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"},{"jsonrpc":"2.0","id":{"a":1},"result":{"tools":[]}}]`,
		`[{"jsonrpc":"2.0","method":"tools/list"},{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}]`,
		`[{"jsonrpc":"2.0","id":"1","method":"tools/list"},{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}]`,
		`[{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"},{"jsonrpc":"2.0","id":9007199254740992,"result":{"tools":[]}}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":1.0,"result":{"tools":[],"nextCursor":"c"}},{"jsonrpc":"2.0","id":"\u0061","method":"tools/list","params":{"cursor":"c"}},{"jsonrpc":"2.0","id":"a","result":{"tools":[]}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tl, err := manifest.ParseToolList(b)
		if err != nil {
			if !manifest.IsInputError(err) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		// An accepted JSON-RPC response always carries a string or number id.
		if d, err := jcs.Parse(b); err == nil && d.Root().Kind() == jcs.Object {
			if _, ok := d.Root().Get("jsonrpc"); ok {
				if id, ok := d.Root().Get("id"); !ok || (id.Kind() != jcs.String && id.Kind() != jcs.Number) {
					t.Fatal("a response without a usable id was accepted")
				}
			}
		}
		o := manifest.BuildObserved("s", tl, tl.Completeness, nil)
		if o.Observed.ToolCount != len(tl.Tools) {
			t.Fatal("count")
		}
		if (o.Status == manifest.StatusAmbiguous) == (o.Observed.ManifestDigest != nil) {
			t.Fatal("ambiguous iff no digest")
		}
		out, err := manifest.MarshalArtifact(o)
		if err != nil {
			t.Fatal(err)
		}
		// What we write, we can read back.
		back, err := manifest.ParseObserved(out, "self")
		if err != nil {
			t.Fatalf("own record rejected: %v\n%s", err, out)
		}
		if back.Observed.ToolCount != o.Observed.ToolCount {
			t.Fatal("round trip")
		}
		if o.Status == manifest.StatusObserved && tl.Completeness == manifest.Complete && len(tl.Tools) > 0 {
			if _, err := manifest.Pin(back, manifest.PinOptions{}); err != nil {
				t.Fatalf("clean record refused: %v", err)
			}
		}
	})
}

func FuzzParseObserved(f *testing.F) {
	tl, _ := manifest.ParseToolList([]byte(`{"tools":[{"name":"github.add_deploy_key"},{"name":"b"}]}`))
	b, _ := manifest.MarshalArtifact(manifest.BuildObserved("s", tl, manifest.Complete, nil))
	f.Add(b)
	nb, _ := manifest.MarshalArtifact(manifest.NotObserved("s"))
	f.Add(nb)
	f.Add([]byte(`{"schema":"assay.mcp_manifest_observed.v0","status":"observed","server":{"id":"g"},"observed":{"canonicalization":"x","tools_list_observed":true,"tools_list_complete":"complete","tool_digests":[]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := manifest.ParseObserved(b, "f")
		if err != nil {
			if strings.Contains(err.Error(), "\x1b") {
				t.Fatal("raw escape in error")
			}
			return
		}
		if o.Schema != manifest.ObservedSchemaID {
			t.Fatal("schema id not enforced")
		}
		if _, err := json.Marshal(o); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParseDeclared(f *testing.F) {
	tl, _ := manifest.ParseToolList([]byte(`{"tools":[{"name":"a"}]}`))
	d, _ := manifest.Pin(manifest.BuildObserved("s", tl, manifest.Complete, nil), manifest.PinOptions{})
	b, _ := manifest.MarshalArtifact(d)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := manifest.ParseDeclared(b, "f")
		if err != nil {
			return
		}
		if d.Schema != manifest.DeclaredSchemaID || !manifest.ValidDigest(d.ManifestDigest) {
			t.Fatal("validation let a bad baseline through")
		}
	})
}

func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte("declared_mcp_manifests:\n  github:\n    manifest_digest: \"sha256:" + strings.Repeat("ab", 32) + "\"\n"))
	f.Add([]byte("declared_mcp_manifests:\n  a: &x\n    manifest_digest: y\n  b: *x\n"))
	f.Add([]byte("{\"declared_mcp_manifests\":{\"s\":{\"manifest_digest\":\"sha256:" + strings.Repeat("0", 64) + "\",\"partial_observation\":\"warn\"}}}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := manifest.ParsePolicy(b, "f")
		if err != nil {
			return
		}
		if len(p.DeclaredMCPManifests) == 0 {
			t.Fatal("empty policy accepted")
		}
		for _, m := range p.DeclaredMCPManifests {
			if !manifest.ValidDigest(m.ManifestDigest) {
				t.Fatal("bad digest accepted")
			}
		}
	})
}

func FuzzParseSnapshot(f *testing.F) {
	tl, _ := manifest.ParseToolList([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"type":"number","maximum":1E3}}}},{"name":"b","_meta":{"k":[1,2]}}]}`))
	b, _ := manifest.MarshalSnapshot("s", manifest.Identity{Endpoint: "https://x/mcp", ServerName: "n"}, tl, manifest.Complete)
	f.Add(b)
	b, _ = manifest.MarshalSnapshotWith("s", manifest.Identity{}, tl, manifest.Complete, manifest.SnapshotOptions{ClientCapabilities: []byte(`{"sampling":{},"experimental":{"x":{"n":1E2}}}`)})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := manifest.ParseSnapshot(b, "f")
		if err != nil {
			return
		}
		// What we accept, we can write back, and it reads the same.
		out, err := manifest.MarshalSnapshotWith(s.ServerID, s.Identity, s.ToolList(), s.Completeness, manifest.SnapshotOptions{ClientCapabilities: s.ClientCapabilities})
		if err != nil {
			t.Fatal(err)
		}
		back, err := manifest.ParseSnapshot(out, "again")
		if err != nil {
			t.Fatalf("re-written snapshot rejected: %v", err)
		}
		if back.ManifestDigest != s.ManifestDigest || len(back.Tools) != len(s.Tools) || back.Identity != s.Identity || !bytes.Equal(back.ClientCapabilities, s.ClientCapabilities) {
			t.Fatal("snapshot round trip changed it")
		}
	})
}

// FuzzPeekHead: PeekHead never fails on any input, and what it says
// agrees with ReadTools: a schema it reads is the document's, and
// client capabilities it reads are those ReadTools reads from the
// snapshot. The input is also taken as a client capabilities object: a
// snapshot written with it is peeked exactly.
func FuzzPeekHead(f *testing.F) {
	tl, err := manifest.ParseToolList([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","description":"\u00e9"}]}`))
	if err != nil {
		f.Fatal(err)
	}
	for _, caps := range []string{`{}`, `{"sampling":{}}`, `{ "roots" : {"listChanged":true}, "x":[1.0,2e3] }`} {
		snap, err := manifest.MarshalSnapshotWith("s", manifest.Identity{Endpoint: "e"}, tl, manifest.Complete, manifest.SnapshotOptions{ClientCapabilities: []byte(caps)})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(snap)
		f.Add([]byte(caps))
	}
	f.Add([]byte(`{"schema":"mcpdrift.tool_snapshot.v1","tools":[],"client_capabilities":{"a":{}}}`))
	f.Add([]byte(`{"schema":"assay.declared_mcp_manifest.v0","tools":[]}`))
	f.Add([]byte(`{"client_capabilities":{},"client_capabilities":{"a":1},"schema":"x"}`))
	f.Add([]byte(`[{"name":"a"}]`))
	f.Fuzz(func(t *testing.T, src []byte) {
		h := manifest.PeekHead(src)
		if got, err := manifest.ReadTools(src, "f"); err == nil {
			if h.Schema != "" {
				doc, _ := jcs.Parse(src)
				if s, ok := doc.Root().Get("schema"); !ok || !s.StrEqual(h.Schema) {
					t.Fatalf("peeked schema %q, the document's is not", h.Schema)
				}
			}
			if h.ClientCapabilities != nil && (got.Snapshot == nil || !bytes.Equal(h.ClientCapabilities, got.Snapshot.ClientCapabilities)) {
				t.Fatalf("peeked capabilities %s, read %+v", h.ClientCapabilities, got.Snapshot)
			}
		}
		if doc, err := jcs.Parse(src); err == nil && doc.Root().Kind() == jcs.Object {
			snap, err := manifest.MarshalSnapshotWith("s", manifest.Identity{Endpoint: "e"}, tl, manifest.Complete, manifest.SnapshotOptions{ClientCapabilities: src})
			if err != nil {
				t.Fatal(err)
			}
			ph := manifest.PeekHead(snap)
			if ph.Schema != manifest.SnapshotSchemaID || !bytes.Equal(ph.ClientCapabilities, doc.Root().Canonical()) {
				t.Fatalf("a snapshot written with capabilities %s peeked as %+v", src, ph)
			}
		}
	})
}
