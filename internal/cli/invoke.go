package cli

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// givenArguments reads --invoke-arguments NAME=JSON: each NAME one that
// --invoke-tool names, once, and each JSON a strict JSON object (kept as
// given).
func givenArguments(given, invoke []string) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(given))
	for _, g := range given {
		name, value, ok := strings.Cut(g, "=")
		switch {
		case !ok:
			return nil, usageErr("--invoke-arguments must be NAME=JSON")
		case !slices.Contains(invoke, name):
			return nil, usageErr("--invoke-arguments %s: the name is not one --invoke-tool names", safetext.Quote(name))
		case out[name] != nil:
			return nil, usageErr("--invoke-arguments %s: given twice", safetext.Quote(name))
		}
		doc, err := jcs.Parse([]byte(value))
		if err != nil || doc.Root().Kind() != jcs.Object {
			return nil, usageErr("--invoke-arguments %s: the arguments must be a JSON object", safetext.Quote(name))
		}
		out[name] = json.RawMessage(value)
	}
	return out, nil
}
