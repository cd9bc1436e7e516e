package discover

import (
	"strings"
	"testing"
)

func TestCleanArgs(t *testing.T) {
	R := "[REDACTED]"
	cases := []struct {
		in, want []string
	}{
		{[]string{"-y", "@modelcontextprotocol/server-filesystem", "/home/a"}, nil},
		{[]string{"--api-key", "k-123"}, []string{"--api-key", R}},
		{[]string{"--api-key=k-123", "--tools=all"}, []string{"--api-key=" + R, "--tools=all"}},
		{[]string{"--token", "--verbose"}, nil}, // a flag after a secret flag is no value
		{[]string{"--access-token", "t"}, []string{"--access-token", R}},
		{[]string{"--password", "p", "--pwd", "q", "--gh-pat", "r"}, []string{"--password", R, "--pwd", R, "--gh-pat", R}},
		{[]string{"mcp-remote", "https://h/sse", "--header", "Authorization: Bearer abc"}, []string{"mcp-remote", "https://h/sse", "--header", "Authorization: " + R}},
		{[]string{"-H", "X-Key:v", "--header=A: b"}, []string{"-H", "X-Key: " + R, "--header=A: " + R}},
		{[]string{"run", "-e", "TOKEN=v", "-e", "PASSTHROUGH", "--env=K=v"}, []string{"run", "-e", "TOKEN=" + R, "-e", "PASSTHROUGH", "--env=K=" + R}},
		{[]string{"https://u:p@h/mcp?key=v&x=1"}, []string{"https://h/mcp?key=&x="}},
		{[]string{"postgresql://app:pw@db:5432/app"}, []string{"postgresql://db:5432/app"}},
		{[]string{"--url=https://h/mcp?token=t"}, []string{"--url=https://h/mcp?token="}},
		{[]string{"API_KEY=v", "MODE=fast", "DB=postgres://u:p@h/d"}, []string{"API_KEY=" + R, "MODE=fast", "DB=postgres://h/d"}},
		{[]string{"ghp_0123456789abcdefghij", "sk-proj-abcdefghijklmnop", "Bearer abc", "eyJhbGciOiJIUzI1NiJ9.e30.x"}, []string{R, R, R, R}},
		{[]string{"sk-short"}, nil}, // too short to be a key
		{[]string{"--keyboard-layout", "us"}, []string{"--keyboard-layout", R}}, // a false positive, on the safe side
	}
	for _, c := range cases {
		got, changed := cleanArgs(c.in)
		want := c.want
		if want == nil {
			want = c.in
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || changed != (c.want != nil) {
			t.Errorf("cleanArgs(%q) = %q, %v; want %q", c.in, got, changed, want)
		}
	}
	if got, changed := cleanArgs(nil); got != nil || changed {
		t.Errorf("nil: %q %v", got, changed)
	}
}

func TestCleanURL(t *testing.T) {
	for _, c := range []struct {
		in, want string
		changed  bool
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"${env:MCP_URL}", "${env:MCP_URL}", false}, // a placeholder is kept as written
		{"http://localhost:8080/sse", "http://localhost:8080/sse", false},
		{"https://user:pass@h/mcp", "https://h/mcp", true},
		{"https://h/mcp?api_key=v&profile=free", "https://h/mcp?api_key=&profile=", true},
		{"https://h/mcp#frag", "https://h/mcp", true},
		{"#only", "(a URL with nothing but a fragment)", true},
		{"http://[::1:bad@x?y", "(an unparsable URL)", true},
		{"https://mcp.example.com/mcp/sk-ak-Q7w2E9r4T1y8U3i6O5p0/sse", "https://mcp.example.com/mcp/[REDACTED]/sse", true},
		{"https://h/api/mcp/s/550e8400-e29b-41d4-a716-446655440000/mcp", "https://h/api/mcp/s/[REDACTED]/mcp", true},
	} {
		got, changed := cleanURL(c.in)
		if got != c.want || changed != c.changed {
			t.Errorf("cleanURL(%q) = %q, %v; want %q, %v", c.in, got, changed, c.want, c.changed)
		}
	}
}

func TestStripJSONC(t *testing.T) {
	for in, want := range map[string]string{
		"{\"a\": 1, // c\n}":    "{\"a\": 1      \n}",
		"[1, /* x\ny */ 2,]":    "[1,     \n     2 ]",
		"//\r{}":                "  \r{}",
		"\xEF\xBB\xBF{}":        "   {}",
		`{"u": "http://h//x",}`: `{"u": "http://h//x" }`,
		`{"s": "a\"//b"}`:       `{"s": "a\"//b"}`,
		"[,]":                   "[,]",
		"[1,,]":                 "[1,,]",
	} {
		got, err := StripJSONC([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("StripJSONC(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"{} /* open", "{} // \xff", "/* \xfe */ {}"} {
		if _, err := StripJSONC([]byte(in)); err == nil {
			t.Errorf("StripJSONC(%q) accepted", in)
		}
	}
}

// ReadInventory refuses what the schema refuses, naming the file and
// the pointer.
func TestReadInventoryRefuses(t *testing.T) {
	srv := func(extra string) string {
		return `{"schema":"mcpdrift.inventory.v1","servers":[{"client":"cursor","file":"f","scope":"user","name":"n","env_names":[],"header_names":[],` + extra + `}],"errors":[]}`
	}
	for _, c := range []struct{ name, doc, want string }{
		{"duplicate key", `{"schema":"mcpdrift.inventory.v1","schema":"x","servers":[],"errors":[]}`, "duplicate"},
		{"other schema", `{"schema":"mcpdrift.lock.v1","servers":[],"errors":[]}`, "/schema"},
		{"no errors member", `{"schema":"mcpdrift.inventory.v1","servers":[]}`, "errors"},
		{"stdio without command", srv(`"transport":"stdio"`), "/servers/0"},
		{"stdio with url", srv(`"transport":"stdio","command":"x","url":"https://h"`), "/servers/0"},
		{"http without url", srv(`"transport":"streamable-http"`), "/servers/0"},
		{"http with command", srv(`"transport":"sse","url":"https://h","command":"x"`), "/servers/0"},
		{"unknown transport", srv(`"transport":"websocket","url":"wss://h"`), "/servers/0/transport"},
		{"unknown member", srv(`"transport":"unknown","env":{"K":"v"}`), "/servers/0"},
		{"repeated env name", `{"schema":"mcpdrift.inventory.v1","servers":[{"client":"cursor","file":"f","scope":"user","name":"n","transport":"unknown","env_names":["A","A"],"header_names":[]}],"errors":[]}`, "env_names"},
		{"bad scope", `{"schema":"mcpdrift.inventory.v1","servers":[{"client":"cursor","file":"f","scope":"global","name":"n","transport":"unknown","env_names":[],"header_names":[]}],"errors":[]}`, "/servers/0/scope"},
		{"empty reason", `{"schema":"mcpdrift.inventory.v1","servers":[],"errors":[{"file":"f","reason":""}]}`, "/errors/0/reason"},
		{"not JSON", `{"schema":`, "f.json"},
	} {
		_, err := ReadInventory([]byte(c.doc), "f.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "f.json: ") {
			t.Errorf("%s: %v (want %q)", c.name, err, c.want)
		}
	}
	ok := srv(`"transport":"unknown"`)
	if inv, err := ReadInventory([]byte(ok), "f.json"); err != nil || len(inv.Servers) != 1 || inv.Servers[0].Transport != TransportUnknown {
		t.Errorf("a valid inventory: %+v %v", inv, err)
	}
}

// A command written with its arguments in one string is cleaned as args
// are; the env and header values of an entry are never in its Server.
func TestToServer(t *testing.T) {
	e := &Entry{Name: "n", Command: "npx -y server --token s3cr3t-in-command", Transport: TransportStdio, Env: map[string]string{"B": "s3cr3t-b", "A": "s3cr3t-a"}, EnvPass: []string{"C", "A"}}
	s := toServer(ClientClaudeDesktop, "f", ScopeUser, "", e)
	if s.Command != "npx -y server --token [REDACTED]" || !s.Redacted || strings.Join(s.EnvNames, ",") != "A,B,C" {
		t.Errorf("%+v", s)
	}
	e = &Entry{Name: "n", URL: "https://h/mcp", Transport: TransportUnknown, Headers: map[string]string{"X-Key": "s3cr3t-h"}, HeadersFromEnv: map[string]string{"Authorization": "TOKEN_VAR"}}
	s = toServer(ClientCursor, "f", ScopeUser, "", e)
	js, _ := (&Inventory{Schema: Schema, Servers: []Server{s}}).Marshal()
	if s.Redacted || strings.Join(s.HeaderNames, ",") != "Authorization,X-Key" || strings.Contains(string(js), "s3cr3t") || strings.Contains(string(js), "TOKEN_VAR") {
		t.Errorf("%s", js)
	}
}
