package probe

import "github.com/mcpdrift/mcpdrift/toolname"

// toolNames applies the name rules of the specification to the served
// list: every name outside the safe set (MCP-CONF-TOOL-NAME-UNSAFE), and
// every name of a group of different names that collide after NFC, case
// folding or the confusable fold (MCP-CONF-TOOL-NAMES-AMBIGUOUS). The check
// is package toolname's; messages never quote a name (the finding's Tool is
// the name, and renderers escape it), they give code points as U+XXXX.
func toolNames(r *Result, p *Observation) {
	res := toolname.Check(ToolNames(p.Tools))
	for _, u := range res.Unsafe {
		r.add("MCP-CONF-TOOL-NAME-UNSAFE", u.Name, u.Describe()+"; the specification says a tool name should be 1 to 128 characters of A-Z a-z 0-9 _ - . only", "", nil)
	}
	for _, g := range res.Ambiguous {
		for _, n := range g.Names {
			r.add("MCP-CONF-TOOL-NAMES-AMBIGUOUS", n, g.Describe()+": a person cannot tell them apart, and a client that folds names may call the wrong one", "", nil)
		}
	}
}
