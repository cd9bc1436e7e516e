// Package examples bundles the example data used by `mcpdrift demo` and the
// README: a small GitHub-like MCP server's tools/list before and after a
// rug pull, and what it puts before the model beside its tools (its
// instructions, prompts and resource templates) before and after its
// instructions were poisoned.
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

// SurfaceV1 is the example server's approved instructions, prompts and
// resource templates, as a manifest the mock server serves
// (mockserver.LoadManifest; its tools are V1's).
//
//go:embed acme-github.v1.surface.json
var SurfaceV1 []byte

// SurfaceV2Poisoned is the same surface with its instructions rewritten
// into an instruction to exfiltrate a key.
//
//go:embed acme-github.v2-poisoned.surface.json
var SurfaceV2Poisoned []byte
