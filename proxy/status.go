package proxy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// maxStatusNames is how many tool names a status line shows per reason.
const maxStatusNames = 5

// status writes the status line of a decided list (Config.Status) when it
// differs from the last one written: an operator sees what a gateway in
// front of an old baseline hides without reading the decision log, and a
// steady state is said once.
func (g *Gateway) status(l *decide.List) {
	if g.cfg.Status == nil {
		return
	}
	line := statusLine(g.cfg.ServerID, l)
	g.statusMu.Lock()
	defer g.statusMu.Unlock()
	if line == g.lastStatus {
		return
	}
	g.lastStatus = line
	_, _ = fmt.Fprintln(g.cfg.Status, g.cfg.Secrets.String(line))
}

// statusLine says what a decided list serves: "mcpdrift proxy: ID:
// serving 12 of 14 tools; hidden: 1 tool_changed_needs_review ("a"), ...",
// or why the server is withheld.
func statusLine(serverID string, l *decide.List) string {
	head := "mcpdrift proxy: " + safetext.Quote(safetext.Clip(serverID, 128)) + ": "
	if l.Withheld {
		return head + "the server is withheld (" + l.Reason + "): " + safetext.Inert(safetext.ClipEscaped(l.Detail, 512))
	}
	served, total := 0, 0
	hidden := map[string][]string{}
	for _, d := range l.Tools {
		total++
		if d.Serve {
			served++
			continue
		}
		hidden[d.Reason] = append(hidden[d.Reason], d.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%sserving %d of %d tools", head, served, total)
	reasons := make([]string, 0, len(hidden))
	for r := range hidden {
		reasons = append(reasons, r)
	}
	slices.Sort(reasons)
	for i, r := range reasons {
		sep := ", "
		if i == 0 {
			sep = "; hidden: "
		}
		names := hidden[r]
		slices.Sort(names)
		quoted := make([]string, 0, maxStatusNames)
		for _, n := range names[:min(len(names), maxStatusNames)] {
			quoted = append(quoted, safetext.QuoteASCII(safetext.Clip(n, 64)))
		}
		more := ""
		if len(names) > maxStatusNames {
			more = fmt.Sprintf(" and %d more", len(names)-maxStatusNames)
		}
		fmt.Fprintf(&b, "%s%d %s (%s%s)", sep, len(names), r, strings.Join(quoted, ", "), more)
	}
	if len(l.Removed) > 0 {
		fmt.Fprintf(&b, "; %d pinned tools no longer served", len(l.Removed))
	}
	return b.String()
}
