package cli

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// callPlan resolves --invoke-tool names against the DECLARED manifest (a
// server cannot offer a name and have it called) and generates arguments
// from the declared input schemas, or takes those --invoke-arguments gives
// (NAME=JSON, a JSON object, for a name --invoke-tool names). Exact names
// only, never patterns.
func callPlan(declared []manifest.Tool, invoke, given []string, execute bool, seed int64) ([]probe.PlannedCall, error) {
	if execute && len(invoke) == 0 {
		return nil, usageErr("--execute needs --invoke-tool NAME: there is no wildcard")
	}
	args, err := givenArguments(given, invoke)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*manifest.Tool, len(declared))
	for i := range declared {
		byName[declared[i].Name] = &declared[i]
	}
	var plan []probe.PlannedCall
	seen := map[string]bool{}
	for _, name := range invoke {
		t := byName[name]
		if t == nil {
			return nil, usageErr("--invoke-tool %s: no such tool in the declared manifest (names are exact; patterns are not supported)", safetext.Quote(name))
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		a, ok := args[name]
		if !ok {
			a = probe.GenerateArguments(name, t.Proj.InputSchema, seed)
		}
		plan = append(plan, probe.PlannedCall{Tool: name, Arguments: a, InputSchema: t.Proj.InputSchema.Raw()})
	}
	return plan, nil
}

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

// callChecks pairs each call outcome with the declared outputSchema.
func callChecks(obs *mcpclient.Observation, declared []manifest.Tool) []probe.CallCheck {
	var out []probe.CallCheck
	for _, c := range obs.Calls {
		cc := probe.CallCheck{Tool: c.Name, Result: c.Result, Code: c.Code, Err: c.Err, InputRequired: c.InputRequired}
		for i := range declared {
			if declared[i].Name == c.Name {
				cc.DeclaredOutput = declared[i].Proj.OutputSchema
				break
			}
		}
		out = append(out, cc)
	}
	return out
}
