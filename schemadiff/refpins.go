package schemadiff

import (
	"errors"
	"net/url"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// RefPins is a trust record of external documents (a lock's refs): the
// structural-escalation note refuses a $ref that leaves the manifest's
// document unless the document it names is pinned by hash in the same
// trust record. Given one (Options.Refs), every external-reference record
// says what the record makes of its document:
//
//   - pinned, and verified when Verified is set: external_ref_pinned
//     (low; judged like any other change);
//   - pinned, verified, and the document now has another digest:
//     external_ref_document_changed (high), the URL and both digests in
//     the detail;
//   - pinned, Verified set, and the document not in it (it could not be
//     fetched): external_ref_unverified (medium);
//   - not pinned, or not pinnable (a relative reference, whose base is
//     where the runtime loaded the schema; a scheme other than http and
//     https): external_ref_introduced or external_ref_present as without a
//     record, with why in the detail.
//
// Without one (a nil *RefPins: diff, drift, a snapshot) the records are
// what they always were. Nothing is fetched here; Verified is what the
// caller fetched (package reffetch).
type RefPins struct {
	// Pinned maps a document URL (RefDocument's form) to the digest
	// pinned for it ("sha256:" and 64 hex digits).
	Pinned map[string]string
	// Verified is nil when verification was not asked; else it maps each
	// document URL that was fetched to the digest of what was fetched
	// now. A pinned URL absent from it (or mapped to "") could not be
	// fetched.
	Verified map[string]string
}

// refNotPinned ends the detail of a reference a trust record does not pin
// (Sentence says so).
const refNotPinned = " is not pinned in the lock (mcpdrift lock pin-ref)"

// RefDocument returns the URL of the document an external reference (as
// RefIdentity gives it, or as written) names: the reference without its
// fragment ("#/definitions/x" is inside the document), with the scheme and
// host lowercased, the scheme's default port dropped and an empty path
// written "/". Only an absolute http or https URL with a host and no user
// info names a document that can be pinned; anything else is an error
// saying why.
func RefDocument(ref string) (string, error) {
	u, err := url.Parse(ref)
	switch {
	case err != nil:
		return "", errors.New("it is not a URL")
	case u.Scheme == "":
		return "", errors.New("it is relative: its base is wherever the runtime loaded the schema from, so the document it names is not known here")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("only http and https documents can be pinned")
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return "", errors.New("it has no host")
	case u.User != nil:
		return "", errors.New("it carries user info")
	case strings.EqualFold(u.Hostname(), schSyntheticBase.Hostname()):
		return "", errors.New("it is relative to a relative $id: the document it names is not known here")
	}
	u.Fragment, u.RawFragment = "", ""
	u.Host = strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
		u.Host = strings.TrimSuffix(u.Host, ":"+p)
	}
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	// A URL that ends in "?" with nothing after it names the same
	// resource as without.
	u.ForceQuery = false
	return u.String(), nil
}

// ToolRef is one external reference of a tool.
type ToolRef struct {
	// Pointer is where the $ref is in the tool object (RFC 6901).
	Pointer string `json:"pointer"`
	// Ref is the reference as written.
	Ref string `json:"ref"`
	// Document is the URL of the document it names (RefDocument), "" when
	// it cannot be pinned (Why says why).
	Document string `json:"document,omitempty"`
	Why      string `json:"why,omitempty"`
}

// ToolRefs returns the external references of a tool's input and output
// schemas, in document order (see ExternalRefs), each resolved against the
// $ids around it.
func ToolRefs(t *manifest.Tool) []ToolRef {
	if !t.MayReferOut() {
		return nil
	}
	var out []ToolRef
	v := t.Value()
	p := manifest.Project(v)
	for _, s := range []struct {
		base   string
		schema jcs.Value
	}{
		{schemaPointer(v, "inputSchema", "input_schema"), p.InputSchema},
		{schemaPointer(v, "outputSchema", "output_schema"), p.OutputSchema},
	} {
		if !s.schema.Valid() || !manifest.SchemaMayReferOut(s.schema) {
			continue
		}
		for _, r := range newSchSide(s.schema).externalRefs() {
			tr := ToolRef{Pointer: s.base + r.ptr, Ref: r.val}
			if doc, err := RefDocument(r.id); err == nil {
				tr.Document = doc
			} else {
				tr.Why = err.Error()
			}
			out = append(out, tr)
		}
	}
	return out
}

// RefChanges judges every external reference of a tool against pins, as
// records of the tool's present references (external_ref_present, or the
// kind pins make of it): what a decision reads of a tool whose digest did
// not change. nil pins: the external_ref_present records.
func RefChanges(t *manifest.Tool, pins *RefPins) []Change {
	if !t.MayReferOut() {
		return nil
	}
	v := t.Value()
	p := manifest.Project(v)
	out := presentRefs(t.Name, schemaPointer(v, "inputSchema", "input_schema"), p.InputSchema, pins)
	return append(out, presentRefs(t.Name, schemaPointer(v, "outputSchema", "output_schema"), p.OutputSchema, pins)...)
}

// IntroducedRefChanges is RefChanges for a tool new to the list: its
// external references as external_ref_introduced (or the kind pins make
// of them), the records DiffTools gives an added tool.
func IntroducedRefChanges(t *manifest.Tool, pins *RefPins) []Change {
	return externalRefs(t, pins)
}

// judge rewrites an external-reference record c (external_ref_introduced
// or external_ref_present) of reference r by what the trust record makes
// of its document.
func (p *RefPins) judge(c *Change, r schExtRef) {
	if p == nil {
		return
	}
	doc, err := RefDocument(r.id)
	if err != nil {
		c.Detail += "; it cannot be pinned: " + err.Error()
		return
	}
	pin, ok := p.Pinned[doc]
	if !ok {
		c.Detail += "; the document " + schQuote(doc) + refNotPinned
		return
	}
	if p.Verified != nil {
		now := p.Verified[doc]
		switch {
		case now == "":
			c.Kind, c.Direction, c.Severity = ExternalRefUnverified, Neutral, "medium"
			c.Detail = "external reference " + schQuote(r.val) + ": the document " + schQuote(doc) + " is pinned (" + pin + ") but could not be fetched to verify it"
			return
		case now != pin:
			c.Kind, c.Direction, c.Severity = ExternalRefDocumentChanged, Widening, "high"
			c.Detail = "external reference " + schQuote(r.val) + ": the document " + schQuote(doc) + " changed: pinned " + pin + ", now " + now
			return
		}
	}
	c.Kind, c.Severity = ExternalRefPinned, "low"
	c.Detail = "external reference " + schQuote(r.val) + ": the document " + schQuote(doc) + " is pinned by hash (" + pin + ")"
	if p.Verified != nil {
		c.Detail += ", verified"
	}
}
