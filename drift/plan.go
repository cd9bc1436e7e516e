package drift

import (
	"encoding/json"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// callPlan resolves the tools to call against the DECLARED manifest (a
// server cannot offer a name and have it called) and generates arguments
// from the declared input schemas, or takes those given. Exact names only,
// never patterns.
func callPlan(declared []manifest.Tool, invoke []string, given map[string]json.RawMessage, execute bool, seed int64) ([]probe.PlannedCall, error) {
	if execute && len(invoke) == 0 {
		return nil, runerr.Usagef("--execute needs --invoke-tool NAME: there is no wildcard")
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
			return nil, runerr.Usagef("--invoke-tool %s: no such tool in the declared manifest (names are exact; patterns are not supported)", safetext.Quote(name))
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		is := t.Proj().InputSchema
		a, ok := given[name]
		if !ok {
			a = probe.GenerateArguments(name, is, seed)
		}
		plan = append(plan, probe.PlannedCall{Tool: name, Arguments: a, InputSchema: is.Raw()})
	}
	return plan, nil
}

// callChecks pairs each call outcome with the declared outputSchema.
func callChecks(obs *mcpclient.Observation, declared []manifest.Tool) []probe.CallCheck {
	var out []probe.CallCheck
	for _, c := range obs.Calls {
		cc := probe.CallCheck{Tool: c.Name, Result: c.Result, Code: c.Code, Err: c.Err, InputRequired: c.InputRequired}
		for i := range declared {
			if declared[i].Name == c.Name {
				cc.DeclaredOutput = declared[i].Proj().OutputSchema
				break
			}
		}
		out = append(out, cc)
	}
	return out
}
