package manifest

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// Head is what PeekHead learns of a document from the members before its
// tools: its "schema" and a snapshot's client capabilities.
type Head struct {
	// Schema is the document's "schema" member when it is a string seen
	// before the tools ("" for a tool list, or when it was not seen).
	Schema string
	// ClientCapabilities is a snapshot's "client_capabilities" member seen
	// before the tools, in canonical form (RFC 8785), as
	// Snapshot.ClientCapabilities holds it; nil when it was not seen or the
	// document is not a snapshot.
	ClientCapabilities []byte
}

// PeekLimit bounds the bytes PeekHead reads before it stops: a head is a
// few hundred bytes; a document whose tools start later is not peeked. A
// prefix of a document this long peeks as the whole of it.
const PeekLimit = 1 << 20

// PeekHead reads the top-level members of src that come before its
// "tools" (or "result") member, without reading the tools: what a run needs
// to know before it starts listing a server (the client capabilities a
// snapshot was observed with go into initialize), while the whole document
// is read and checked beside the listing.
//
// It is a prediction, never a verdict: it does not validate src (ReadTools
// does), it stops at the tools, and a member written after them, a
// repeated member or a malformed document can make it differ from what
// ReadTools reads. A caller compares the two once ReadTools has read the
// document and acts on ReadTools' reading. For a snapshot written by
// MarshalSnapshot or SnapshotWriter, and for a declared baseline, it
// agrees with ReadTools (FuzzPeekHead).
func PeekHead(src []byte) Head {
	return peekHead(bytes.NewReader(src))
}

// PeekHeadFrom is PeekHead of what r holds, reading of it no more than
// the head needs (and at most PeekLimit bytes).
func PeekHeadFrom(r io.Reader) Head { return peekHead(r) }

func peekHead(r io.Reader) (h Head) {
	dec := json.NewDecoder(io.LimitReader(r, PeekLimit))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h // a tool array, pages, or not JSON: no head
	}
	seen := map[string]bool{}
	defer func() {
		if h.Schema != SnapshotSchemaID {
			h.ClientCapabilities = nil // only a snapshot records them
		}
	}()
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return h
		}
		key, ok := t.(string)
		if !ok || key == "tools" || key == "result" {
			return h
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return h
		}
		if seen[key] {
			continue // a repeated member: ReadTools refuses the document
		}
		seen[key] = true
		switch key {
		case "schema":
			var s string
			if json.Unmarshal(raw, &s) == nil {
				h.Schema = s
			}
		case "client_capabilities":
			if c, err := jcs.Canonicalize(raw); err == nil {
				h.ClientCapabilities = c
			}
		}
	}
	return h
}
