// Package peers holds integration tests that run mcpdrift against real MCP
// implementations — the official Go SDK, mark3labs/mcp-go and the npm
// reference server @modelcontextprotocol/server-everything — on loopback and
// over stdio, and the gateway (`mcpdrift proxy`) between real clients (the
// go-sdk and mcp-go clients, the MCP Inspector CLI) and real servers, and
// under the official conformance suite. It has no code of its own:
// everything is in _test.go files, so the SDKs are test-only requirements
// of the module.
//
// The npm peers are installed by scripts/install-test-peers.sh into a cache
// directory outside the repository (MCPDRIFT_PEERS_DIR, default
// ~/.cache/mcpdrift-peers), each at a pinned version: server-everything
// (run with the machine's node), and Node.js 22 from the npm registry, on
// which the MCP Inspector (@modelcontextprotocol/inspector) and the
// conformance suite (@modelcontextprotocol/conformance) run, since both need
// node >= 22. When node or npm is missing or an install fails, their tests
// are skipped and say why. Set MCPDRIFT_PEERS_REQUIRE_NPM=1 (as CI does) to
// make that a failure instead.
package peers
