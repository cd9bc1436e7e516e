package frame

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// TestFromClientRefusesAmbiguity: messages that decoders in common use
// read differently are refused whole, with the reason.
func TestFromClientRefusesAmbiguity(t *testing.T) {
	call := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
	}
	cases := []struct {
		name, msg string
		code      int
		in        string // a word of the message
	}{
		{"a sibling Name", call(`{"name":"get_thing","arguments":{"id":"1"},"Name":"exec_shell"}`), mcpwire.CodeInvalidParams, `"Name"`},
		{"Method beside method", `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/call","params":{"name":"exec_shell"}}`, mcpwire.CodeInvalidRequest, `"Method"`},
		{"long s in params", `{"jsonrpc":"2.0","id":1,"method":"ping","param\u017f":{"name":"send_email"}}`, mcpwire.CodeInvalidRequest, `"params"`},
		{"PARAMS", `{"jsonrpc":"2.0","id":1,"method":"ping","PARAMS":{}}`, mcpwire.CodeInvalidRequest, `"PARAMS"`},
		{"ARGUMENTS", call(`{"name":"t","arguments":{"id":"1"},"ARGUMENTS":{"id":"1","evil":1}}`), mcpwire.CodeInvalidParams, `"ARGUMENTS"`},
		{"Kelvin in arguments", call(`{"name":"t","arguments":{"kind":"a","\u212Aind":"b"}}`), mcpwire.CodeInvalidParams, `/params/arguments`},
		{"deep in arguments", call(`{"name":"t","arguments":{"a":[{"x":{"path":"/tmp","PATH":"/etc"}}]}}`), mcpwire.CodeInvalidParams, `/params/arguments/a/0/x`},
		{"ID on a notification", `{"jsonrpc":"2.0","method":"notifications/initialized","ID":7}`, mcpwire.CodeInvalidRequest, `"ID"`},
		{"dotless i", `{"jsonrpc":"2.0","\u0131d":1,"method":"tools/call","params":{"name":"x"}}`, mcpwire.CodeInvalidRequest, `"id"`},
		{"a NUL-ended name", call(`{"name":"get_thing","name\u0000":"exec_shell"}`), mcpwire.CodeInvalidParams, `"name"`},
		{"a NUL-ended lone name", call(`{"name\u0000x":"exec_shell"}`), mcpwire.CodeInvalidParams, `"name"`},
		{"_META", call(`{"name":"t","_META":{}}`), mcpwire.CodeInvalidParams, `"_meta"`},
		{"meta key case", call(`{"name":"t","_meta":{"IO.MODELCONTEXTPROTOCOL/PROTOCOLVERSION":"2026-07-28"}}`), mcpwire.CodeInvalidParams, `/params/_meta`},
		{"method case", `{"jsonrpc":"2.0","id":1,"method":"Tools/Call","params":{"name":"x"}}`, mcpwire.CodeInvalidRequest, `"tools/call"`},
		{"method control", `{"jsonrpc":"2.0","id":1,"method":"tools/call\u0000","params":{"name":"x"}}`, mcpwire.CodeInvalidRequest, "printable"},
		{"method space", `{"jsonrpc":"2.0","id":1,"method":"tools/call ","params":{"name":"x"}}`, mcpwire.CodeInvalidRequest, "printable"},
		{"JSONRPC", `{"jsonrpc":"2.0","JSONRPC":"1.0","id":1,"method":"ping"}`, mcpwire.CodeInvalidRequest, `"JSONRPC"`},
		{"a response's Result", `{"jsonrpc":"2.0","id":1,"result":{},"Result":{"x":1}}`, mcpwire.CodeInvalidRequest, `"Result"`},
		{"__proto__ in arguments", call(`{"name":"t","arguments":{"__proto__":{"path":"/etc"}}}`), mcpwire.CodeInvalidParams, "prototype"},
		{"escaped __proto__", call(`{"name":"t","arguments":{"a":{"\u005f_proto__":{}}}}`), mcpwire.CodeInvalidParams, "/params/arguments/a"},
		{"many members", call(`{"name":"t","arguments":{` + manyMembers(40) + `,"M39":1}}`), mcpwire.CodeInvalidParams, `"m39"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, e := FromClient([]byte(c.msg))
			if e == nil {
				t.Fatalf("accepted: %s", c.msg)
			}
			if e.Code != c.code || e.Reason != ReasonAmbiguous || e.Status != 400 {
				t.Fatalf("code %d reason %q status %d, want %d %q 400: %s", e.Code, e.Reason, e.Status, c.code, ReasonAmbiguous, e.Message)
			}
			if !strings.Contains(e.Message, c.in) {
				t.Errorf("the message does not say %s: %s", c.in, e.Message)
			}
			if m == nil {
				t.Fatal("no message for the error's id")
			}
		})
	}
}

func manyMembers(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"m` + string(rune('0'+i/10)) + string(rune('0'+i%10)) + `":1`)
	}
	return b.String()
}

// TestFromClientKeepsPlainMessages: what real clients send is accepted.
func TestFromClientKeepsPlainMessages(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"get_thing","arguments":{"id":"1","Id2":"x","headers":{"Accept":"a","X-Api":"b"}},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"x-vendor/extension","params":{"Whatever":1}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"}]}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{"caf\u00e9":1,"cafe\u0301":2}}}`,
	} {
		if _, e := FromClient([]byte(msg)); e != nil {
			t.Errorf("refused %s: %s", msg, e.Message)
		}
	}
}
