// Package manifest turns what an MCP server returned for tools/list into the
// canonical digests and evidence artifacts of the Assay MCP manifest-drift
// specification (assay.mcp_manifest_projection.v0, assay.mcp_tool_field.v0,
// assay.mcp_manifest_observed.v0, assay.declared_mcp_manifest.v0).
//
// Digests are always computed from the bytes the server sent: the input is
// parsed once by the strict jcs parser, and each projection is assembled by
// appending the canonical form of the original sub-values. No Go struct
// round trip ever touches a hashed value (a round trip would change numbers,
// drop unknown keys and can add fields).
package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// Identifiers fixed by the specification.
const (
	ProjectionID      = "assay.mcp_manifest_projection.v0"
	FieldProjectionID = "assay.mcp_tool_field.v0"
	ObservedSchemaID  = "assay.mcp_manifest_observed.v0"
	DeclaredSchemaID  = "assay.declared_mcp_manifest.v0"
)

// FieldNames are the four mutable per-tool fields, in the order artifacts
// list them.
var FieldNames = [4]string{"description", "input_schema", "output_schema", "annotations"}

// NonClaims is the fixed non_claims list of the observed record.
var NonClaims = []string{
	"does not judge whether a manifest change is malicious",
	"does not infer tools outside the observed tools/list",
	"does not detect behavior drift under identical metadata",
	"privileged is classifier-derived, not the server's own annotations",
}

// Projection holds the five projected values of one tool. A zero jcs.Value
// (Valid() == false) stands for an absent field and projects to null.
type Projection struct {
	Name         jcs.Value
	Description  jcs.Value
	InputSchema  jcs.Value
	OutputSchema jcs.Value
	Annotations  jcs.Value
}

// Field returns the value of one of the four mutable fields.
func (p Projection) Field(name string) jcs.Value {
	switch name {
	case "description":
		return p.Description
	case "input_schema":
		return p.InputSchema
	case "output_schema":
		return p.OutputSchema
	case "annotations":
		return p.Annotations
	}
	return jcs.Value{}
}

func appendOrNull(dst []byte, v jcs.Value) []byte {
	if !v.Valid() {
		return append(dst, "null"...)
	}
	return v.AppendCanonical(dst)
}

// AppendToolPreimage appends the JCS bytes of the per-tool projection
// {name, description, input_schema, output_schema, annotations}. The member
// names are already in RFC 8785 order.
func (p Projection) AppendToolPreimage(dst []byte) []byte {
	dst = append(dst, `{"annotations":`...)
	dst = appendOrNull(dst, p.Annotations)
	dst = append(dst, `,"description":`...)
	dst = appendOrNull(dst, p.Description)
	dst = append(dst, `,"input_schema":`...)
	dst = appendOrNull(dst, p.InputSchema)
	dst = append(dst, `,"name":`...)
	dst = appendOrNull(dst, p.Name)
	dst = append(dst, `,"output_schema":`...)
	dst = appendOrNull(dst, p.OutputSchema)
	return append(dst, '}')
}

// AppendFieldPreimage appends the JCS bytes of the domain-separated field
// projection {"projection": "assay.mcp_tool_field.v0", "field": F, "value": V}.
func AppendFieldPreimage(dst []byte, field string, v jcs.Value) []byte {
	dst = append(dst, `{"field":`...)
	dst = jcs.AppendString(dst, field)
	dst = append(dst, `,"projection":"`+FieldProjectionID+`","value":`...)
	dst = appendOrNull(dst, v)
	return append(dst, '}')
}

// Digest formats sha256(b) as "sha256:<64 lowercase hex>".
func Digest(b []byte) string {
	return formatDigest(sha256.Sum256(b))
}

// formatDigest formats a SHA-256 sum as "sha256:<64 lowercase hex>".
func formatDigest(sum [sha256.Size]byte) string {
	var out [7 + 64]byte
	copy(out[:], "sha256:")
	hex.Encode(out[7:], sum[:])
	return string(out[:])
}

// Digests computes the tool digest and the four field digests of p, reusing
// buf as scratch space. It returns the (possibly grown) buffer.
func (p Projection) Digests(buf []byte) (tool string, fields FieldDigests, out []byte) {
	var s digestSums
	s, buf, _ = p.sums(buf, nil)
	return s.tool(), s.fields(), buf
}

// digestSums are the SHA-256 sums of a tool's projection (the tool digest)
// and of its four field projections, in FieldNames order.
type digestSums struct {
	toolSum  [sha256.Size]byte
	fieldSum [4][sha256.Size]byte
}

func (s *digestSums) tool() string { return formatDigest(s.toolSum) }

func (s *digestSums) fields() FieldDigests {
	var f FieldDigests
	for i := range FieldNames {
		f.set(i, formatDigest(s.fieldSum[i]))
	}
	return f
}

// fieldPrefixes are the bytes of each field projection before its value:
// {"field":F,"projection":"assay.mcp_tool_field.v0","value": (as
// AppendFieldPreimage writes them).
var fieldPrefixes = func() (out [4][]byte) {
	for i, f := range FieldNames {
		b := AppendFieldPreimage(nil, f, jcs.Value{})
		out[i] = b[:len(b)-len("null}")]
	}
	return out
}()

// sums computes the tool digest and the four field digests of p with one
// canonicalization of each value: the canonical bytes of a field inside
// the tool projection are the bytes its field projection holds, so the
// field preimages are assembled from the tool preimage rather than
// canonicalized again. buf and fb are scratch space, returned grown.
func (p Projection) sums(buf, fb []byte) (s digestSums, _, _ []byte) {
	var at [4][2]int
	buf, at = p.toolPreimage(buf)
	s.toolSum = sha256.Sum256(buf)
	for i := range FieldNames {
		fb = append(append(append(fb[:0], fieldPrefixes[i]...), buf[at[i][0]:at[i][1]]...), '}')
		s.fieldSum[i] = sha256.Sum256(fb)
	}
	return s, buf, fb
}

// toolPreimage is the tool preimage of p, as AppendToolPreimage writes it
// (into buf, returned grown), with where each field's canonical bytes lie
// in it (FieldNames order: description, input_schema, output_schema,
// annotations).
func (p Projection) toolPreimage(buf []byte) (_ []byte, at [4][2]int) {
	buf = append(buf[:0], `{"annotations":`...)
	at[3][0] = len(buf)
	buf = appendOrNull(buf, p.Annotations)
	at[3][1] = len(buf)
	buf = append(buf, `,"description":`...)
	at[0][0] = len(buf)
	buf = appendOrNull(buf, p.Description)
	at[0][1] = len(buf)
	buf = append(buf, `,"input_schema":`...)
	at[1][0] = len(buf)
	buf = appendOrNull(buf, p.InputSchema)
	at[1][1] = len(buf)
	buf = append(buf, `,"name":`...)
	buf = appendOrNull(buf, p.Name)
	buf = append(buf, `,"output_schema":`...)
	at[2][0] = len(buf)
	buf = appendOrNull(buf, p.OutputSchema)
	at[2][1] = len(buf)
	return append(buf, '}'), at
}

// FieldDigests computes the four field digests of p, reusing buf as
// scratch space. It returns the (possibly grown) buffer.
func (p Projection) FieldDigests(buf []byte) (fields FieldDigests, out []byte) {
	for i, f := range FieldNames {
		buf = AppendFieldPreimage(buf[:0], f, p.Field(f))
		fields.set(i, Digest(buf))
	}
	return fields, buf
}

// NameDigest is one entry of the manifest projection.
type NameDigest struct {
	Name       string
	ToolDigest string
}

// ManifestDigest computes manifest_digest over the manifest projection
// {"projection": ProjectionID, "tools": [{"name","tool_digest"}...]} with
// entries sorted by name, then tool_digest. The sort compares the names'
// UTF-8 bytes (code point order), as the reference implementation does.
func ManifestDigest(entries []NameDigest) string {
	sorted := sortedEntries(entries)
	// Sized for the entries as written when nothing in them needs an
	// escape, so that a list of long names is not copied as it grows.
	size := 64
	for _, e := range sorted {
		size += len(`{"name":"","tool_digest":""},`) + len(e.Name) + len(e.ToolDigest)
	}
	var buf bytes.Buffer
	buf.Grow(size)
	b := buf.AvailableBuffer()
	b = append(b, `{"projection":"`+ProjectionID+`","tools":[`...)
	for i, e := range sorted {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = jcs.AppendString(b, e.Name)
		b = append(b, `,"tool_digest":`...)
		b = jcs.AppendString(b, e.ToolDigest)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	return Digest(b)
}

// compareEntries orders manifest entries by name, then tool digest (the
// UTF-8 bytes: code point order): a total order, so entries that compare
// equal are equal.
func compareEntries(a, b NameDigest) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.ToolDigest, b.ToolDigest)
}

// sortedEntries is a sorted copy of entries: a large list sorted in two
// halves at once and merged (the order is total, so the result is the one
// sort's).
func sortedEntries(entries []NameDigest) []NameDigest {
	n := len(entries)
	if n < parallelSort || runtime.GOMAXPROCS(0) < 2 {
		sorted := slices.Clone(entries)
		slices.SortFunc(sorted, compareEntries)
		return sorted
	}
	a, b := slices.Clone(entries[:n/2]), slices.Clone(entries[n/2:])
	var wg sync.WaitGroup
	wg.Go(func() { slices.SortFunc(a, compareEntries) })
	slices.SortFunc(b, compareEntries)
	wg.Wait()
	out := make([]NameDigest, 0, n)
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if compareEntries(b[j], a[i]) < 0 {
			out = append(out, b[j])
			j++
		} else {
			out = append(out, a[i])
			i++
		}
	}
	out = append(append(out, a[i:]...), b[j:]...)
	return out
}

// parallelSort is the fewest entries sortedEntries sorts on two CPUs.
const parallelSort = 16384

// FieldDigests holds the four per-field digests. A field that is "" is
// absent (an incomplete set is never read as "unchanged").
type FieldDigests struct {
	Description  string `json:"description,omitempty"`
	InputSchema  string `json:"input_schema,omitempty"`
	OutputSchema string `json:"output_schema,omitempty"`
	Annotations  string `json:"annotations,omitempty"`
}

func (f *FieldDigests) set(i int, d string) {
	switch i {
	case 0:
		f.Description = d
	case 1:
		f.InputSchema = d
	case 2:
		f.OutputSchema = d
	case 3:
		f.Annotations = d
	}
}

// Get returns the digest of a field by name.
func (f *FieldDigests) Get(name string) string {
	switch name {
	case "description":
		return f.Description
	case "input_schema":
		return f.InputSchema
	case "output_schema":
		return f.OutputSchema
	case "annotations":
		return f.Annotations
	}
	return ""
}

// Complete reports whether all four field digests are present.
func (f *FieldDigests) Complete() bool {
	return f != nil && f.Description != "" && f.InputSchema != "" && f.OutputSchema != "" && f.Annotations != ""
}

// ValidDigest reports whether s is "sha256:" followed by 64 lowercase hex
// digits.
func ValidDigest(s string) bool {
	if len(s) != 71 || !strings.HasPrefix(s, "sha256:") {
		return false
	}
	for i := 7; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
