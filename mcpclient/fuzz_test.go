package mcpclient

import (
	"bytes"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":""}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32022,"message":"m","data":{"supported":["a"],"requested":"b"}}}`,
		`{"jsonrpc":"2.0","error":{"code":-32700}}`, `{"jsonrpc":"2.0","method":"ping","id":3}`,
		`{"jsonrpc":"2.0","id":1e0,"result":{}}`, `[{}]`, ``, `{"jsonrpc":"2.0","id":1,"id":1,"result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := parseMessage(in)
		if err != nil {
			return
		}
		if _, perr := jcs.Parse(m.raw); perr != nil {
			t.Fatalf("accepted %q, which jcs rejects: %v", in, perr)
		}
		if !bytes.Contains(in, m.raw) {
			t.Fatal("raw is not the input")
		}
		switch m.kind {
		case kindResponse:
			if m.isErr == m.result.Valid() {
				t.Fatal("a response must have exactly one of result and error")
			}
			_ = m.answers(1)
			_ = m.protocolError("x", 0).Error()
			if m.result.Valid() && m.result.Kind() == jcs.Object {
				_, _, _ = checkPage(m.result, "tools")
				_ = checkResultType(m.result)
				_ = metaServerInfo(m.result)
			}
		case kindRequest, kindNotification:
			if m.method == "" && m.kind == kindRequest && !m.id.Valid() {
				t.Fatal("a request without id")
			}
		default:
			t.Fatalf("kind %d", m.kind)
		}
	})
}
