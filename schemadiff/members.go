package schemadiff

import (
	"github.com/mcpdrift/mcpdrift/jcs"
)

// memberChanges reports the members of a tool outside the digest
// projection that changed (execution, title, icons, _meta, vendor
// members): never silently ignored, and information only (tool_member_changed:
// the digests do not cover them, so no decision rests on them). The
// tool's title, a display name, gets a word diff.
func memberChanges(name string, o, n jcs.Value) []Change {
	var out []Change
	seen := map[string]bool{}
	for _, t := range []jcs.Value{o, n} {
		for _, k := range t.Keys() {
			if modeledToolKeys[k] || seen[k] {
				continue
			}
			seen[k] = true
			ov, _ := o.Get(k)
			nv, _ := n.Get(k)
			if canonEqual(ov, nv) {
				continue
			}
			c := Change{Name: name, Kind: ToolMemberChanged, Pointer: jcs.PointerJoin("", k), Direction: Neutral, Severity: "low",
				Detail: "outside the digest projection: information, it decides nothing"}
			if k == "title" {
				if w := WordDiff(textOf(ov), textOf(nv), 160); w != "" {
					c.Detail = w
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// stableDescriptionDrift is the schema_drift_stable_description record of
// an input schema whose changes are changes, when the description stayed
// identical: the planner reasons over the old description while the
// executor validates against the new schema. It is said only when a
// change may alter what a validator accepts (validationChange), and it
// carries their direction (driftDirection): the seed's refusal applies to
// a schema that widens or narrows validation, not to one that validates
// the same (notation, a neutral dialect, annotations, a parameter's text
// or default, each reported on its own).
func stableDescriptionDrift(name, ptr string, descSame bool, changes []Change) []Change {
	if !descSame {
		return nil
	}
	var v []Change
	for _, c := range changes {
		if validationChange(c) {
			v = append(v, c)
		}
	}
	if len(v) == 0 {
		return nil
	}
	return []Change{{Name: name, Kind: SchemaDriftStableDescription, Pointer: ptr, Direction: driftDirection(v), Severity: "high",
		Detail: "the input schema changed while the description stayed identical: the planner sees the old tool, the executor the new one"}}
}
