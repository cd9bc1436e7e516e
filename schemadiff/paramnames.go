package schemadiff

import (
	"strings"
	"unicode"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// A new optional parameter is high when a word of its name suggests a new
// capability, or when its schema accepts any value or any object.

var schCapabilityWords = map[string]bool{
	"url": true, "uri": true, "callback": true, "webhook": true, "endpoint": true, "host": true,
	"hostname": true, "env": true, "environment": true, "command": true, "cmd": true, "script": true,
	"shell": true, "exec": true, "execute": true, "executable": true, "path": true, "filepath": true,
	"dir": true, "directory": true, "cwd": true, "workdir": true, "file": true, "filename": true,
	"header": true, "headers": true, "token": true, "proxy": true,
	// Switches and open-ended bags that change what the tool may do.
	"allow": true, "dangerous": true, "unsafe": true, "insecure": true, "options": true,
	"config": true, "configuration": true, "args": true, "argv": true, "eval": true, "code": true,
	"sql": true, "launch": true, "sandbox": true, "sudo": true, "privileged": true, "password": true,
	"secret": true, "credential": true, "auth": true, "cookie": true, "redirect": true,
}

// schPermissive reports whether a parameter's schema accepts any value or
// any object (true, {}, or an object type with no properties and open
// additionalProperties): the widest possible new parameter.
func schPermissive(v jcs.Value) bool {
	if !v.Valid() {
		return false
	}
	switch v.Kind() {
	case jcs.True:
		return true
	case jcs.Object:
	default:
		return false
	}
	if _, ok := v.Get("$ref"); ok {
		return false
	}
	for _, kw := range []string{"enum", "const", "anyOf", "oneOf", "allOf", "not", "pattern", "format", "properties"} {
		if _, ok := v.Get(kw); ok {
			return false
		}
	}
	t, hasType := v.Get("type")
	if hasType {
		objectish := t.StrEqual("object")
		if t.Kind() == jcs.Array {
			for i := 0; i < t.Len(); i++ {
				if t.Index(i).StrEqual("object") {
					objectish = true
				}
			}
		}
		if !objectish {
			return false
		}
	}
	if ap, ok := v.Get("additionalProperties"); ok && ap.Kind() == jcs.False {
		return false
	}
	return true
}

// schCapabilityName reports whether a word of a parameter name (split at
// non-alphanumerics and camelCase boundaries, plural s dropped) suggests a
// new capability.
func schCapabilityName(name string) bool {
	for _, w := range schWords(name) {
		w = strings.ToLower(w)
		if schCapabilityWords[w] || (len(w) > 3 && strings.HasSuffix(w, "s") && schCapabilityWords[w[:len(w)-1]]) {
			return true
		}
	}
	return false
}

// schWords splits "callbackURL_v2" into callback, URL, v2.
func schWords(s string) []string {
	var words []string
	rs := []rune(s)
	start := -1
	for i, r := range rs {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		if !alnum {
			if start >= 0 {
				words = append(words, string(rs[start:i]))
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		// A lower-case letter after a run of capitals starts a new word
		// ("URLPath"), except a plural s that ends it ("URIs").
		acronymEnd := unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) &&
			!(rs[i+1] == 's' && (i+2 == len(rs) || !unicode.IsLower(rs[i+2])))
		boundary := unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev) || acronymEnd)
		if boundary {
			words = append(words, string(rs[start:i]))
			start = i
		}
	}
	if start >= 0 {
		words = append(words, string(rs[start:]))
	}
	return words
}
