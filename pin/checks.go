package pin

import (
	"fmt"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// maxShapeWarnings bounds the shape warnings of a pin.
const maxShapeWarnings = 50

// checks are what a pin reads of every tool's parse: secrets the run sent
// reflected into a tool, numbers the digests cannot tell apart, and tools
// that break the specification's shape.
type checks struct {
	secrets        *redact.Set
	reflected      []probe.Reflection
	imprecise      []manifest.ImpreciseNumber // the first MaxPrecisionWarnings
	impreciseTotal int
	shapes         []string // the first maxShapeWarnings warnings
	shapeTotal     int
}

// check checks tools.
func (c *checks) check(tools []manifest.Tool) {
	c.reflected = append(c.reflected, observe.ToolReflections(c.secrets, tools)...)
	found, total := manifest.ImpreciseNumbers(tools, max(manifest.MaxPrecisionWarnings-len(c.imprecise), 0))
	c.imprecise = append(c.imprecise, found...)
	c.impreciseTotal += total
	for i := range tools {
		msg := probe.ShapeProblem(&tools[i])
		if msg == "" {
			continue
		}
		if c.shapeTotal++; c.shapeTotal <= maxShapeWarnings {
			c.shapes = append(c.shapes, fmt.Sprintf("tool %s breaks the specification: %s; it is pinned as served, and every drift against this baseline will report MCP-CONF-TOOL-SHAPE for it", safetext.Quote(tools[i].Name), msg))
		}
	}
}

// paramHeaders notes the tools a 2026-07-28 Streamable HTTP client
// excludes for their x-mcp-header annotations (a live pin over HTTP in
// that era): warned with the shape warnings, in their bound.
func (c *checks) paramHeaders(tools []manifest.Tool) {
	for i := range tools {
		msg := tools[i].ParamHeaderProblem()
		if msg == "" {
			continue
		}
		if c.shapeTotal++; c.shapeTotal <= maxShapeWarnings {
			c.shapes = append(c.shapes, fmt.Sprintf("tool %s: %s; it is pinned as served, and every drift over HTTP will report MCP-CONF-PARAM-HEADER for it (the gateway does not serve it)", safetext.Quote(tools[i].Name), msg))
		}
	}
}

// precisionWarnings are the warnings of the numbers the digests cannot
// tell apart.
func (c *checks) precisionWarnings() []string {
	return manifest.PrecisionWarningsOf("", c.imprecise, c.impreciseTotal)
}

// shapeWarnings are the warnings of the tools that break the
// specification's tool shape (every later drift reports them as
// MCP-CONF-TOOL-SHAPE), and how many more there were.
func (c *checks) shapeWarnings() []string {
	out := append([]string(nil), c.shapes...)
	if n := c.shapeTotal - len(c.shapes); n > 0 {
		out = append(out, fmt.Sprintf("and %d more tools that break the specification", n))
	}
	return out
}
