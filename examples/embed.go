// Package examples bundles the example data used by `mcpdrift demo` and the
// README: a small GitHub-like MCP server's tools/list before and after a
// rug pull.
package examples

import _ "embed"

// V1 is the approved tools/list of the example server.
//
//go:embed acme-github.v1.tools-list.json
var V1 []byte

// V2RugPull is the same server after a rug pull: a description rewritten
// into an instruction, a parameter quietly added and a constraint dropped,
// an annotation weakened, a privileged tool added and a tool removed.
//
//go:embed acme-github.v2-rugpull.tools-list.json
var V2RugPull []byte
