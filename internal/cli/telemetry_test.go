package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
	"github.com/mcpdrift/mcpdrift/telemetry/otlptest"
)

// The OTLP header secret a test gives the exporter, and the MCP credential
// and argument values it sends: none may reach any byte mcpdrift writes
// (or, for the MCP values, any span).
const (
	otlpSecret   = "otlp-SECRET-header-value-99"
	mcpToken     = "mcp-SECRET-bearer-token-77"
	argumentText = "ARGUMENT-SECRET-VALUE-5"
)

func collector(t *testing.T, b otlptest.Behaviour) *otlptest.Collector {
	t.Helper()
	c := otlptest.New(b)
	t.Cleanup(c.Close)
	return c
}

type tracedFinding struct {
	RuleID  string `json:"rule_id"`
	Tool    string `json:"tool"`
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
}

func findingsOf(t *testing.T, out string) []tracedFinding {
	t.Helper()
	var r struct {
		Findings []tracedFinding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	return r.Findings
}

// noSecretIn fails when s holds any of the values.
func noSecretIn(t *testing.T, what string, b []byte, values ...string) {
	t.Helper()
	for _, v := range values {
		if bytes.Contains(b, []byte(v)) {
			t.Errorf("%s holds %q", what, v)
		}
	}
}

// everyFile returns each file under dir with its bytes.
func everyFile(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = b
		}
		return nil
	})
	return out
}

// TestDriftFindingsNameSpans: a traced drift exports one trace — the run,
// and one span per MCP request of every connection, with the listings'
// INTERNAL spans over their pages — and each finding's trace_id and
// span_id name the span it was read from: the primary listing for drift
// and conformance findings, the credential-stripped listing for the
// anonymous one. The OTLP header reaches the collector and no output; no
// MCP credential or argument reaches a span. Without export no id appears.
func TestDriftFindingsNameSpans(t *testing.T) {
	v1tools, _ := mockserver.LoadToolsFile(exampleV1)
	s, url := mock(t, mockserver.Config{PageSize: 2, RequireAuth: mcpToken, AnonymousTools: v1tools[:2]}, exampleV1)
	v2, _ := mockserver.LoadToolsFile(exampleV2)
	if err := s.SetTools(v2); err != nil {
		t.Fatal(err)
	}
	col := collector(t, otlptest.Accept)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20"+otlpSecret)
	t.Setenv("OTEL_SERVICE_NAME", "ci-drift")
	dir := t.TempDir()
	args := []string{"drift", exampleV1, "--url", url, "--header", "Authorization=Bearer " + mcpToken, "--format", "json",
		"--invoke-tool", "list_branches", "--execute", "--observed-out", filepath.Join(dir, "observed.json")}
	code, out, stderr := run(t, "", append(args, "--otlp-endpoint", col.URL(), "-o", filepath.Join(dir, "report.json"))...)
	if code != 1 || strings.Contains(stderr, "warning: OpenTelemetry") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.json"))
	findings := findingsOf(t, string(report))
	spans := col.Spans()
	byID := otlptest.ByID(spans)
	t.Logf("a traced drift (primary, second and credential-stripped connections, one tools/call, 3 pages each) exported %d spans", len(spans))
	var root otlptest.Span
	for _, sp := range spans {
		if sp.Name == "mcpdrift drift" {
			root = sp
		}
	}
	if root.SpanID == "" || root.ParentSpanID != "" || root.Kind != "INTERNAL" || root.Service != "ci-drift" {
		t.Fatalf("root span %+v", root)
	}
	conns := map[string]int{}
	for _, sp := range spans {
		if sp.TraceID != root.TraceID {
			t.Errorf("span %s is in another trace", sp.Name)
		}
		if sp.Kind == "CLIENT" {
			conns[sp.Attrs[mcptrace.KeyConnection]]++
		}
	}
	if conns["primary"] == 0 || conns["second"] == 0 || conns["anonymous"] == 0 {
		t.Errorf("CLIENT spans per connection %v", conns)
	}
	want := map[string]string{ // rule → the connection of the tools/list span it names
		"MCP-AUTH-ANONYMOUS-LIST": "anonymous", "MCP-DRIFT-TOOL-MISSING": "primary", "MCP-DRIFT-TOOL-UNDECLARED": "primary",
		"MCP-DRIFT-DESCRIPTION": "primary", "MCP-DRIFT-ANNOTATION": "primary", "MCP-DRIFT-SCHEMA-COMPATIBLE": "primary", "MCP-DRIFT-ESCALATION": "primary",
	}
	seen := map[string]bool{}
	for _, f := range findings {
		sp, ok := byID[f.SpanID]
		if !ok || sp.TraceID != f.TraceID {
			t.Errorf("%s %s names span %s/%s, which was not exported", f.RuleID, f.Tool, f.TraceID, f.SpanID)
			continue
		}
		if conn, ok := want[f.RuleID]; ok {
			seen[f.RuleID] = true
			if sp.Name != "tools/list" || sp.Kind != "INTERNAL" || sp.Attrs[mcptrace.KeyConnection] != conn {
				t.Errorf("%s %s names %+v, want the %s listing", f.RuleID, f.Tool, sp, conn)
			}
		}
	}
	for rule := range want {
		if !seen[rule] {
			t.Errorf("no %s finding (findings %+v)", rule, findings)
		}
	}
	// The listing span is the parent of its pages.
	pages := 0
	for _, sp := range spans {
		if sp.Kind == "CLIENT" && sp.Name == "tools/list" {
			if p := byID[sp.ParentSpanID]; p.Name != "tools/list" || p.Kind != "INTERNAL" {
				t.Errorf("page span %s has parent %+v", sp.SpanID, p)
			}
			pages++
		}
	}
	if pages < 6 {
		t.Errorf("%d page spans", pages)
	}
	// The exporter's header went to the collector, and nowhere else.
	if reqs := col.Requests(); len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer "+otlpSecret {
		t.Errorf("collector requests %d", len(reqs))
	}
	noSecretIn(t, "stdout", []byte(out), otlpSecret)
	noSecretIn(t, "stderr", []byte(stderr), otlpSecret)
	for p, b := range everyFile(t, dir) {
		noSecretIn(t, p, b, otlpSecret, mcpToken)
	}
	for _, b := range col.Bodies() {
		noSecretIn(t, "the export", b, mcpToken, otlpSecret, "Search issues", `"repo"`)
	}
	// The same run without export: the same exit, no ids at all.
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "")
	code2, out2, _ := run(t, "", args...)
	if code2 != code || strings.Contains(out2, "trace_id") || strings.Contains(out2, "span_id") {
		t.Errorf("untraced: exit %d, ids present %v", code2, strings.Contains(out2, "trace_id"))
	}
}

// TestDriftConnectionsNameSpans: the listings beside the primary one are
// traced with the run's tracer too, each under its own connection: a tool
// set that varies per connection names the second connection's listing,
// one that varies by client the cloak listing, and both are exported in
// the run's one trace.
func TestDriftConnectionsNameSpans(t *testing.T) {
	v1tools, _ := mockserver.LoadToolsFile(exampleV1)
	// The primary connection is the first (the others start once it has
	// read a page); every later one — second and cloak, in either order —
	// is served a shorter list.
	_, url := mock(t, mockserver.Config{PageSize: 2, ConnectionTools: map[int][]json.RawMessage{2: v1tools[:2], 3: v1tools[:2]}}, exampleV1)
	col := collector(t, otlptest.Accept)
	code, out, stderr := run(t, "", "drift", exampleV1, "--url", url, "--format", "json", "--cloak-check", "--otlp-endpoint", col.URL())
	if code != 1 || strings.Contains(stderr, "warning: OpenTelemetry") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	spans := col.Spans()
	byID := otlptest.ByID(spans)
	listings := map[string]int{}
	for _, sp := range spans {
		if sp.Kind == "INTERNAL" && sp.Name == "tools/list" {
			listings[sp.Attrs[mcptrace.KeyConnection]]++
		}
	}
	if listings["primary"] != 1 || listings["second"] != 1 || listings["cloak"] != 1 {
		t.Errorf("listing spans per connection %v", listings)
	}
	want := map[string]string{"MCP-CONF-TOOLSET-VARIES": "second", "MCP-CONF-TOOLSET-VARIES-BY-CLIENT": "cloak"}
	seen := map[string]bool{}
	for _, f := range findingsOf(t, out) {
		conn, ok := want[f.RuleID]
		if !ok {
			continue
		}
		seen[f.RuleID] = true
		sp, ok := byID[f.SpanID]
		if !ok || sp.TraceID != f.TraceID || sp.Name != "tools/list" || sp.Kind != "INTERNAL" || sp.Attrs[mcptrace.KeyConnection] != conn {
			t.Errorf("%s %s names %+v, want the %s listing", f.RuleID, f.Tool, sp, conn)
		}
	}
	for rule := range want {
		if !seen[rule] {
			t.Errorf("no %s finding: %s", rule, out)
		}
	}
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return "http://" + a
}

// TestDriftCollectorBroken: a collector that hangs, answers 500 or is not
// there never fails the run: the same exit code and report (without ids,
// which would name spans no backend has), exactly one warning on stderr,
// and at most 2 s added (measured against the same run untraced). The
// warning names the endpoint without its query, and neither the header
// secret nor the query's reaches any output.
func TestDriftCollectorBroken(t *testing.T) {
	_, url := mock(t, mockserver.Config{PageSize: 2}, exampleV2)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key="+otlpSecret)
	querySecret := "otlp-QUERY-secret-value-31"
	base := []string{"drift", exampleV1, "--url", url, "--format", "json"}
	start := time.Now()
	code0, out0, _ := run(t, "", base...)
	plain := time.Since(start)
	for _, c := range []struct {
		name string
		url  string
		want string
	}{
		{"hangs", collector(t, otlptest.Hang).URL(), "no answer within 1.8s"},
		{"500", collector(t, otlptest.Fail).URL(), "the collector answered HTTP 500"},
		{"dead", deadAddr(t), "cannot reach the collector"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			code, out, stderr := run(t, "", append(base, "--otlp-endpoint", c.url+"/?token="+querySecret)...)
			took := time.Since(start)
			noSecretIn(t, "the output", []byte(out+stderr), otlpSecret, querySecret)
			t.Logf("collector %s: drift took %v, %v more than untraced (%v)", c.name, took.Round(time.Millisecond), (took - plain).Round(time.Millisecond), plain.Round(time.Millisecond))
			if code != code0 {
				t.Errorf("exit %d, untraced %d", code, code0)
			}
			if n := strings.Count(stderr, "warning: OpenTelemetry"); n != 1 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "the report carries no trace ids") {
				t.Errorf("%d warnings: %s", n, stderr)
			}
			if strings.Contains(out, "trace_id") {
				t.Error("ids for spans that were not exported")
			}
			if !slices.Equal(rulesOf(t, out), rulesOf(t, out0)) {
				t.Errorf("findings differ: %v vs %v", rulesOf(t, out), rulesOf(t, out0))
			}
			// The bound is 2 s; the two runs' own spread is allowed 200 ms.
			if took-plain > 2200*time.Millisecond {
				t.Errorf("the collector added %v (bound 2 s)", took-plain)
			}
		})
	}
}

func rulesOf(t *testing.T, out string) []string {
	var r []string
	for _, f := range findingsOf(t, out) {
		r = append(r, f.RuleID+" "+f.Tool)
	}
	return r
}

// TestOTLPEndpointUsage: an endpoint that is not an http(s) URL — on the
// flag or in OTEL_EXPORTER_OTLP_ENDPOINT — is a usage error (exit 2) with a
// message naming it, before any MCP request, for every command that has
// the flag.
func TestOTLPEndpointUsage(t *testing.T) {
	s, url := mock(t, mockserver.Config{}, exampleV1)
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	if code, _, stderr := run(t, "", "lock", "add", "one", "--lock", lp, "--url", url, "--by", "a@example.com"); code != 0 {
		t.Fatalf("lock add: %d %s", code, stderr)
	}
	cmds := map[string][]string{
		"drift":      {"drift", exampleV1, "--url", url},
		"pin":        {"pin", "--url", url, "--server-id", "x", "-o", filepath.Join(dir, "d.json")},
		"proxy":      {"proxy", "--upstream-url", url, "--listen", "127.0.0.1:0"},
		"lock check": {"lock", "check", "--lock", lp},
		"scan":       {"scan", "--url", url, "--no-store"},
		"watch":      {"watch", "--url", url},
	}
	for name, args := range cmds {
		for _, bad := range []string{"not a url", "127.0.0.1:4318", "ftp://collector:21", "", "http://user:" + otlpSecret + "@h:4318", "http://h:4318/#x"} {
			before := s.LogTotal()
			code, out, stderr := run(t, "", append(args, "--otlp-endpoint", bad)...)
			if code != 2 || !strings.Contains(stderr, "--otlp-endpoint") || strings.Contains(stderr, "panic") {
				t.Errorf("%s --otlp-endpoint %q: exit %d: %s", name, bad, code, stderr)
			}
			noSecretIn(t, "stderr", []byte(stderr+out), otlpSecret)
			if s.LogTotal() != before {
				t.Errorf("%s --otlp-endpoint %q: a request reached the server", name, bad)
			}
		}
		t.Run(name+" env", func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "::not-a-url")
			if code, _, stderr := run(t, "", args...); code != 2 || !strings.Contains(stderr, "OTEL_EXPORTER_OTLP_ENDPOINT is not a URL") {
				t.Errorf("exit %d: %s", code, stderr)
			}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "no-equals-"+otlpSecret)
			code, _, stderr := run(t, "", append(args, "--otlp-endpoint", "http://127.0.0.1:1")...)
			if code != 2 || !strings.Contains(stderr, "OTEL_EXPORTER_OTLP_HEADERS") {
				t.Errorf("bad headers: exit %d: %s", code, stderr)
			}
			noSecretIn(t, "stderr", []byte(stderr), otlpSecret)
		})
		if _, out, _ := run(t, "", append(strings.Fields(name), "--help")...); !strings.Contains(out, "--otlp-endpoint") {
			t.Errorf("%s --help has no --otlp-endpoint", name)
		}
	}
}

// TestPinTraced: a traced live pin writes the same baseline as an
// untraced one, and exports its requests under one root span.
func TestPinTraced(t *testing.T) {
	_, url := mock(t, mockserver.Config{PageSize: 2}, exampleV1)
	col := collector(t, otlptest.Accept)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if code, _, stderr := run(t, "", "pin", "--url", url, "--server-id", "acme", "-o", a, "--otlp-endpoint", col.URL()); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "", "pin", "--url", url, "--server-id", "acme", "-o", b); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Error("tracing changed the baseline")
	}
	names := map[string]int{}
	for _, sp := range col.Spans() {
		names[sp.Kind+" "+sp.Name]++
	}
	if names["INTERNAL mcpdrift pin"] != 1 || names["INTERNAL tools/list"] != 1 || names["CLIENT tools/list"] != 3 || names["CLIENT server/discover"] != 1 {
		t.Errorf("spans %v", names)
	}
	// A pin that makes no request exports nothing.
	if code, _, _ := run(t, "", "pin", "--input", exampleV1, "--server-id", "acme", "-o", filepath.Join(dir, "c.json"), "--otlp-endpoint", col.URL()); code != 0 || len(col.Requests()) != 1 {
		t.Errorf("pin --input: exit %d, %d exports", code, len(col.Requests()))
	}
}

// TestProxyTraced: the gateway command exports SERVER and CLIENT spans;
// no argument value reaches a span, stderr, the decision log or the
// observed record, and the OTLP header secret no output.
func TestProxyTraced(t *testing.T) {
	_, up := mock(t, mockserver.Config{PageSize: 2}, exampleV1)
	col := collector(t, otlptest.Accept)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key="+otlpSecret)
	dir := t.TempDir()
	decl := filepath.Join(dir, "d.json")
	if code, _, stderr := run(t, "", "pin", "--url", up, "--server-id", "acme", "-o", decl); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	url, _, stop := runProxy(t, "--declared", decl, "--upstream-url", up, "--listen", "127.0.0.1:0", "--otlp-endpoint", col.URL(),
		"--decision-log", filepath.Join(dir, "log.ndjson"), "--observed-out", filepath.Join(dir, "observed.json"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: url, Calls: []mcpclient.ToolCall{
		{Name: "search_issues", Arguments: json.RawMessage(`{"repo":"a/b","query":"` + argumentText + `"}`)},
		{Name: "list_branches", Arguments: json.RawMessage(`{"repo":"a/b","extra":"` + argumentText + `"}`)},
	}})
	if err != nil || len(obs.Calls) != 2 {
		t.Fatalf("through the gateway: %v", err)
	}
	code, stderr := stop()
	if code != 0 || strings.Contains(stderr, "warning") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	kinds := map[string]int{}
	for _, sp := range col.Spans() {
		kinds[sp.Kind+" "+sp.Name]++
	}
	if kinds["SERVER tools/call search_issues"] != 1 || kinds["CLIENT tools/call search_issues"] != 1 || kinds["SERVER tools/list"] == 0 || kinds["CLIENT tools/list"] == 0 {
		t.Errorf("spans %v", kinds)
	}
	for _, b := range col.Bodies() {
		noSecretIn(t, "the export", b, argumentText, otlpSecret)
	}
	noSecretIn(t, "stderr", []byte(stderr), argumentText, otlpSecret)
	for p, b := range everyFile(t, dir) {
		noSecretIn(t, p, b, argumentText, otlpSecret)
	}
}

// TestLockCheckTraced: lock check traces through the same registration:
// one trace under "mcpdrift lock check", one listing span per server with
// its pages, the OTLP header secret in no output, and the same exit and
// report as an untraced check.
func TestLockCheckTraced(t *testing.T) {
	_, a := mock(t, mockserver.Config{PageSize: 2}, exampleV1)
	sb, b := mock(t, mockserver.Config{PageSize: 2}, exampleV1)
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	for name, u := range map[string]string{"a": a, "b": b} {
		if code, _, stderr := run(t, "", "lock", "add", name, "--lock", lp, "--url", u, "--by", "a@example.com"); code != 0 {
			t.Fatalf("lock add %s: %d %s", name, code, stderr)
		}
	}
	v2, _ := mockserver.LoadToolsFile(exampleV2)
	if err := sb.SetTools(v2); err != nil {
		t.Fatal(err)
	}
	col := collector(t, otlptest.Accept)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key="+otlpSecret)
	args := []string{"lock", "check", "--lock", lp, "--format", "json"}
	code0, out0, _ := run(t, "", args...)
	code, out, stderr := run(t, "", append(args, "--otlp-endpoint", col.URL())...)
	if code != code0 || code != 1 || strings.Contains(stderr, "warning") {
		t.Fatalf("exit %d (untraced %d): %s", code, code0, stderr)
	}
	if out != out0 {
		t.Errorf("tracing changed the report:\n%s\nuntraced:\n%s", out, out0)
	}
	spans := col.Spans()
	byID := otlptest.ByID(spans)
	var root otlptest.Span
	listings := map[string]int{}
	for _, sp := range spans {
		switch {
		case sp.Name == "mcpdrift lock check":
			root = sp
		case sp.Kind == "INTERNAL" && sp.Name == "tools/list":
			listings[sp.Attrs[mcptrace.KeyServerPort]]++
		}
	}
	if root.SpanID == "" || root.ParentSpanID != "" {
		t.Fatalf("root %+v", root)
	}
	if len(listings) != 2 {
		t.Errorf("listing spans by server port %v, want one per server", listings)
	}
	for _, sp := range spans {
		if sp.TraceID != root.TraceID {
			t.Errorf("span %s in another trace", sp.Name)
		}
		if sp.Kind == "CLIENT" && sp.Name == "tools/list" {
			if p := byID[sp.ParentSpanID]; p.Name != "tools/list" || p.Kind != "INTERNAL" {
				t.Errorf("page span's parent %+v", p)
			}
		}
	}
	noSecretIn(t, "the output", []byte(out+stderr), otlpSecret)
}

// TestScanTraced: a traced scan exports one root span and each server's
// listing under it, for a list of URLs and for a lock (through lock
// check's per-server check).
func TestScanTraced(t *testing.T) {
	_, u1 := mock(t, mockserver.Config{PageSize: 2}, exampleV1)
	_, u2 := mock(t, mockserver.Config{}, exampleV1)
	col := collector(t, otlptest.Accept)
	if code, _, stderr := run(t, "", "scan", "--url", u1, "--url", u2, "--no-store", "--otlp-endpoint", col.URL()); code != 0 {
		t.Fatalf("scan: %d %s", code, stderr)
	}
	names := map[string]int{}
	for _, sp := range col.Spans() {
		names[sp.Kind+" "+sp.Name]++
	}
	if names["INTERNAL mcpdrift scan"] != 1 || names["INTERNAL tools/list"] != 2 || names["CLIENT tools/list"] != 4 {
		t.Errorf("scan spans %v", names)
	}
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	if code, _, stderr := run(t, "", "lock", "add", "one", "--lock", lp, "--url", u1, "--by", "a@example.com"); code != 0 {
		t.Fatalf("lock add: %d %s", code, stderr)
	}
	col2 := collector(t, otlptest.Accept)
	if code, _, stderr := run(t, "", "scan", "--lock", lp, "--no-store", "--otlp-endpoint", col2.URL()); code != 0 {
		t.Fatalf("scan --lock: %d %s", code, stderr)
	}
	names = map[string]int{}
	for _, sp := range col2.Spans() {
		names[sp.Kind+" "+sp.Name]++
	}
	if names["INTERNAL mcpdrift scan"] != 1 || names["INTERNAL tools/list"] != 1 || names["CLIENT tools/list"] != 3 {
		t.Errorf("scan --lock spans %v", names)
	}
}

// TestOTLPCertificateRefused: a certificate variable naming a file that
// cannot be used is exit 2 before any MCP request, naming the variable
// and the path, never the file's contents; on every command that exports.
func TestOTLPCertificateRefused(t *testing.T) {
	s, url := mock(t, mockserver.Config{}, exampleV1)
	dir := t.TempDir()
	bad := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(bad, []byte("no certificate here: FILE-CONTENT-MARK-13\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env, path, want string
	}{
		{"OTEL_EXPORTER_OTLP_CERTIFICATE", bad, "holds no PEM certificate"},
		{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", filepath.Join(dir, "missing.pem"), "cannot be read"},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(c.env, c.path)
			for _, args := range [][]string{
				{"drift", exampleV1, "--url", url},
				{"pin", "--url", url, "--server-id", "x", "-o", filepath.Join(dir, "pin.json")},
			} {
				before := s.LogTotal()
				code, out, stderr := run(t, "", append(args, "--otlp-endpoint", "https://127.0.0.1:4318")...)
				if code != 2 || !strings.Contains(stderr, c.env) || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, c.path) {
					t.Errorf("%s: exit %d, stderr %s", args[0], code, stderr)
				}
				noSecretIn(t, args[0]+"'s output", []byte(out+stderr), "FILE-CONTENT-MARK-13")
				if n := s.LogTotal() - before; n != 0 {
					t.Errorf("%s: %d MCP request(s) before the refusal", args[0], n)
				}
			}
		})
	}
}

// TestOTLPGRPCRefused: an environment that configures a gRPC export is
// exit 2 before any MCP request, on every command that exports (the
// exporter would send OTLP/HTTP to the gRPC port without a word, and
// every export would fail); with --otlp-endpoint, which asks for
// OTLP/HTTP, the variable is overridden.
func TestOTLPGRPCRefused(t *testing.T) {
	s, url := mock(t, mockserver.Config{}, exampleV1)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"drift", exampleV1, "--url", url},
		{"pin", "--url", url, "--server-id", "x", "-o", filepath.Join(dir, "pin.json")},
	} {
		before := s.LogTotal()
		code, _, stderr := run(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "OTEL_EXPORTER_OTLP_PROTOCOL is grpc") {
			t.Errorf("%s: exit %d, stderr %s", args[0], code, stderr)
		}
		if n := s.LogTotal() - before; n != 0 {
			t.Errorf("%s: %d MCP request(s) before the refusal", args[0], n)
		}
	}
	col := collector(t, otlptest.Accept)
	code, _, stderr := run(t, "", "drift", exampleV1, "--url", url, "--otlp-endpoint", col.URL())
	if code == 2 || strings.Contains(stderr, "warning: OpenTelemetry") || col.Received() == 0 {
		t.Errorf("with the flag: exit %d, %d spans received, stderr %s", code, col.Received(), stderr)
	}
}
