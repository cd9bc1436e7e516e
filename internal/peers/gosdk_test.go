package peers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// variantChanged is the second tool set of each Go peer: one tool's input
// schema differs from the pinned one, everything else is byte-identical.
const variantChanged = "changed"

// goSDKPageSize makes the go-sdk server paginate (ServerOptions.PageSize):
// 13 tools in pages of 5 are 3 pages.
const goSDKPageSize = 5

// goSDKChangedTool is the tool whose schema the changed variant alters.
const goSDKChangedTool = "deploy_service"

// Typed tools: the SDK infers their schemas (JSON Schema 2020-12) from the
// Go types and validates calls against them.
type (
	echoIn struct {
		Message string `json:"message" jsonschema:"the text to echo back"`
	}
	echoOut struct {
		Echo string `json:"echo"`
	}
	sumIn struct {
		A float64 `json:"a" jsonschema:"first addend"`
		B float64 `json:"b" jsonschema:"second addend"`
	}
	sumOut struct {
		Sum float64 `json:"sum"`
	}
	searchIn struct {
		Query  string   `json:"query" jsonschema:"full-text query"`
		Labels []string `json:"labels,omitempty" jsonschema:"only issues with all of these labels"`
		Limit  int      `json:"limit,omitempty" jsonschema:"page size"`
		Closed *bool    `json:"closed,omitempty"`
	}
	attendee struct {
		Email    string `json:"email"`
		Optional bool   `json:"optional,omitempty"`
	}
	eventIn struct {
		Title string `json:"title"`
		When  struct {
			Start string `json:"start" jsonschema:"RFC 3339 start"`
			End   string `json:"end,omitempty"`
		} `json:"when"`
		Attendees []attendee `json:"attendees,omitempty"`
	}
	flagsIn struct {
		Flags map[string]bool `json:"flags" jsonschema:"feature flags to set"`
	}
	noIn struct{}
)

// Raw tools: the schema is sent as written (the SDK only checks that it is
// an object schema), so these exercise what typed inference never writes:
// enums, $defs/$ref, oneOf, bounds, patterns, formats, defaults, non-ASCII.
var goSDKRawTools = []struct {
	tool   mcp.Tool
	schema string
}{
	{mcp.Tool{Name: "delete_file", Description: "Delete a file or, with recursive, a directory tree.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}},
		`{"type":"object","properties":{"path":{"type":"string","minLength":1},"recursive":{"type":"boolean","default":false}},"required":["path"],"additionalProperties":false}`},
	{mcp.Tool{Name: "http_request", Title: "HTTP request", Description: "Send an HTTP request to an allow-listed host."},
		`{"type":"object","properties":{"method":{"type":"string","enum":["GET","POST","PUT","DELETE"]},"url":{"type":"string","format":"uri"},"headers":{"type":"object","additionalProperties":{"type":"string"}},"body":{"oneOf":[{"type":"string"},{"type":"object"}]}},"required":["method","url"]}`},
	{mcp.Tool{Name: "resize_image", Description: "Resize an image.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		`{"type":"object","$defs":{"dim":{"type":"integer","minimum":1,"maximum":10000}},"properties":{"width":{"$ref":"#/$defs/dim"},"height":{"$ref":"#/$defs/dim"},"format":{"type":"string","enum":["png","jpeg","webp"],"default":"png"},"quality":{"type":"number","exclusiveMinimum":0,"maximum":1}},"required":["width","height"]}`},
	{mcp.Tool{Name: "query_db", Description: "Run a read-only SQL query with positional parameters."},
		`{"type":"object","properties":{"sql":{"type":"string","maxLength":4096},"params":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"number"},{"type":"boolean"},{"type":"null"}]},"maxItems":100}},"required":["sql"]}`},
	{mcp.Tool{Name: goSDKChangedTool, Description: "Deploy a service to an environment.",
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"deployment_id":{"type":"string"},"status":{"type":"string","enum":["queued","running","done"]}},"required":["deployment_id"]}`)},
		`{"type":"object","properties":{"service":{"type":"string","pattern":"^[a-z][a-z0-9-]{0,62}$"},"environment":{"type":"string","enum":["dev","staging"]},"replicas":{"type":"integer","minimum":1,"default":1},"dry_run":{"type":"boolean"}},"required":["service","environment"]}`},
	// x-mcp-header (2026-07-28): the SDK server validates the annotation;
	// the go-sdk *client* would drop a tool whose annotation is invalid,
	// mcpdrift's client keeps whatever is served.
	{mcp.Tool{Name: "get_repo", Description: "Fetch repository metadata."},
		`{"type":"object","properties":{"owner":{"type":"string","x-mcp-header":"Owner"},"repo":{"type":"string"},"include_stats":{"type":"boolean","x-mcp-header":"Include-Stats"}},"required":["owner","repo"]}`},
	{mcp.Tool{Name: "translate", Title: "Übersetzen ☃", Description: "Translate text — e.g. « bonjour » → “hello”.\nSecond line."},
		`{"type":"object","properties":{"text":{"type":"string","description":"Text in any language: 日本語, Ελληνικά, emoji 🙂"},"to":{"type":"string","pattern":"^[a-z]{2}(-[A-Z]{2})?$"}},"required":["text","to"]}`},
}

// goSDKChangedSchema is deploy_service's schema in the changed variant: a
// new required parameter (callers of the pinned schema now fail) and a
// wider environment enum.
const goSDKChangedSchema = `{"type":"object","properties":{"service":{"type":"string","pattern":"^[a-z][a-z0-9-]{0,62}$"},"environment":{"type":"string","enum":["dev","staging","production"]},"replicas":{"type":"integer","minimum":1,"default":1},"dry_run":{"type":"boolean"},"approval_token":{"type":"string"}},"required":["service","environment","approval_token"]}`

var goSDKToolNames = []string{
	"echo", "add_numbers", "search_issues", "create_event", "set_flags", "server_time",
	"delete_file", "http_request", "resize_image", "query_db", goSDKChangedTool, "get_repo", "translate",
}

func ptr[T any](v T) *T { return &v }

// newGoSDKServer builds the official Go SDK peer: 13 tools, 6 typed and 7
// with raw schemas, paginated by 5 (3 pages).
func newGoSDKServer(variant string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpdrift-peer-gosdk", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: goSDKPageSize})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo a message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return nil, echoOut{Echo: in.Message}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add_numbers", Title: "Add", Description: "Add two numbers.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}},
		func(_ context.Context, _ *mcp.CallToolRequest, in sumIn) (*mcp.CallToolResult, sumOut, error) {
			return nil, sumOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "search_issues", Description: "Search the issue tracker."},
		func(context.Context, *mcp.CallToolRequest, searchIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "[]"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "create_event", Description: "Create a calendar event."},
		func(context.Context, *mcp.CallToolRequest, eventIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "set_flags", Description: "Set feature flags."},
		func(context.Context, *mcp.CallToolRequest, flagsIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "server_time", Description: "The server's clock.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: time.Now().UTC().Format(time.RFC3339)}}}, nil, nil
		})
	for _, rt := range goSDKRawTools {
		tool := rt.tool
		schema := rt.schema
		if variant == variantChanged && tool.Name == goSDKChangedTool {
			schema = goSDKChangedSchema
		}
		tool.InputSchema = json.RawMessage(schema)
		s.AddTool(&tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	}
	return s
}

// serveGoSDK serves a go-sdk peer over Streamable HTTP on loopback.
func serveGoSDK(t *testing.T, variant string, stateless bool) string {
	t.Helper()
	srv := newGoSDKServer(variant)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	return serveHTTP(t, h)
}

// TestGoSDKStreamableHTTP: the official Go SDK over Streamable HTTP, in
// both of its modes. Stateless serves 2026-07-28 (server/discover lists
// it); the default stateful handler lists only legacy revisions in
// server/discover, so the client falls back to initialize.
func TestGoSDKStreamableHTTP(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stateless bool
		era, rev  string
		legacy    string // LegacyVersion
		allowed   []string
	}{
		{"stateless", true, mcpclient.EraModern, mcpwire.Rev20260728, "", []string{ruleAnonymousList}},
		{"stateful", false, mcpclient.EraLegacy, "", "2025-11-25", []string{ruleAnonymousList, ruleLegacyServer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			defer func() { recordTiming("gosdk http "+tc.name+": whole test", time.Since(start)) }()
			label := "gosdk http " + tc.name
			url := serveGoSDK(t, "", tc.stateless)
			obs, tl := observe(t, label, mcpclient.Config{BaseURL: url})
			checkNames(t, label, tl, goSDKToolNames)
			checkEra(t, label, obs, tc.era, tc.rev, tc.legacy)
			if obs.Pages != 3 {
				t.Errorf("%s: %d pages, want 3 (%d tools, PageSize %d)", label, obs.Pages, len(goSDKToolNames), goSDKPageSize)
			}
			if tc.era == mcpclient.EraModern && (obs.TTLMs == nil || obs.CacheScope == "" || obs.MissingCacheFields) {
				t.Errorf("%s: cache fields ttlMs=%v cacheScope=%q missing=%v", label, ptrVal(obs.TTLMs), obs.CacheScope, obs.MissingCacheFields)
			}
			checkToolBytes(t, label, tl, "get_repo", `"x-mcp-header":"Owner"`)
			pinned := saveManifest(t, "gosdk", obs)
			checkClean(t, label, drift(t, label, pinned, "--url", url), len(goSDKToolNames), tc.allowed...)

			// The same tools from a server that changed one schema.
			changed := serveGoSDK(t, variantChanged, tc.stateless)
			checkSchemaDrift(t, label+" changed", drift(t, label+" changed", pinned, "--url", changed), goSDKChangedTool)
		})
	}
}

// TestGoSDKStdio: the go-sdk server on stdio — this test binary re-executed
// as the child — observed directly and through `mcpdrift drift --stdio`.
func TestGoSDKStdio(t *testing.T) {
	testStdioChild(t, "gosdk", goSDKToolNames, goSDKChangedTool, 3)
}

// testStdioChild runs the stdio checks against this binary serving kind.
func testStdioChild(t *testing.T, kind string, want []string, changedTool string, pages int) {
	start := time.Now()
	defer func() { recordTiming(kind+" stdio: whole test", time.Since(start)) }()
	label := kind + " stdio"
	exe := testExecutable(t)
	t.Setenv(envChild, kind)
	t.Setenv(envVariant, "")
	passEnv := []string{envChild, envVariant}
	obs, tl := observe(t, label, mcpclient.Config{Command: []string{exe}, PassEnv: passEnv})
	checkNames(t, label, tl, want)
	checkEra(t, label, obs, mcpclient.EraModern, mcpwire.Rev20260728, "")
	if obs.Pages != pages {
		t.Errorf("%s: %d pages, want %d", label, obs.Pages, pages)
	}
	pinned := saveManifest(t, kind, obs)
	args := []string{"--pass-env", envChild, "--pass-env", envVariant, "--stdio", "--", exe}
	d := drift(t, label, pinned, args...)
	checkClean(t, label, d, len(want))
	if d.rep.Target.Class != "stdio" || d.rep.AuthPosture.AnonymousProbe != "not_applicable" {
		t.Errorf("%s: target %+v, auth posture %+v", label, d.rep.Target, d.rep.AuthPosture)
	}

	t.Setenv(envVariant, variantChanged)
	checkSchemaDrift(t, label+" changed", drift(t, label+" changed", pinned, args...), changedTool)
}

// checkToolBytes reports unless the served bytes of tool contain want.
func checkToolBytes(t *testing.T, label string, tl *manifest.ToolList, tool, want string) {
	t.Helper()
	for _, tt := range tl.Tools {
		if tt.Name == tool {
			if !strings.Contains(string(tt.Raw()), want) {
				t.Errorf("%s: tool %s lacks %s: %s", label, tool, want, tt.Raw())
			}
			return
		}
	}
	t.Errorf("%s: tool %s not served", label, tool)
}

func checkEra(t *testing.T, label string, obs *mcpclient.Observation, era, rev, legacy string) {
	t.Helper()
	if obs.Era != era || obs.ProtocolRevision != rev || obs.LegacyVersion != legacy {
		t.Errorf("%s: era %q revision %q legacy version %q (%s), want %q %q %q", label, obs.Era, obs.ProtocolRevision, obs.LegacyVersion, obs.RevisionReason, era, rev, legacy)
	}
}
