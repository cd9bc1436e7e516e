package mcpclient

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data:a\r\n\r\n", "id: 1\ndata: \n\n: c\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\"}\n\n",
		"data: x\rdata: y\r\r", "\r\n\r\n", "data", ":", "data: " + string(make([]byte, 70)) + "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const maxBytes, maxLine, maxEvents = 256, 64, 8
		sr := newSSEReader(bytes.NewReader(in), "m", maxBytes, maxLine, maxEvents)
		total := 0
		for n := 0; ; n++ {
			ev, err := sr.next()
			if err != nil {
				var le *LimitError
				if err != io.EOF && !errors.As(err, &le) {
					t.Fatalf("unexpected error %v", err)
				}
				if err == io.EOF && sr.n > maxBytes {
					t.Fatalf("consumed %d bytes without a limit error", sr.n)
				}
				break
			}
			if n >= maxEvents {
				t.Fatalf("more than %d events", maxEvents)
			}
			total += len(ev.data)
			if total > maxBytes {
				t.Fatalf("%d bytes of data from a %d-byte bound", total, maxBytes)
			}
			if !bytes.Contains(in, ev.data) && !bytes.Contains(ev.data, []byte("\n")) {
				t.Fatalf("data %q is not from the input", ev.data)
			}
		}
	})
}

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
				_, _, _ = checkToolsPage(m.result)
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
