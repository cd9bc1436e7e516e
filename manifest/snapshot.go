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
	"sync"

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

	// unsettled: read with ReadOptions.DeferDigests, its digests not yet
	// computed nor its manifest_digest checked (Settle); claimed is that
	// member as the file has it, of kind claimedKind (a string, or null).
	unsettled   bool
	claimed     string
	claimedKind jcs.Kind
	file        string
	// framed: read by ReadSnapshotFramed (its tools nameless until
	// Settle).
	framed *framed
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
		sw.size += tl.Tools[i].RawLen()
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
// snapshot so, and grown by its writes a 17 MB snapshot went through
// arrays of 32 MB.
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
	// tool writes the i-th tool's bytes b after its separator.
	tool := func(i int, b []byte) error {
		sep := snapNextTool
		if i == 0 {
			sep = snapFirstTool
		}
		if err := write(sep); err != nil {
			return err
		}
		return write(b)
	}
	var buf []byte
	for i := 0; i < len(sw.tools); {
		t := &sw.tools[i]
		if !t.IsHollow() {
			if err := tool(i, t.Raw()); err != nil {
				return n, err
			}
			i++
			continue
		}
		// Hollow tools' bytes are read again, checked, into one buffer
		// (a listing held on a spool: pin), those that follow each other
		// on their file in one read.
		b, k, err := appendRun(sw.tools[i:], buf[:0], 1<<20)
		if err != nil {
			return n, err
		}
		buf = b
		for range k {
			m := sw.tools[i].ref.n
			if err := tool(i, b[:m]); err != nil {
				return n, err
			}
			b = b[m:]
			i++
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
	return readTools(src, file, ParseOptions{})
}

// readTools is ReadTools reading a tool list with opt.
func readTools(src []byte, file string, opt ParseOptions) (*Tools, error) {
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
	tl, err := parseToolList(doc, opt)
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
func snapshotInstance(root jcs.Value, streamed *snapTools) any {
	m := make(map[string]any, root.Len())
	for i := range root.Len() {
		k, v := root.Member(i)
		if k.Str() != "tools" || v.Kind() != jcs.Array {
			m[k.Str()] = schemas.Instance(v)
			continue
		}
		if streamed != nil {
			m["tools"] = streamed.instances
			continue
		}
		tools := make([]any, v.Len())
		for j := range tools {
			tools[j] = toolInstance(v.Index(j))
		}
		m["tools"] = tools
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

// snapTools are a snapshot's tools read one at a time (jcs.ParseEach), lean
// (or hollow, on at), and what its schema validates of them.
type snapTools struct {
	at        io.ReaderAt
	deferred  bool // ReadOptions.DeferDigests
	tools     []Tool
	instances []any
	err       error // the first tool that could not be read
}

func (st *snapTools) add(i int, v jcs.Value) {
	st.instances = append(st.instances, toolInstance(v))
	if st.err != nil {
		return
	}
	t, err := toolFromValue(v, "/tools/"+strconv.Itoa(i))
	if err != nil {
		st.err = err
		return
	}
	if st.deferred {
		// Lean without digests or facts, until Settle.
		t.raw, t.lean = v.Raw(), &leanFacts{unsettled: true}
		t.Value, t.Proj = jcs.Value{}, Projection{}
	} else {
		t.setDigest()
		t.Lean()
	}
	if st.at != nil {
		t.hollow(st.at, int64(v.Offset()))
	}
	st.tools = append(st.tools, t)
}

// ReadOptions choose how ReadToolsWith holds the tools it reads.
type ReadOptions struct {
	// Lean holds the tools lean (Tool.Lean), and reads a snapshot whose
	// head names its schema (PeekHead) one tool at a time
	// (jcs.ParseEach), so that its parse tree is never held whole.
	Lean bool
	// Source, with Lean, is where src can be read again from its first
	// byte (the regular file it was read from): such a snapshot's tools are
	// then hollow (hollow.go), and src is not kept. nil: they keep their
	// bytes, and src with them. With Source, src may be nil: Size bytes of
	// Source are the document, and a snapshot is read framed when it can
	// be (ReadSnapshotFramed, with DeferDigests), else read whole from it.
	Source io.ReaderAt
	Size   int64
	// DeferDigests, with Lean, reads such a snapshot's tools without
	// computing their digests (the tool digest, the field digests) or the
	// facts of their parse, and without checking its manifest_digest: the
	// snapshot is read unsettled, and Settle does that work later, taking
	// a tool's digests from a tool the caller has with the same bytes (the
	// served tool of its name, whose digests the caller computed anyway).
	// Until Settle returns nil, the snapshot's ManifestDigest is the one
	// the file claims, and reading a tool's digests panics.
	DeferDigests bool
	// LeanList, without Lean, holds the tools of a tool list lean, each
	// made lean as it is digested (ParseOptions.Lean), and reads a
	// snapshot or a baseline as without it: for a caller that makes a
	// list lean once it is read (pin and observe --input), without
	// Lean's reading of a snapshot one tool at a time, on one CPU.
	LeanList bool
}

// readAgainErr is the error of a short read of bytes read before (a
// Source, a hollow tool's file): io.EOF, or no error, means the file is
// shorter than it was.
func readAgainErr(err error) error {
	if err == nil || err == io.EOF {
		return ErrBytesChanged
	}
	return err
}

// ReadToolsWith is ReadTools holding the tools as opt says: what it
// accepts and refuses, and the tools' names, pointers, digests and order,
// are ReadTools' (TestReadToolsLeanAgrees).
func ReadToolsWith(src []byte, file string, opt ReadOptions) (*Tools, error) {
	if src == nil && opt.Source != nil {
		if opt.Lean && opt.DeferDigests && PeekHeadAt(opt.Source, opt.Size).Schema == SnapshotSchemaID {
			s, ok, err := ReadSnapshotFramed(opt.Source, opt.Size, file)
			if err != nil {
				return nil, err
			}
			if ok {
				return &Tools{Snapshot: s}, nil
			}
		}
		src = make([]byte, opt.Size)
		if n, err := opt.Source.ReadAt(src, 0); int64(n) < opt.Size {
			return nil, readAgainErr(err)
		}
	}
	if !opt.Lean {
		return readTools(src, file, ParseOptions{Lean: opt.LeanList})
	}
	head := PeekHead(src).Schema
	if head == SnapshotSchemaID {
		st := &snapTools{at: opt.Source, deferred: opt.DeferDigests, instances: []any{}}
		doc, err := jcs.ParseEach(src, "tools", st.add)
		if err != nil {
			return nil, err // ReadTools' error: the same parse
		}
		if root := doc.Root(); root.Kind() == jcs.Object && IsSnapshot(doc) {
			s, err := parseSnapshotTools(doc, file, st)
			if err != nil {
				return nil, err
			}
			return &Tools{Snapshot: s}, nil
		}
		// Not what the head said (a head PeekHead misread): read as
		// ReadTools reads it.
	}
	if head == DeclaredSchemaID {
		if d, ok := readDeclaredStreamed(src, file); ok {
			return &Tools{Declared: d}, nil
		}
	}
	t, err := readTools(src, file, ParseOptions{Lean: true})
	if err != nil {
		return nil, err
	}
	if t.Snapshot != nil {
		leanTools(t.Snapshot.Tools)
	}
	return t, nil
}

func parseSnapshot(doc *jcs.Doc, file string) (*Snapshot, error) {
	return parseSnapshotTools(doc, file, nil)
}

// parseSnapshotTools is parseSnapshot of a document whose tools streamed
// read (jcs.ParseEach; its tools array reads as empty), or nil: the doc's.
func parseSnapshotTools(doc *jcs.Doc, file string, streamed *snapTools) (*Snapshot, error) {
	fail := func(err error) (*Snapshot, error) { return nil, &ArtifactError{file, err} }
	root := doc.Root()
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
	if err := schemas.Validate(schemas.Snapshot, snapshotInstance(root, streamed)); err != nil {
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
	if streamed != nil {
		if streamed.err != nil {
			return fail(streamed.err)
		}
		s.Tools = streamed.tools
		if streamed.deferred {
			md, _ := root.Get("manifest_digest")
			s.unsettled, s.file = true, file
			s.claimed, s.claimedKind = md.Str(), md.Kind()
			s.ManifestDigest = s.claimed
			return s, nil
		}
	} else {
		tools, _ := root.Get("tools")
		for i := range tools.Len() {
			t, err := toolFromValue(tools.Index(i), fmt.Sprintf("/tools/%d", i))
			if err != nil {
				return fail(err)
			}
			s.Tools = append(s.Tools, t)
		}
		digestTools(s.Tools)
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

// Settle finishes reading a snapshot read with ReadOptions.DeferDigests
// (or ReadSnapshotFramed): each tool's digests and lean facts are taken
// from the tool of with that holds the same bytes (a digest is a function
// of the bytes: the tool of its name, or for a framed reading the tool of
// its bytes' SHA-256, which gives its name too), and computed from the
// tool's own bytes otherwise (read again, checked, when it is hollow);
// then the manifest_digest is checked as ParseSnapshot checks it. with may
// be nil. On an error the snapshot must not be used. A settled snapshot
// settles at once.
func (s *Snapshot) Settle(with []Tool) error {
	if !s.unsettled {
		return nil
	}
	if s.framed != nil {
		bySum := make(map[[32]byte]*Tool, len(with))
		for i := range with {
			t := &with[i]
			if t.lean != nil && t.lean.unsettled {
				continue
			}
			if k := t.RawSum(); bySum[k] == nil {
				bySum[k] = t
			}
		}
		if err := s.settleFramed(func(sum [32]byte, _ int) *Tool { return bySum[sum] }); err != nil {
			return err
		}
		if err := s.checkDigest(s.claimed, s.claimedKind, s.file); err != nil {
			return s.wholeError(err)
		}
		s.unsettled = false
		return nil
	}
	byName := make(map[string]*Tool, len(with))
	for i := range with {
		if byName[with[i].Name] == nil {
			byName[with[i].Name] = &with[i]
		}
	}
	like := func(name string) *Tool { return byName[name] }
	var mu sync.Mutex
	var first error
	firstAt := len(s.Tools)
	par.Range(len(s.Tools), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if err := s.Tools[i].settle(like); err != nil {
				mu.Lock()
				if i < firstAt {
					first, firstAt = err, i
				}
				mu.Unlock()
				return
			}
		}
	})
	if first != nil {
		return &ArtifactError{s.file, first}
	}
	if err := s.checkDigest(s.claimed, s.claimedKind, s.file); err != nil {
		return err
	}
	s.unsettled = false
	return nil
}

// settle gives an unsettled tool its digests and lean facts (Settle):
// from the tool of its name like has when that tool holds its bytes, else
// from its own bytes.
func (t *Tool) settle(like func(string) *Tool) error {
	if t.lean == nil || !t.lean.unsettled {
		return nil
	}
	var l *Tool
	if like != nil {
		l = like(t.Name)
	}
	if t.settleFrom(l) {
		return nil
	}
	return t.settleOwn()
}

// settleFrom settles an unsettled tool from l, a settled tool that holds
// exactly its bytes (by length and SHA-256), and reports whether it did:
// its name, digests and lean facts are l's, since they are functions of
// the bytes. Anything else (a settled tool, l nil, unsettled or of other
// bytes) is left as it is.
func (t *Tool) settleFrom(l *Tool) bool {
	if t.lean == nil || !t.lean.unsettled || l == nil || l == t || (l.lean != nil && l.lean.unsettled) || !(l.IsLean() || l.Value.Valid()) || !t.SameBytes(l) {
		return false
	}
	f := factsOf(l)
	f.sum, f.hasSum = t.RawSum(), true
	t.Name, t.digest = l.Name, l.ToolDigest()
	t.fieldSums, t.hasFields = l.digestSums()
	t.lean = f
	return true
}

// settleOwn settles an unsettled tool from its own bytes (read again when
// it is hollow, checked).
func (t *Tool) settleOwn() error {
	nt, err := t.reparse()
	if err != nil {
		return err
	}
	nt.setDigest()
	f := factsOf(&nt)
	f.sum, f.hasSum = t.RawSum(), true
	t.Name, t.digest, t.fieldSums, t.hasFields, t.lean = nt.Name, nt.digest, nt.fieldSums, true, f
	return nil
}

// ToolList returns the snapshot's tools as a ToolList.
func (s *Snapshot) ToolList() *ToolList {
	return &ToolList{Form: "snapshot", Tools: s.Tools, Completeness: s.Completeness, Reason: "from a snapshot"}
}
