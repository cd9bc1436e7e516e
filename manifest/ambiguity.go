package manifest

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// toolMembers are the members of a tool object clients read by name.
var toolMembers = MemberKeys("name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons", "execution", "_meta")

// MemberKeys maps each name's safetext.MemberKey to the name.
func MemberKeys(names ...string) map[string]string {
	m := map[string]string{}
	for _, n := range names {
		m[safetext.MemberKey(n)] = n
	}
	return m
}

// AmbiguousObject says why an object a server sent means one thing to
// mcpdrift and another to a client's decoder ("" when it does not): two
// of its members that a case-insensitive decoder takes for one, a case
// variant of a member clients read (members: MemberKeys of those;
// "Description" beside, or instead of, "description" is outside the
// digested projection, so an approved digest says nothing of it, and Go's
// encoding/json reads the last match), or a member named "__proto__"
// anywhere in it (JavaScript's assignment makes it a prototype, whose
// members answer for the ones the object lacks). The gateway forwards
// what it serves as it came, so such an object is not served.
func AmbiguousObject(v jcs.Value, members map[string]string) string {
	if !v.Valid() || v.Kind() != jcs.Object {
		return ""
	}
	keys := make(map[string]string, v.Len())
	for i := range v.Len() {
		k, _ := v.Member(i)
		name := k.Str()
		key := safetext.MemberKey(name)
		if prev, dup := keys[key]; dup {
			return "its members " + safetext.Quote(prev) + " and " + safetext.Quote(name) + " are one member to decoders that ignore case"
		}
		keys[key] = name
		if want, ok := members[key]; ok && want != name {
			return "its member " + safetext.Quote(name) + " is " + safetext.Quote(want) + " to decoders that ignore case, outside what the digest covers"
		}
	}
	if ptr := protoIn(v); ptr != "" {
		return "it holds a member named \"__proto__\" at " + safetext.Quote(ptr) + ", which a JavaScript client's copy makes a prototype"
	}
	return ""
}

// protoIn is the pointer of the first object under v with a member named
// "__proto__" ("" when none). The walk builds no pointer until it finds
// one: every listing of the gateway passes through it.
func protoIn(v jcs.Value) string {
	// A name that decodes to "__proto__" ends in an underscore before its
	// closing quote, written so or as \u005f (no other escape yields
	// "_"): without either there is nothing to walk for.
	raw := v.Raw()
	if !bytes.Contains(raw, []byte(`_"`)) && !bytes.Contains(raw, []byte(`\u005f"`)) && !bytes.Contains(raw, []byte(`\u005F"`)) {
		return ""
	}
	toks, ok := protoPath(v, nil)
	if !ok {
		return ""
	}
	ptr := ""
	for i := len(toks) - 1; i >= 0; i-- {
		ptr = jcs.PointerJoin(ptr, toks[i])
	}
	return ptr
}

// isProto says whether the member name k decodes to "__proto__"; a name
// without an escape is compared as it is written.
func isProto(k jcs.Value) bool {
	raw := k.Raw()
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == `"__proto__"`
	}
	return k.StrEqual("__proto__")
}

// protoPath finds the first "__proto__" member under v; toks is its
// pointer's tokens, innermost first.
func protoPath(v jcs.Value, toks []string) ([]string, bool) {
	switch v.Kind() {
	case jcs.Object:
		for i := range v.Len() {
			if k, _ := v.Member(i); isProto(k) {
				return append(toks, "__proto__"), true
			}
		}
		for i := range v.Len() {
			k, x := v.Member(i)
			if t, ok := protoPath(x, toks); ok {
				return append(t, k.Str()), true
			}
		}
	case jcs.Array:
		for i := range v.Len() {
			if t, ok := protoPath(v.Index(i), toks); ok {
				return append(t, strconv.Itoa(i)), true
			}
		}
	}
	return toks, false
}

// SchemaMayReferOut reports whether the schema v holds a "$ref" or "$dynamicRef" member
// whose value is a string that does not start with "#": the only members
// that can leave the document. It allocates nothing, so a schema without
// one (most) costs one walk and no side (see schemadiff's externalRefs).
func SchemaMayReferOut(v jcs.Value) bool {
	if !v.Valid() {
		return false
	}
	switch v.Kind() {
	case jcs.Object:
		for i := 0; i < v.Len(); i++ {
			k, c := v.Member(i)
			switch c.Kind() {
			case jcs.String:
				// The raw bytes first: a key without an escape is compared
				// as written; one with an escape is decoded.
				if kr := k.Raw(); bytes.IndexByte(kr, '\\') < 0 {
					if n := len(kr); !(n == 6 && string(kr) == `"$ref"`) && !(n == 13 && string(kr) == `"$dynamicRef"`) {
						continue
					}
				} else if !k.StrEqual("$ref") && !k.StrEqual("$dynamicRef") {
					continue
				}
				if cr := c.Raw(); len(cr) > 1 && cr[1] != '\\' {
					if cr[1] != '#' {
						return true
					}
				} else if !strings.HasPrefix(c.Str(), "#") {
					return true
				}
			case jcs.Object, jcs.Array:
				if SchemaMayReferOut(c) {
					return true
				}
			}
		}
	case jcs.Array:
		for i := 0; i < v.Len(); i++ {
			if c := v.Index(i); (c.Kind() == jcs.Object || c.Kind() == jcs.Array) && SchemaMayReferOut(c) {
				return true
			}
		}
	}
	return false
}
