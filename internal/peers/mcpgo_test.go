package peers

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// mcpGoPageSize: 6 tools in pages of 2 (server.WithPaginationLimit).
// mcp-go v1.2.1 sends a nextCursor with every full page, so the list ends
// with an empty fourth page (no nextCursor): mcpGoPages.
const (
	mcpGoPageSize = 2
	mcpGoPages    = 4
)

const mcpGoChangedTool = "create_ticket"

var mcpGoToolNames = []string{"get_weather", mcpGoChangedTool, "list_files", "run_query", "set_config", "ping_host"}

// newMCPGoServer builds the mark3labs/mcp-go peer: 6 tools, built with the
// option helpers and one raw schema.
func newMCPGoServer(variant string) *server.MCPServer {
	s := server.NewMCPServer("mcpdrift-peer-mcpgo", "1.0.0", server.WithToolCapabilities(true), server.WithPaginationLimit(mcpGoPageSize))
	ok := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	ticket := []mcp.ToolOption{
		mcp.WithDescription("Open a ticket in the tracker."),
		mcp.WithString("title", mcp.Required(), mcp.MaxLength(200)),
		mcp.WithString("priority", mcp.Enum("low", "normal", "high")),
		mcp.WithArray("tags", mcp.WithStringItems()),
		mcp.WithNumber("estimate_hours", mcp.Min(0)),
	}
	if variant == variantChanged {
		// A new required parameter: callers of the pinned schema now fail.
		ticket = append(ticket, mcp.WithString("assignee", mcp.Required()))
	}
	s.AddTool(mcp.NewTool("get_weather",
		mcp.WithDescription("Current weather for a city."),
		mcp.WithString("city", mcp.Required(), mcp.Description("city name")),
		mcp.WithString("units", mcp.Enum("metric", "imperial")),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
	), ok)
	s.AddTool(mcp.NewTool(mcpGoChangedTool, ticket...), ok)
	s.AddTool(mcp.NewTool("list_files",
		mcp.WithDescription("List the files of a directory."),
		mcp.WithString("dir", mcp.Description("directory, default the workspace root")),
		mcp.WithBoolean("hidden", mcp.DefaultBool(false)),
		mcp.WithReadOnlyHintAnnotation(true),
	), ok)
	s.AddTool(mcp.NewToolWithRawSchema("run_query", "Run a query against the metrics store.",
		json.RawMessage(`{"type":"object","$defs":{"range":{"type":"object","properties":{"from":{"type":"string","format":"date-time"},"to":{"type":"string","format":"date-time"}},"required":["from"]}},"properties":{"promql":{"type":"string"},"range":{"$ref":"#/$defs/range"},"step":{"oneOf":[{"type":"integer","minimum":1},{"type":"string","pattern":"^[0-9]+[smh]$"}]}},"required":["promql"]}`)), ok)
	s.AddTool(mcp.NewTool("set_config",
		mcp.WithDescription("Replace the service configuration."),
		mcp.WithObject("config", mcp.Required(), mcp.Properties(map[string]any{
			"log_level": map[string]any{"type": "string", "enum": []string{"debug", "info", "warn"}},
			"workers":   map[string]any{"type": "integer", "minimum": 1},
		})),
	), ok)
	s.AddTool(mcp.NewTool("ping_host",
		mcp.WithDescription("ICMP-ping a host."),
		mcp.WithString("host", mcp.Required(), mcp.Pattern(`^[A-Za-z0-9.-]+$`)),
		mcp.WithInteger("count", mcp.Min(1), mcp.Max(10)),
	), ok)
	return s
}

func serveMCPGo(t *testing.T, variant string, opts ...server.StreamableHTTPOption) string {
	t.Helper()
	return serveHTTP(t, server.NewStreamableHTTPServer(newMCPGoServer(variant), opts...))
}

// TestMCPGoStreamableHTTP: mark3labs/mcp-go's Streamable HTTP server, in
// its default (session ids, dual-era) and stateless modes; each is also
// observed with --legacy (initialize first) against the manifest pinned
// from the modern observation, which shows the tool bytes do not depend on
// the era.
func TestMCPGoStreamableHTTP(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []server.StreamableHTTPOption
	}{
		{"default", nil},
		{"stateless", []server.StreamableHTTPOption{server.WithStateLess(true)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			defer func() { recordTiming("mcpgo http "+tc.name+": whole test", time.Since(start)) }()
			label := "mcpgo http " + tc.name
			url := serveMCPGo(t, "", tc.opts...)
			obs, tl := observe(t, label, mcpclient.Config{BaseURL: url})
			checkNames(t, label, tl, mcpGoToolNames)
			checkEra(t, label, obs, mcpclient.EraModern, mcpwire.Rev20260728, "")
			if obs.Pages != mcpGoPages {
				t.Errorf("%s: %d pages, want %d (6 tools, pagination limit %d, then an empty page)", label, obs.Pages, mcpGoPages, mcpGoPageSize)
			}
			if obs.TTLMs == nil || obs.CacheScope == "" || obs.MissingCacheFields {
				t.Errorf("%s: cache fields ttlMs=%v cacheScope=%q missing=%v", label, ptrVal(obs.TTLMs), obs.CacheScope, obs.MissingCacheFields)
			}
			pinned := saveManifest(t, "mcpgo", obs)
			checkClean(t, label, drift(t, label, pinned, "--url", url), len(mcpGoToolNames), ruleAnonymousList)

			// Legacy era on the same endpoint.
			legacyLabel := label + " legacy"
			lobs, ltl := observe(t, legacyLabel, mcpclient.Config{BaseURL: url, PreferredRevision: mcpwire.LegacyRevisions[0]})
			checkNames(t, legacyLabel, ltl, mcpGoToolNames)
			checkEra(t, legacyLabel, lobs, mcpclient.EraLegacy, "", mcpwire.LegacyRevisions[0])
			checkClean(t, legacyLabel, drift(t, legacyLabel, pinned, "--url", url, "--legacy"), len(mcpGoToolNames), ruleAnonymousList, ruleLegacyServer)

			changed := serveMCPGo(t, variantChanged, tc.opts...)
			checkSchemaDrift(t, label+" changed", drift(t, label+" changed", pinned, "--url", changed), mcpGoChangedTool)
		})
	}
}

// TestMCPGoStdio: mcp-go's stdio server (server.ServeStdio) in this test
// binary re-executed as the child.
func TestMCPGoStdio(t *testing.T) {
	testStdioChild(t, "mcpgo", mcpGoToolNames, mcpGoChangedTool, mcpGoPages)
}
