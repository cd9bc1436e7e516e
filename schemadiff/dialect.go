package schemadiff

import (
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// A change of $schema, the dialect, changes nothing a validator accepts
// when the schemas use no keyword whose meaning differs between the
// dialects. The dialects modeled are draft-07, 2019-09 and 2020-12 (and an
// absent $schema: the reader's default, which for MCP is 2020-12, older
// clients draft-07). What their own documents (the 2019-09 and 2020-12
// release notes) list as read differently:
//
//   - items as an array (a tuple before 2020-12, which has prefixItems),
//     additionalItems, prefixItems;
//   - dependencies (split into dependentRequired and dependentSchemas in
//     2019-09), dependentRequired, dependentSchemas;
//   - unevaluatedProperties, unevaluatedItems, minContains, maxContains
//     (2019-09 on);
//   - $recursiveRef and $recursiveAnchor (2019-09 only), $dynamicRef and
//     $dynamicAnchor (2020-12), $anchor (2019-09 on), an $id that is a
//     plain-name fragment (draft-07's anchors);
//   - a $ref with validating keywords beside it (draft-07 ignores them);
//   - a $ref into definitions or $defs (each is a keyword in one dialect
//     and an unknown keyword in the other, where a reference into it is
//     not defined).
//
// format and the content keywords are not listed: draft-07 already leaves
// it to the implementation whether format asserts, and 2019-09 on make it
// an annotation unless the implementation is asked to assert; a validator
// may read them either way under either dialect.
//
// Where such a keyword is used, the schemas were not compared under each
// side's dialect: the change is schema_unresolved, never neutral. A
// $schema that names another dialect (draft-04, a custom meta-schema) is
// schema_unresolved too.

// schDialects are the $schema values modeled, without a trailing "#" and
// with the scheme "http://".
var schDialects = map[string]string{
	"http://json-schema.org/draft-07/schema":      "draft-07",
	"http://json-schema.org/draft/2019-09/schema": "2019-09",
	"http://json-schema.org/draft/2020-12/schema": "2020-12",
}

// schDialectName names the dialect a $schema value declares; ok false
// when it is not one modeled.
func schDialectName(v jcs.Value) (string, bool) {
	if v.Kind() != jcs.String {
		return "", false
	}
	s := strings.TrimSuffix(v.Str(), "#")
	if rest, ok := strings.CutPrefix(s, "https://"); ok {
		s = "http://" + rest
	}
	name := schDialects[s]
	return name, name != ""
}

// dialect records a changed, added or removed $schema at ptr.
func (d *schDiffer) dialect(ptr string, vo jcs.Value, ho bool, vn jcs.Value, hn bool, pol int8) {
	name := func(v jcs.Value, has bool) (string, bool) {
		if !has {
			return "absent", true
		}
		if n, ok := schDialectName(v); ok {
			return n, true
		}
		return schQuote(string(v.Canonical())), false
	}
	on, okO := name(vo, ho)
	nn, okN := name(vn, hn)
	detail := "$schema " + on + " → " + nn
	if !okO || !okN {
		d.unresolved(ptr, detail, "a dialect mcpdrift does not model: the schemas were not compared under each side's dialect, so validation may differ")
		return
	}
	if d.dialectWhy == nil {
		why := schDialectSensitive(d.old.root)
		if why == "" {
			why = schDialectSensitive(d.new.root)
		}
		d.dialectWhy = &why
	}
	if *d.dialectWhy != "" {
		d.unresolved(ptr, detail, *d.dialectWhy+", which the two dialects read differently: the schemas were not compared under each side's dialect, so validation may differ")
		return
	}
	d.emit(SchemaDialectChanged, ptr, Neutral, pol, false, detail+"; the schemas use no keyword the two dialects read differently: validation is the same", "")
}

// schDialectSensitive says where a schema uses a keyword that the modeled
// dialects read differently ("" when it uses none): the first one in
// document order, walking schema positions only (a property named
// "dependencies" is not the keyword).
func schDialectSensitive(root jcs.Value) string {
	var segs []string
	at := func(kw string) string {
		return schQuote(kw) + " at " + schQuote(jcs.PointerJoin("", segs...))
	}
	var walk func(v jcs.Value) string
	walk = func(v jcs.Value) string {
		if v.Kind() != jcs.Object {
			return ""
		}
		if why := schDialectKeywords(v, at); why != "" {
			return why
		}
		for i := 0; i < v.Len(); i++ {
			k, c := v.Member(i)
			ks := k.Str()
			kind := schSchemaKeywords[ks]
			if kind == 1 && c.Kind() == jcs.Array {
				kind = 3 // items in array form: a tuple (found above)
			}
			segs = append(segs, ks)
			switch kind {
			case 1:
				if why := walk(c); why != "" {
					return why
				}
			case 2:
				for j := 0; c.Kind() == jcs.Object && j < c.Len(); j++ {
					mk, mc := c.Member(j)
					segs = append(segs, mk.Str())
					why := walk(mc)
					segs = segs[:len(segs)-1]
					if why != "" {
						return why
					}
				}
			case 3:
				for j := 0; c.Kind() == jcs.Array && j < c.Len(); j++ {
					segs = append(segs, strconv.Itoa(j))
					why := walk(c.Index(j))
					segs = segs[:len(segs)-1]
					if why != "" {
						return why
					}
				}
			}
			segs = segs[:len(segs)-1]
		}
		return ""
	}
	if !root.Valid() {
		return ""
	}
	return walk(root)
}

// schDialectOnly are the keywords whose presence alone makes a schema read
// differently by the modeled dialects.
var schDialectOnly = map[string]bool{
	"additionalItems": true, "prefixItems": true,
	"dependencies": true, "dependentRequired": true, "dependentSchemas": true,
	"unevaluatedProperties": true, "unevaluatedItems": true, "minContains": true, "maxContains": true,
	"$recursiveRef": true, "$recursiveAnchor": true, "$dynamicRef": true, "$dynamicAnchor": true, "$anchor": true,
}

// schDialectKeywords says which keyword of one schema object the modeled
// dialects read differently, "" when none does.
func schDialectKeywords(v jcs.Value, at func(string) string) string {
	for i := 0; i < v.Len(); i++ {
		k, c := v.Member(i)
		ks := k.Str()
		switch {
		case schDialectOnly[ks]:
			return at(ks)
		case ks == "items" && c.Kind() == jcs.Array:
			return at("items") + " (an array)"
		case ks == "$id" && c.Kind() == jcs.String && strings.HasPrefix(c.Str(), "#"):
			return at("$id") + " (a plain-name fragment)"
		case ks == "$ref" && c.Kind() == jcs.String:
			if r := c.Str(); strings.Contains(r, "/definitions/") || strings.Contains(r, "/$defs/") ||
				strings.HasSuffix(r, "/definitions") || strings.HasSuffix(r, "/$defs") {
				return at("$ref") + " (into definitions or $defs)"
			}
			for j := 0; j < v.Len(); j++ {
				sk, _ := v.Member(j)
				if sks := sk.Str(); sks != "$ref" && schKeywords[sks] == schKwStructural {
					return at("$ref") + " (beside " + schQuote(sks) + ")"
				}
			}
		}
	}
	return ""
}
