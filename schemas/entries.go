package schemas

import "github.com/mcpdrift/mcpdrift/jcs"

// The tool entries of a declared baseline (tools) and of an observed
// record (observed.tool_digests) are most of a large artifact, and the
// schema validator walks each one at length. Their shape is small and
// fixed (the "tool entry" below, the same in both schemas), so
// ValidateValue checks each entry by hand first, and when every entry is
// certainly valid it validates the document with an empty array in their
// place: the array's only constraints are its type and its items, so the
// document is valid exactly when that is and every entry is. When any
// entry is not certainly valid, the whole document goes to the validator,
// which says what is wrong exactly as before. The hand check may only say
// "certainly valid" for what the schema accepts: TestEntryShapeIsTheSchemas
// holds the schemas to this shape and FuzzEntryFastPath checks the two
// agree.

// entryArrays locates, per schema, the array of tool entries.
var entryArrays = map[string][]string{
	Declared: {"tools"},
	Observed: {"observed", "tool_digests"},
}

// entryKeys are the members a tool entry may have.
var entryKeys = map[string]bool{"name": true, "tool_digest": true, "privileged": true, "privilege_classification": true, "action_class": true, "field_digests": true}

// fieldDigestKeys are the members of a tool entry's field_digests.
var fieldDigestKeys = map[string]bool{"description": true, "input_schema": true, "output_schema": true, "annotations": true}

// entryValid reports whether v is certainly a valid tool entry: an object
// with only entryKeys; name a non-empty string; tool_digest a digest;
// privileged a boolean; privilege_classification, when present,
// "classified" or "unclassified"; action_class, when present, a string or
// null; field_digests, when present, an object of digests under
// fieldDigestKeys.
func entryValid(v jcs.Value) bool {
	if v.Kind() != jcs.Object {
		return false
	}
	var name, digest, privileged bool
	for i := range v.Len() {
		k, x := v.Member(i)
		key := k.StrBytes() // none of these allocates
		if !entryKeys[string(key)] {
			return false
		}
		switch string(key) {
		case "name":
			if x.Kind() != jcs.String || len(x.StrBytes()) == 0 {
				return false
			}
			name = true
		case "tool_digest":
			if x.Kind() != jcs.String || !isDigest(x.StrBytes()) {
				return false
			}
			digest = true
		case "privileged":
			if x.Kind() != jcs.True && x.Kind() != jcs.False {
				return false
			}
			privileged = true
		case "privilege_classification":
			if x.Kind() != jcs.String || (!x.StrEqual("classified") && !x.StrEqual("unclassified")) {
				return false
			}
		case "action_class":
			if x.Kind() != jcs.String && x.Kind() != jcs.Null {
				return false
			}
		case "field_digests":
			if x.Kind() != jcs.Object {
				return false
			}
			for j := range x.Len() {
				fk, fv := x.Member(j)
				if !fieldDigestKeys[string(fk.StrBytes())] || fv.Kind() != jcs.String || !isDigest(fv.StrBytes()) {
					return false
				}
			}
		}
	}
	return name && digest && privileged
}

// entriesOf returns the array of tool entries of v under path, when it is
// there and is an array.
func entriesOf(v jcs.Value, path []string) (jcs.Value, bool) {
	for _, seg := range path {
		if v.Kind() != jcs.Object {
			return jcs.Value{}, false
		}
		var ok bool
		if v, ok = v.Get(seg); !ok {
			return jcs.Value{}, false
		}
	}
	return v, v.Kind() == jcs.Array
}

// instanceWithout is instanceOf(v) with the array skip (a value inside v)
// as an empty array.
func instanceWithout(v, skip jcs.Value) any {
	if v.Kind() == jcs.Array && v.Offset() == skip.Offset() && v.Kind() == skip.Kind() {
		return []any{}
	}
	switch v.Kind() {
	case jcs.Object:
		m := make(map[string]any, v.Len())
		for i := range v.Len() {
			k, x := v.Member(i)
			m[k.Str()] = instanceWithout(x, skip)
		}
		return m
	case jcs.Array:
		a := make([]any, v.Len())
		for i := range a {
			a[i] = instanceWithout(v.Index(i), skip)
		}
		return a
	}
	return instanceOf(v)
}

// validateFast is ValidateValue's fast path: ok is false when it does not
// apply (the whole document is then validated).
func validateFast(name string, v jcs.Value) (bool, error) {
	path, has := entryArrays[name]
	if !has {
		return false, nil
	}
	arr, has := entriesOf(v, path)
	if !has || arr.Len() < fastEntries {
		return false, nil
	}
	for i := range arr.Len() {
		if !entryValid(arr.Index(i)) {
			return false, nil
		}
	}
	return true, Validate(name, instanceWithout(v, arr))
}

// fastEntries is the fewest entries the fast path is taken for (a small
// artifact is validated whole).
var fastEntries = 64
