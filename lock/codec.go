package lock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// Parse reads a lock: strict JSON (duplicate keys, invalid UTF-8 and the
// like are errors), validated against its schema, every digest
// recomputed. file names the lock in errors.
func Parse(src []byte, file string) (*Lock, error) {
	fail := func(ptr, format string, args ...any) (*Lock, error) {
		return nil, &Error{File: file, Pointer: ptr, Msg: fmt.Sprintf(format, args...)}
	}
	doc, err := jcs.Parse(src)
	if err != nil {
		return fail("", "%s", err.Error())
	}
	root := doc.Root()
	if root.Kind() != jcs.Object {
		return fail("", "expected a JSON object, found %s", root.Kind())
	}
	if id, ok := root.Get("schema"); !ok || !id.StrEqual(SchemaID) {
		got := "none"
		if ok {
			got = safetext.Quote(string(id.Raw()))
		}
		return fail("/schema", "not a lock: schema is %s, expected %q", got, SchemaID)
	}
	if err := schemas.Validate(schemas.Lock, lockInstance(root)); err != nil {
		return fail("", "%s", err.Error())
	}
	l := &Lock{}
	servers, _ := root.Get("servers")
	seen := map[string]int{}
	for i := range servers.Len() {
		ptr := fmt.Sprintf("/servers/%d", i)
		s, perr := parseServer(servers.Index(i), ptr)
		if perr != nil {
			perr.File = file
			return nil, perr
		}
		if j, dup := seen[s.Name]; dup {
			return fail(ptr+"/name", "server %s is in the lock twice (also at /servers/%d)", safetext.Quote(s.Name), j)
		}
		seen[s.Name] = i
		l.Servers = append(l.Servers, s)
	}
	slices.SortFunc(l.Servers, func(a, b *Server) int { return strings.Compare(a.Name, b.Name) })
	return l, nil
}

// lockInstance is the lock in the form its schema validates, each tool
// definition reduced to what the schema says of it (an object with a
// string name): definitions are the server's bytes, checked by their own
// digests, and a large lock need not become a tree of Go maps.
func lockInstance(root jcs.Value) any {
	m := make(map[string]any, root.Len())
	for i := range root.Len() {
		k, v := root.Member(i)
		if k.Str() != "servers" || v.Kind() != jcs.Array {
			m[k.Str()] = schemas.Instance(v)
			continue
		}
		servers := make([]any, v.Len())
		for j := range servers {
			servers[j] = serverInstance(v.Index(j))
		}
		m["servers"] = servers
	}
	return m
}

func serverInstance(v jcs.Value) any {
	if v.Kind() != jcs.Object {
		return schemas.Instance(v)
	}
	m := make(map[string]any, v.Len())
	for i := range v.Len() {
		k, x := v.Member(i)
		if k.Str() != "tools" || x.Kind() != jcs.Array {
			m[k.Str()] = schemas.Instance(x)
			continue
		}
		tools := make([]any, x.Len())
		for j := range tools {
			t := x.Index(j)
			if t.Kind() != jcs.Object {
				tools[j] = schemas.Instance(t)
				continue
			}
			tm := make(map[string]any, t.Len())
			for n := range t.Len() {
				tk, tv := t.Member(n)
				if tk.Str() == "definition" && tv.Kind() == jcs.Object {
					dm := map[string]any{}
					if name, ok := tv.Get("name"); ok {
						dm["name"] = schemas.Instance(name)
					}
					tm["definition"] = dm
					continue
				}
				tm[tk.Str()] = schemas.Instance(tv)
			}
			tools[j] = tm
		}
		m["tools"] = tools
	}
	return m
}

// decodeInto decodes a schema-validated member with encoding/json,
// unknown fields refused (the schema already refused them).
func decodeInto(v jcs.Value, out any) error {
	dec := json.NewDecoder(bytes.NewReader(v.Raw()))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

func parseServer(v jcs.Value, ptr string) (*Server, *Error) {
	bad := func(p, format string, args ...any) (*Server, *Error) {
		return nil, &Error{Pointer: p, Msg: fmt.Sprintf(format, args...)}
	}
	s := &Server{}
	name, _ := v.Get("name")
	s.Name = name.Str()
	src, _ := v.Get("source")
	if err := decodeInto(src, &s.Source); err != nil {
		return bad(ptr+"/source", "%s", safetext.Inert(err.Error()))
	}
	if err := checkSource(s.Source, false); err != nil {
		return bad(ptr+"/source", "%s", err.Error())
	}
	prof, _ := v.Get("profile")
	s.Profile = prof.Str()
	if aa, ok := v.Get("auto_approve"); ok {
		for i := range aa.Len() {
			s.AutoApprove = append(s.AutoApprove, aa.Index(i).Str())
		}
		slices.Sort(s.AutoApprove)
	}
	idv, _ := v.Get("identity")
	if err := decodeInto(idv, &s.Identity); err != nil {
		return bad(ptr+"/identity", "%s", safetext.Inert(err.Error()))
	}
	if cc, ok := v.Get("client_capabilities"); ok {
		s.ClientCapabilities = cc.Canonical()
	}
	dv, _ := v.Get("declared")
	// The lock's schema validated the baseline (by reference to the
	// declared schema): it is read from the tree, not parsed again.
	d, err := manifest.DeclaredFromValidated(dv)
	if err != nil {
		return bad(ptr+"/declared", "%s", safetext.Inert(err.Error()))
	}
	if d.Server.ID != s.Name {
		return bad(ptr+"/declared/server/id", "the baseline's server id %s is not the server's name %s", safetext.Quote(d.Server.ID), safetext.Quote(s.Name))
	}
	tv, _ := v.Get("tools")
	defs := &manifest.Definitions{From: "the lock's definitions", Tools: make([]manifest.Tool, 0, tv.Len())}
	for i := range tv.Len() {
		tp := fmt.Sprintf("%s/tools/%d", ptr, i)
		x := tv.Index(i)
		t := &Tool{}
		n, _ := x.Get("name")
		t.Name = n.Str()
		av, _ := x.Get("approval")
		if err := decodeInto(av, &t.Approval); err != nil {
			return bad(tp+"/approval", "%s", safetext.Inert(err.Error()))
		}
		def, _ := x.Get("definition")
		mt, err := manifest.ToolFromValue(def, tp+"/definition")
		if err != nil {
			return bad(tp+"/definition", "%s", err.Error())
		}
		if mt.Name != t.Name {
			return bad(tp+"/definition/name", "the definition is of tool %s, not %s", safetext.Quote(mt.Name), safetext.Quote(t.Name))
		}
		// A definition mcpdrift wrote is compact already: one copy of its
		// bytes, with no second scan; one with whitespace (hand-edited) is
		// compacted as newTool compacts it.
		if raw := def.Raw(); bytes.IndexAny(raw, " \t\r\n") < 0 {
			t.Definition = bytes.Clone(raw)
		} else {
			var cb bytes.Buffer
			if err := json.Compact(&cb, raw); err != nil {
				return bad(tp+"/definition", "%s", safetext.Inert(err.Error()))
			}
			t.Definition = cb.Bytes()
		}
		t.tool = mt
		s.Tools = append(s.Tools, t)
		defs.Tools = append(defs.Tools, mt)
	}
	// The baseline's validity, the check gate and the gateway make: a lock
	// whose entry fails it is refused whole (a reloading gateway withholds).
	if ps := manifest.CheckBaseline(d, defs); len(ps) > 0 {
		if at := ps[0].Definition; at >= 0 {
			return bad(fmt.Sprintf("%s/tools/%d/definition", ptr, at), "%s (%s)", ps[0].Message, ps[0].Code)
		}
		return bad(ptr+"/declared"+ps[0].At, "%s (%s)", ps[0].Message, ps[0].Code)
	}
	for i, t := range s.Tools {
		if digest := t.tool.ToolDigest(); t.Approval.Digest != digest {
			return bad(fmt.Sprintf("%s/tools/%d/approval/digest", ptr, i), "the approval is of %s, not of the definition (%s)", t.Approval.Digest, digest)
		}
	}
	slices.SortFunc(s.Tools, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(d.Tools, func(a, b manifest.ToolEntry) int { return strings.Compare(a.Name, b.Name) })
	s.Declared = d
	if e := parseSurface(s, v, ptr); e != nil {
		return nil, e
	}
	if e := parseRefs(s, v, ptr); e != nil {
		return nil, e
	}
	if hv, ok := v.Get("history"); ok {
		if err := decodeInto(hv, &s.History); err != nil {
			return bad(ptr+"/history", "%s", safetext.Inert(err.Error()))
		}
	}
	return s, nil
}

// parseRefs reads the documents pinned by hash of a server's entry (none:
// nil): each URL in the one normal form a $ref is matched in, once.
func parseRefs(s *Server, v jcs.Value, ptr string) *Error {
	refErr := func(p, format string, args ...any) *Error {
		return &Error{Pointer: p, Msg: fmt.Sprintf(format, args...)}
	}
	rv, ok := v.Get("refs")
	if !ok {
		return nil
	}
	if err := decodeInto(rv, &s.Refs); err != nil {
		return refErr(ptr+"/refs", "%s", safetext.Inert(err.Error()))
	}
	urls := make(map[string]bool, len(s.Refs))
	for i, r := range s.Refs {
		// A pin is of a document URL in the one form a $ref is
		// matched in; another spelling would never match.
		switch doc, err := schemadiff.RefDocument(r.URL); {
		case err != nil:
			// Not quoted: it may carry user info.
			return refErr(fmt.Sprintf("%s/refs/%d/url", ptr, i), "the ref's URL cannot be pinned: %s", safetext.Inert(err.Error()))
		case doc != r.URL:
			return refErr(fmt.Sprintf("%s/refs/%d/url", ptr, i), "ref %s is not in its normal form (%s), so no $ref would match it; pin it with mcpdrift lock pin-ref", safetext.Quote(r.URL), safetext.Quote(doc))
		}
		if urls[r.URL] {
			return refErr(fmt.Sprintf("%s/refs/%d/url", ptr, i), "ref %s is pinned twice", safetext.Quote(r.URL))
		}
		urls[r.URL] = true
	}
	slices.SortFunc(s.Refs, func(a, b Ref) int { return strings.Compare(a.URL, b.URL) })
	return nil
}

// Marshal writes the lock in its canonical form.
func (l *Lock) Marshal() []byte {
	n := 64
	for _, s := range l.Servers {
		for _, t := range s.Tools {
			n += len(t.Definition)*1 + 512
		}
		n += 1024 + 256*len(s.History)
	}
	b := make([]byte, 0, n)
	b = append(b, "{\n  \"schema\": "...)
	b = jcs.AppendString(b, SchemaID)
	b = append(b, ",\n  \"servers\": ["...)
	servers := slices.Clone(l.Servers)
	slices.SortFunc(servers, func(a, c *Server) int { return strings.Compare(a.Name, c.Name) })
	for i, s := range servers {
		if i > 0 {
			b = append(b, ',')
		}
		b = s.appendTo(b)
	}
	if len(servers) > 0 {
		b = append(b, "\n  "...)
	}
	return append(b, "]\n}\n"...)
}

// line appends v as one line of compact JSON (encoding/json: struct
// members in declaration order, map keys sorted, no HTML escaping).
func line(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("lock: %v", err)) // every value here is encodable
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

func (s *Server) appendTo(b []byte) []byte {
	const ind = "\n      "
	b = append(b, "\n    {"+ind+`"name": `...)
	b = jcs.AppendString(b, s.Name)
	b = append(b, ","+ind+`"source": `...)
	b = line(b, s.Source)
	b = append(b, ","+ind+`"profile": `...)
	b = jcs.AppendString(b, s.Profile)
	if len(s.AutoApprove) > 0 {
		aa := slices.Clone(s.AutoApprove)
		slices.Sort(aa)
		b = append(b, ","+ind+`"auto_approve": `...)
		b = line(b, slices.Compact(aa))
	}
	b = append(b, ","+ind+`"identity": `...)
	b = line(b, s.Identity)
	if s.ClientCapabilities != nil {
		b = append(b, ","+ind+`"client_capabilities": `...)
		b = append(b, s.ClientCapabilities...)
	}
	d := s.Declared
	b = append(b, ","+ind+`"declared": {`...)
	b = append(b, ind+`  "schema": `...)
	b = jcs.AppendString(b, d.Schema)
	if d.Note != "" {
		b = append(b, ","+ind+`  "note": `...)
		b = line(b, d.Note)
	}
	b = append(b, ","+ind+`  "server": `...)
	b = line(b, d.Server)
	b = append(b, ","+ind+`  "canonicalization": `...)
	b = jcs.AppendString(b, d.Canonicalization)
	b = append(b, ","+ind+`  "manifest_digest": `...)
	b = jcs.AppendString(b, d.ManifestDigest)
	b = append(b, ","+ind+`  "tools": [`...)
	entries := slices.Clone(d.Tools)
	slices.SortFunc(entries, func(a, c manifest.ToolEntry) int { return strings.Compare(a.Name, c.Name) })
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, ind+"    "...)
		b = line(b, e)
	}
	if len(entries) > 0 {
		b = append(b, ind+"  "...)
	}
	b = append(b, "]"+ind+"},"+ind+`"tools": [`...)
	tools := slices.Clone(s.Tools)
	slices.SortFunc(tools, func(a, c *Tool) int { return strings.Compare(a.Name, c.Name) })
	for i, t := range tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, ind+"  {"+ind+`    "name": `...)
		b = jcs.AppendString(b, t.Name)
		b = append(b, ","+ind+`    "approval": `...)
		b = line(b, t.Approval)
		b = append(b, ","+ind+`    "definition": `...)
		b = append(b, t.Definition...)
		b = append(b, ind+"  }"...)
	}
	if len(tools) > 0 {
		b = append(b, ind...)
	}
	b = append(b, ']')
	b = s.appendSurface(b, ind)
	if len(s.Refs) > 0 {
		refs := slices.Clone(s.Refs)
		slices.SortFunc(refs, func(a, c Ref) int { return strings.Compare(a.URL, c.URL) })
		b = append(b, ","+ind+`"refs": [`...)
		for i, r := range refs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, ind+"  "...)
			b = line(b, r)
		}
		b = append(b, ind+"]"...)
	}
	if len(s.History) > 0 {
		b = append(b, ","+ind+`"history": [`...)
		for i, h := range s.History {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, ind+"  "...)
			b = line(b, h)
		}
		b = append(b, ind+"]"...)
	}
	return append(b, "\n    }"...)
}
