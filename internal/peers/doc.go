// Package peers holds integration tests that run mcpdrift against real MCP
// implementations — the official Go SDK, mark3labs/mcp-go and the npm
// reference server @modelcontextprotocol/server-everything — on loopback and
// over stdio. It has no code of its own: everything is in _test.go files, so
// the SDKs are test-only requirements of the module.
//
// The npm server is installed by scripts/install-test-peers.sh into a cache
// directory outside the repository (MCPDRIFT_PEERS_DIR, default
// ~/.cache/mcpdrift-peers); when node or npm is missing or the install
// fails, its tests are skipped and say why. Set MCPDRIFT_PEERS_REQUIRE_NPM=1
// (as CI may) to make that a failure instead.
package peers
