package manifest

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The artifacts of a large server hold one entry per tool (a baseline of
// 10,000 tools is about 7 MB). encoding/json's indented encoding of them
// goes through reflection, a compact buffer and an indented copy of it;
// appendDeclared and appendObserved write the same bytes in one presized
// buffer. TestMarshalArtifactFast holds them to encoding/json's output.

// entrySize is what one entry with four field digests takes besides its
// name, classification and action class and the indentation of its 12
// lines (a baseline's entry, indented by 2, is 645 bytes with a null
// action class and a name and classification of no bytes).
const entrySize = 628

// entriesSize is about what es take written (more when a string needs
// escapes), so that the buffer is allocated once: a baseline of 100,000
// tools is 68 MB, and growing by doubling to it allocates twice that.
func entriesSize(es []ToolEntry, in string) int {
	n := 0
	for i := range es {
		n += entrySize + 12*len(in) + len(es[i].Name) + len(es[i].PrivilegeClassification)
		if ac := es[i].ActionClass; ac != nil {
			n += len(*ac)
		}
	}
	return n
}

// fastSize is the buffer marshalFast allocates for v (0 for what it does
// not write).
func fastSize(v any) int {
	switch a := v.(type) {
	case *Declared:
		return 512 + len(a.Note) + entriesSize(a.Tools, "  ")
	case *Observed:
		n := 1024 + entriesSize(a.Observed.ToolDigests, "    ")
		for _, c := range a.NonClaims {
			n += 8 + len(c)
		}
		return n
	}
	return 0
}

// marshalFast writes the artifacts MarshalArtifact knows the shape of, and
// reports false for anything else.
func marshalFast(v any) ([]byte, bool) {
	switch a := v.(type) {
	case *Declared:
		return appendDeclared(make([]byte, 0, fastSize(a)), a), true
	case *Observed:
		return appendObserved(make([]byte, 0, fastSize(a)), a), true
	}
	return nil, false
}

func appendDeclared(b []byte, d *Declared) []byte {
	b = append(b, "{\n  \"schema\": "...)
	b = appendJSONString(b, d.Schema)
	if d.Note != "" {
		b = append(b, ",\n  \"note\": "...)
		b = appendJSONString(b, d.Note)
	}
	b = append(b, ",\n  \"server\": {\n    \"id\": "...)
	b = appendJSONString(b, d.Server.ID)
	b = append(b, "\n  },\n  \"canonicalization\": "...)
	b = appendJSONString(b, d.Canonicalization)
	b = append(b, ",\n  \"manifest_digest\": "...)
	b = appendJSONString(b, d.ManifestDigest)
	b = append(b, ",\n  \"tools\": "...)
	b = appendEntries(b, d.Tools, "  ")
	return append(b, "\n}\n"...)
}

func appendObserved(b []byte, o *Observed) []byte {
	ob := &o.Observed
	b = append(b, "{\n  \"schema\": "...)
	b = appendJSONString(b, o.Schema)
	b = append(b, ",\n  \"status\": "...)
	b = appendJSONString(b, o.Status)
	b = append(b, ",\n  \"server\": {\n    \"id\": "...)
	b = appendJSONString(b, o.Server.ID)
	b = append(b, "\n  },\n  \"observed\": {\n    \"manifest_digest\": "...)
	if ob.ManifestDigest == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, *ob.ManifestDigest)
	}
	b = append(b, ",\n    \"canonicalization\": "...)
	b = appendJSONString(b, ob.Canonicalization)
	b = append(b, ",\n    \"tool_count\": "...)
	b = strconv.AppendInt(b, int64(ob.ToolCount), 10)
	b = append(b, ",\n    \"privileged_tool_count\": "...)
	b = strconv.AppendInt(b, int64(ob.PrivilegedToolCount), 10)
	b = append(b, ",\n    \"tools_list_observed\": "...)
	b = strconv.AppendBool(b, ob.ToolsListObserved)
	b = append(b, ",\n    \"tools_list_complete\": "...)
	b = appendJSONString(b, string(ob.ToolsListComplete))
	b = append(b, ",\n    \"tool_digests\": "...)
	b = appendEntries(b, ob.ToolDigests, "    ")
	b = append(b, "\n  },\n  \"non_claims\": "...)
	if o.NonClaims == nil {
		b = append(b, "null"...)
	} else if len(o.NonClaims) == 0 {
		b = append(b, "[]"...)
	} else {
		b = append(b, '[')
		for i, c := range o.NonClaims {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n    "...)
			b = appendJSONString(b, c)
		}
		b = append(b, "\n  ]"...)
	}
	return append(b, "\n}\n"...)
}

// appendEntries writes entries as encoding/json indents them at in (nil
// is null, no entries []).
func appendEntries(b []byte, es []ToolEntry, in string) []byte {
	if es == nil {
		return append(b, "null"...)
	}
	if len(es) == 0 {
		return append(b, "[]"...)
	}
	b = append(b, '[')
	for i := range es {
		e := &es[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, '\n'), in...), "  {\n"...)
		b = append(append(b, in...), "    \"name\": "...)
		b = appendJSONString(b, e.Name)
		b = append(append(append(b, ",\n"...), in...), "    \"tool_digest\": "...)
		b = appendJSONString(b, e.ToolDigest)
		b = append(append(append(b, ",\n"...), in...), "    \"privileged\": "...)
		b = strconv.AppendBool(b, e.Privileged)
		b = append(append(append(b, ",\n"...), in...), "    \"privilege_classification\": "...)
		b = appendJSONString(b, e.PrivilegeClassification)
		b = append(append(append(b, ",\n"...), in...), "    \"action_class\": "...)
		if e.ActionClass == nil {
			b = append(b, "null"...)
		} else {
			b = appendJSONString(b, *e.ActionClass)
		}
		if fd := e.FieldDigests; fd != nil {
			b = append(append(append(b, ",\n"...), in...), "    \"field_digests\": {"...)
			n := 0
			for j, f := range FieldNames {
				d := fd.Get(f)
				if d == "" {
					continue
				}
				if n > 0 {
					b = append(b, ',')
				}
				n++
				b = append(append(append(b, '\n'), in...), "      "...)
				b = appendJSONString(b, FieldNames[j])
				b = append(b, ": "...)
				b = appendJSONString(b, d)
			}
			if n > 0 {
				b = append(append(append(b, '\n'), in...), "    "...)
			}
			b = append(b, '}')
		}
		b = append(append(append(b, '\n'), in...), "  }"...)
	}
	return append(append(append(b, '\n'), in...), ']')
}

// appendJSONString appends s as encoding/json writes it (HTML-safe): a
// string of printable ASCII other than the characters it escapes is
// written as it is, anything else through encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			_ = enc.Encode(s) // a string always encodes
			return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
