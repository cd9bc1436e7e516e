package decide

import (
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/toolname"
)

// namesCollide are the served tools the gateway hides because their names
// collide with another served name after NFC, case folding or the
// confusable fold (toolname.Check, the one name check), and the operator
// did not acknowledge them (Baseline.NameAcknowledged): a person cannot
// tell them apart, and a client that folds names may call the wrong one.
// Name → why (escaped: names as code points). Each name of a group is
// acknowledged on its own, as gate's findings are suppressed one by one.
func namesCollide(b *Baseline, served []manifest.Tool) map[string]string {
	names := make([]string, len(served))
	for i := range served {
		names[i] = served[i].Name
	}
	res := toolname.Check(names)
	if len(res.Ambiguous) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, g := range res.Ambiguous {
		for _, n := range g.Names {
			if b.NameAcknowledged == nil || !b.NameAcknowledged(n) {
				out[n] = g.Describe() + ", and the name was not acknowledged (a suppression of mcp_tool_names_ambiguous)"
			}
		}
	}
	return out
}
