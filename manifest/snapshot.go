package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// SnapshotSchemaID identifies a tool snapshot: the raw tool definitions kept
// beside a declared baseline (or an observation) so that a later check can
// diff structure, not only digests. The digest-only artifacts stay exactly
// as specified; the snapshot is mcpdrift's own file.
const SnapshotSchemaID = "mcpdrift.tool_snapshot.v1"

// Identity is the server half of the identity tuple: where the tools came
// from and who the server says it is. Empty fields were not known.
type Identity struct {
	// Endpoint is the URL, or "stdio:" followed by the exact command line.
	Endpoint string `json:"endpoint,omitempty"`
	// ResolvedEndpoint is a stdio endpoint with every absolute path that
	// is or passes through a symlink replaced by the file it resolved to
	// when mcpdrift started the server (a node_modules/.bin/<bin> link →
	// node_modules/@scope/name/...), when that differs from Endpoint: what
	// ran, which names the package behind a bin link. Only compared, never
	// resolved again: the pinned side's files may be another machine's.
	ResolvedEndpoint string `json:"resolved_endpoint,omitempty"`
	// PublisherKey is a configured publisher key (fingerprint), if any.
	PublisherKey string `json:"publisher_key,omitempty"`
	// ServerName and ServerVersion are what the server reported
	// (serverInfo in initialize or server/discover).
	ServerName    string `json:"server_name,omitempty"`
	ServerVersion string `json:"server_version,omitempty"`
	// Env are the variables given to a stdio server (from a client
	// configuration, or --pass-env): names and value digests (EnvDigest),
	// never values. They can change the tool list. nil: not recorded (an
	// HTTP server, or a snapshot from before env was recorded); an empty
	// list: a stdio server given none.
	Env *[]EnvEntry `json:"env,omitempty"`
}

// SameEndpoint reports whether an endpoint now is the one pinned: the same
// text, or a pinned URL that, recorded as mcpdrift records URLs now
// (redact.SanitizeURL: user info, query values and path segments that
// look like a credential left out), is it. An endpoint pinned before a
// credential in its path was left out keeps its identity; two endpoints
// that differ only in such a segment cannot be told apart, as neither is
// written.
func SameEndpoint(pinned, now string) bool {
	if pinned == now {
		return true
	}
	if !strings.HasPrefix(pinned, "http://") && !strings.HasPrefix(pinned, "https://") {
		return false
	}
	if _, err := url.Parse(pinned); err != nil {
		return false // SanitizeURL's placeholder for it is no endpoint
	}
	return redact.SanitizeURL(pinned) == now
}

// EnvEntry is one environment variable of a stdio server: its name and
// the digest of its value.
type EnvEntry struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

// EnvDigest is the recorded digest of an environment value: SHA-256 over a
// domain-separated preimage (name and value). It tells a change apart
// without recording the value; a low-entropy value (a flag such as 1) can
// be guessed from it, a token cannot.
func EnvDigest(name, value string) string {
	h := sha256.New()
	h.Write([]byte("mcpdrift.env.v1\x00"))
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(value))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Snapshot is a parsed tool snapshot.
type Snapshot struct {
	ServerID       string
	Identity       Identity
	ManifestDigest string // "" when the tool list was ambiguous
	Completeness   Completeness
	Tools          []Tool
	// ClientCapabilities is the ClientCapabilities object the list was
	// observed with, in canonical form (RFC 8785); nil when the snapshot
	// does not say (a saved list, or a snapshot written before the
	// member existed).
	ClientCapabilities []byte
	// Surface is the snapshot's "surface" member as the file has it (the
	// pinned model-facing surface, package surface reads it); nil when
	// the snapshot pins none.
	Surface []byte
}

// SnapshotOptions are the optional members of a snapshot.
type SnapshotOptions struct {
	// ClientCapabilities, when set, is the ClientCapabilities object (a
	// JSON object) the client declared when it observed the list: servers
	// may list some tools only to clients declaring sampling, elicitation
	// or roots, so it is part of what was pinned.
	ClientCapabilities []byte
	// Surface, when set, is the pinned model-facing surface, written as
	// the snapshot's "surface" member as it is (surface.Marshal's bytes,
	// indented for the snapshot's second level).
	Surface []byte
	// ManifestDigest is the manifest digest of the list's tools when the
	// caller has it (the observed record built from the same list); empty,
	// it is computed here. A reader recomputes it from the tools and
	// refuses a snapshot it does not match.
	ManifestDigest string
}

// MarshalSnapshot writes the snapshot of a tool list. Each tool object is
// copied as the exact bytes the server sent, so digests recompute from the
// snapshot and numbers, unknown members and escapes are kept.
func MarshalSnapshot(serverID string, id Identity, tl *ToolList, completeness Completeness) ([]byte, error) {
	return MarshalSnapshotWith(serverID, id, tl, completeness, SnapshotOptions{})
}

// MarshalSnapshotWith is MarshalSnapshot with the optional members.
func MarshalSnapshotWith(serverID string, id Identity, tl *ToolList, completeness Completeness, opt SnapshotOptions) ([]byte, error) {
	sw, err := NewSnapshotWriter(serverID, id, tl, completeness, opt)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(sw.Size()) // one buffer, never copied as it grows
	if _, err := sw.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// SnapshotWriter writes a snapshot (the bytes MarshalSnapshotWith returns)
// to a writer, each tool straight from the bytes it was read from, so that
// a large snapshot is never held whole in memory.
type SnapshotWriter struct {
	head  []byte // the header object without its closing "\n}"
	tools []Tool
	size  int
}

// NewSnapshotWriter prepares the snapshot of tl: everything that can fail
// fails here, not in WriteTo (but for the writer's own errors).
func NewSnapshotWriter(serverID string, id Identity, tl *ToolList, completeness Completeness, opt SnapshotOptions) (*SnapshotWriter, error) {
	var head struct {
		Schema             string          `json:"schema"`
		Server             Server          `json:"server"`
		Identity           Identity        `json:"identity"`
		ClientCapabilities json.RawMessage `json:"client_capabilities,omitempty"`
		Canonicalization   string          `json:"canonicalization"`
		ManifestDigest     *string         `json:"manifest_digest"`
		Complete           Completeness    `json:"tools_list_complete"`
	}
	head.Schema = SnapshotSchemaID
	head.Server = Server{ID: serverID}
	head.Identity = id
	if opt.ClientCapabilities != nil {
		doc, err := jcs.Parse(opt.ClientCapabilities)
		if err != nil || doc.Root().Kind() != jcs.Object {
			return nil, errors.New("snapshot: client capabilities must be a JSON object")
		}
		head.ClientCapabilities = doc.Root().Canonical()
	}
	head.Canonicalization = ProjectionID
	head.Complete = completeness
	if d := opt.ManifestDigest; d != "" {
		head.ManifestDigest = &d
	} else if d, ok := ManifestDigestOf(tl.Tools); ok {
		head.ManifestDigest = &d
	}
	h, err := json.MarshalIndent(head, "", "  ")
	if err != nil {
		return nil, err
	}
	sw := &SnapshotWriter{head: h[:len(h)-2], tools: tl.Tools} // drop "\n}"
	if opt.Surface != nil {
		sw.head = append(append(sw.head, ",\n  \"surface\": "...), opt.Surface...)
	}
	sw.size = len(sw.head) + len(snapToolsOpen) + len(snapToolsEnd)
	if n := len(tl.Tools); n > 0 {
		sw.size += len(snapFirstTool) + (n-1)*len(snapNextTool) + len(snapLastTool)
	}
	for i := range tl.Tools {
		sw.size += len(tl.Tools[i].Raw())
	}
	return sw, nil
}

// Size is the number of bytes WriteTo writes.
func (sw *SnapshotWriter) Size() int { return sw.size }

// The snapshot's punctuation around its tools.
var (
	snapToolsOpen = []byte(",\n  \"tools\": [")
	snapFirstTool = []byte("\n    ")
	snapNextTool  = []byte(",\n    ")
	snapLastTool  = []byte("\n  ")
	snapToolsEnd  = []byte("]\n}\n")
)

// WriteTo writes the snapshot to w. A bytes.Buffer is grown once to the
// snapshot's size first: a run that redacts its outputs gathers the
// snapshot so, and grown by its writes it would go through arrays of up
// to twice its size.
func (sw *SnapshotWriter) WriteTo(w io.Writer) (int64, error) {
	if b, ok := w.(*bytes.Buffer); ok {
		b.Grow(sw.size)
	}
	var n int64
	write := func(b []byte) error {
		k, err := w.Write(b)
		n += int64(k)
		return err
	}
	if err := write(sw.head); err != nil {
		return n, err
	}
	if err := write(snapToolsOpen); err != nil {
		return n, err
	}
	for i := range sw.tools {
		sep := snapNextTool
		if i == 0 {
			sep = snapFirstTool
		}
		if err := write(sep); err != nil {
			return n, err
		}
		if err := write(sw.tools[i].Raw()); err != nil {
			return n, err
		}
	}
	if len(sw.tools) > 0 {
		if err := write(snapLastTool); err != nil {
			return n, err
		}
	}
	return n, write(snapToolsEnd)
}

// ManifestDigestOf computes the manifest_digest of a tool list without
// building the whole observed record; ok is false when names repeat (an
// ambiguous list has no manifest digest).
func ManifestDigestOf(tools []Tool) (digest string, ok bool) {
	nd := make([]NameDigest, len(tools))
	seen := make(map[string]bool, len(tools))
	for i := range tools {
		if seen[tools[i].Name] {
			return "", false
		}
		seen[tools[i].Name] = true
		nd[i] = NameDigest{tools[i].Name, tools[i].ToolDigest()}
	}
	return ManifestDigest(nd), true
}

// ParseSnapshot reads a snapshot, validates it against its schema and
// checks that its manifest_digest recomputes from the tools it holds (a
// snapshot edited by hand, or paired with the wrong baseline, is refused).
func ParseSnapshot(src []byte, file string) (*Snapshot, error) {
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, &ArtifactError{file, err}
	}
	return parseSnapshot(doc, file)
}

// IsSnapshot reports whether a parsed document names the snapshot schema.
func IsSnapshot(doc *jcs.Doc) bool {
	id, ok := doc.Root().Get("schema")
	return ok && id.StrEqual(SnapshotSchemaID)
}

// Tools is what ReadTools found in a document: exactly one field is set.
type Tools struct {
	List     *ToolList // a saved tools/list in any form ParseToolList accepts
	Snapshot *Snapshot
	// Declared is a declared baseline: it holds digests, not tool
	// definitions, so the caller must find the snapshot pinned beside it.
	Declared *Declared
}

// ReadTools reads a document that should hold tool definitions, parsing
// the input once. A document with a "schema" member is read as the
// artifact it names, or refused: it is never read as a tool list. A
// snapshot gives its tools; a declared baseline is returned as such (its
// tools are in the snapshot beside it); an observed record, a policy or an
// unknown schema is refused with what to pass instead.
func ReadTools(src []byte, file string) (*Tools, error) {
	doc, err := jcs.Parse(src)
	if err != nil {
		return nil, err
	}
	root := doc.Root()
	if id, ok := root.Get("schema"); ok && root.Kind() == jcs.Object {
		switch {
		case id.StrEqual(SnapshotSchemaID):
			s, err := parseSnapshot(doc, file)
			if err != nil {
				return nil, err
			}
			return &Tools{Snapshot: s}, nil
		case id.StrEqual(DeclaredSchemaID):
			d, err := parseDeclaredDoc(doc, file)
			if err != nil {
				return nil, err
			}
			return &Tools{Declared: d}, nil
		case id.StrEqual(ObservedSchemaID):
			return nil, &ArtifactError{file, errors.New("an observed record (" + ObservedSchemaID + ") holds digests, not tool definitions: pass the saved tools/list, or the snapshot written with observe --snapshot")}
		case id.Kind() == jcs.String:
			return nil, &ArtifactError{file, fmt.Errorf("a document with schema %s is not a tool list, a snapshot (%s) or a declared baseline (%s)", safetext.Quote(safetext.Clip(id.Str(), 120)), SnapshotSchemaID, DeclaredSchemaID)}
		default:
			return nil, &ArtifactError{file, errors.New(`a document with a "schema" member that is not a string: it is not a tool list`)}
		}
	}
	tl, err := parseToolList(doc, ParseOptions{})
	if err != nil {
		return nil, err
	}
	return &Tools{List: tl}, nil
}

// CheckPair checks that a snapshot belongs beside an artifact: the same
// server id and the same manifest digest. what names the artifact in the
// message ("the baseline", "the observed record").
func (s *Snapshot) CheckPair(file, what, serverID, manifestDigest string) error {
	if s.ServerID != serverID {
		return &ArtifactError{file, fmt.Errorf("the snapshot's server id %s is not %s's %s", safetext.Quote(s.ServerID), what, safetext.Quote(serverID))}
	}
	if s.ManifestDigest != manifestDigest {
		return &ArtifactError{file, fmt.Errorf("the snapshot's manifest_digest %s is not %s's %s", orNone(s.ManifestDigest), what, orNone(manifestDigest))}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return safetext.Escape(s)
}

// snapshotInstance is the snapshot in the form its schema validates, each
// tool reduced to what the schema says of a tool (an object with a string
// name; nothing of the rest): the tools are the server's bytes, validated
// as a tool list by their own checks, and a 17 MB snapshot need not become
// a tree of Go maps to have its name members checked.
// TestSnapshotSchemaTools keeps the schema to that.
func snapshotInstance(root jcs.Value, tools []toolPart) any {
	m := make(map[string]any, root.Len())
	for i := range root.Len() {
		k, v := root.Member(i)
		if k.Str() != "tools" || v.Kind() != jcs.Array {
			m[k.Str()] = schemas.Instance(v)
			continue
		}
		inst := make([]any, len(tools))
		for j := range tools {
			inst[j] = tools[j].instance
		}
		m["tools"] = inst
	}
	return m
}

// toolInstance is one tool of snapshotInstance.
func toolInstance(t jcs.Value) any {
	if t.Kind() != jcs.Object {
		return schemas.Instance(t)
	}
	tm := map[string]any{}
	if n, ok := t.Get("name"); ok {
		tm["name"] = schemas.Instance(n)
	}
	return tm
}

func parseSnapshot(doc *jcs.Doc, file string) (*Snapshot, error) {
	root := doc.Root()
	var tools []toolPart
	if t, ok := root.Get("tools"); ok && t.Kind() == jcs.Array {
		tools = make([]toolPart, t.Len())
		par.Range(t.Len(), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				tools[i] = readToolPart(t.Index(i), i)
			}
		})
	}
	return snapshotOf(root, tools, file)
}

// toolPart is what a snapshot's tool entry gives: the instance its schema
// validates, and the tool read from it (or why it cannot be read).
type toolPart struct {
	instance any
	tool     Tool
	err      error
}

func readToolPart(v jcs.Value, i int) toolPart {
	p := toolPart{instance: toolInstance(v)}
	p.tool, p.err = ToolFromValue(v, "/tools/"+strconv.Itoa(i))
	return p
}

// snapshotOf reads a snapshot from root, whose "tools" member's entries
// are tools.
func snapshotOf(root jcs.Value, tools []toolPart, file string) (*Snapshot, error) {
	fail := func(err error) (*Snapshot, error) { return nil, &ArtifactError{file, err} }
	if root.Kind() != jcs.Object {
		return fail(fmt.Errorf("expected a JSON object, found %s", root.Kind()))
	}
	if id, ok := root.Get("schema"); !ok || !id.StrEqual(SnapshotSchemaID) {
		got := "none"
		if ok {
			got = safetext.Quote(id.Str())
		}
		return fail(fmt.Errorf("unknown or unexpected schema id %s: expected %q", got, SnapshotSchemaID))
	}
	if err := schemas.Validate(schemas.Snapshot, snapshotInstance(root, tools)); err != nil {
		return fail(err)
	}
	s := &Snapshot{}
	srv, _ := root.Get("server")
	sid, _ := srv.Get("id")
	s.ServerID = sid.Str()
	if idv, ok := root.Get("identity"); ok {
		for _, f := range []struct {
			key string
			dst *string
		}{{"endpoint", &s.Identity.Endpoint}, {"resolved_endpoint", &s.Identity.ResolvedEndpoint}, {"publisher_key", &s.Identity.PublisherKey}, {"server_name", &s.Identity.ServerName}, {"server_version", &s.Identity.ServerVersion}} {
			if v, ok := idv.Get(f.key); ok {
				*f.dst = v.Str()
			}
		}
		if env, ok := idv.Get("env"); ok {
			es := []EnvEntry{}
			for i := range env.Len() {
				n, _ := env.Index(i).Get("name")
				d, _ := env.Index(i).Get("digest")
				es = append(es, EnvEntry{Name: n.Str(), Digest: d.Str()})
			}
			s.Identity.Env = &es
		}
	}
	if cc, ok := root.Get("client_capabilities"); ok {
		s.ClientCapabilities = cc.Canonical()
	}
	if sv, ok := root.Get("surface"); ok {
		s.Surface = bytes.Clone(sv.Raw())
	}
	c, _ := root.Get("tools_list_complete")
	s.Completeness = Completeness(c.Str())
	s.Tools = make([]Tool, len(tools))
	for i := range tools {
		if tools[i].err != nil {
			return fail(tools[i].err) // the first, in order
		}
		s.Tools[i] = tools[i].tool
	}
	md, _ := root.Get("manifest_digest")
	if err := s.checkDigest(md.Str(), md.Kind(), file); err != nil {
		return nil, err
	}
	return s, nil
}

// checkDigest checks the snapshot's manifest_digest member (claimed, or
// null) against its tools, and sets ManifestDigest.
func (s *Snapshot) checkDigest(claimed string, kind jcs.Kind, file string) error {
	fail := func(err error) error { return &ArtifactError{file, err} }
	got, unique := ManifestDigestOf(s.Tools)
	switch {
	case kind == jcs.Null && unique:
		return fail(errors.New("manifest_digest is null but the tool names are unique"))
	case kind == jcs.String && (!unique || claimed != got):
		return fail(fmt.Errorf("manifest_digest %s does not recompute from the snapshot's tools: the snapshot was edited or damaged", claimed))
	}
	s.ManifestDigest = ""
	if unique {
		s.ManifestDigest = got
	}
	return nil
}

// ToolList returns the snapshot's tools as a ToolList.
func (s *Snapshot) ToolList() *ToolList {
	return &ToolList{Form: FormSnapshot, Tools: s.Tools, Completeness: s.Completeness, Reason: "from a snapshot"}
}
