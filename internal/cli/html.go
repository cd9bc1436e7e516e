package cli

import (
	"io"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/report"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// --format html of gate, diff, drift and demo. The page is built here,
// where the commands hold both tool lists, so that each tool's card
// carries its readable delta with what only the definitions say (a new
// parameter's description, the word diffs, the hints' values); the
// report package's renderers, given a report alone, show what its records
// say.

// writeHTML renders one page of the sections.
func writeHTML(w io.Writer, title string, sections ...report.Section) error {
	return report.RenderHTML(w, &report.Page{Title: title, ToolVersion: version(), Sections: sections})
}

// driftDeltas are the readable deltas of a live drift: the changes of each
// tool the report decided on, as decide gives them (the call probe makes,
// so the records are the ones behind rep.Tools' decisions), read against
// the declared and served definitions.
func driftDeltas(declared, served []manifest.Tool, rep *probe.Report, prof *schemadiff.DecisionProfile, c *classify.Classifier) ([]delta.Tool, error) {
	if len(rep.Tools) == 0 {
		return delta.Build(declared, served, report.DriftChanges(rep), rep.Tools), nil
	}
	decided := map[string]bool{}
	for _, v := range rep.Tools {
		decided[v.Name] = true
	}
	var changes []schemadiff.Change
	for _, d := range decide.DecideTools(declared, served, decide.Options{Profile: prof, Classifier: c}) {
		if decided[d.Name] {
			changes = append(changes, d.Changes...)
		}
	}
	return delta.Build(declared, served, changes, rep.Tools), nil
}
