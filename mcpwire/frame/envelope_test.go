package frame

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// sameBytes reports whether sub is the span of in at off: the same memory,
// not a copy.
func sameBytes(in []byte, v jcs.Value) bool {
	if !v.Valid() {
		return true
	}
	raw := v.Raw()
	off := v.Offset()
	return len(raw) > 0 && off+len(raw) <= len(in) && &in[off] == &raw[0]
}

func TestFromServer(t *testing.T) {
	good := map[string]Kind{
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                     Response,
		` {"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"x"}}` + "\n": ErrorResponse,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`:                      ErrorResponse,
		`{"jsonrpc":"2.0","error":{"code":-32700,"message":"p"}}`:                  ErrorResponse,
		`{"jsonrpc":"2.0","error":{"code":-3.27e4}}`:                               ErrorResponse,
		`{"jsonrpc":"2.0","method":"notifications/x"}`:                             Notification,
		`{"jsonrpc":"2.0","id":null,"method":"notifications/x"}`:                   Notification,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`:                                 Request,
		`{"jsonrpc":"2.0","id":7,"method":""}`:                                     Request,
		`{"jsonrpc":"2.0","id":1.5,"method":"x","params":[1]}`:                     Request,
	}
	for in, kind := range good {
		m, err := FromServer([]byte(in))
		if err != nil || m.Kind != kind {
			t.Errorf("%s: %v %v", in, m, err)
			continue
		}
		if string(m.Raw) != strings.TrimSpace(in) {
			t.Errorf("raw %q", m.Raw)
		}
	}
	bad := map[string]string{
		``:                                     "an empty body",
		" \r\n":                                "an empty body",
		`null`:                                 "a JSON null where",
		`[]`:                                   "a batch",
		`[`:                                    "a batch",
		`"x"`:                                  "a JSON string where",
		`{"jsonrpc":"1.0","id":1,"result":{}}`: `"jsonrpc" is not "2.0"`,
		`{"id":1,"result":{}}`:                 `"jsonrpc" is not "2.0"`,
		`{"jsonrpc":"2.0","id":1}`:             "neither",
		`{"jsonrpc":"2.0","result":{}}`:        "a result without an id",
		`{"jsonrpc":"2.0","id":null,"result":{}}`:                     "a result without an id",
		`{"jsonrpc":"2.0","id":{},"result":{}}`:                       "the message id is a JSON object",
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1}}`:     "both",
		`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`: "numeric code",
		`{"jsonrpc":"2.0","id":1,"error":{"code":1.5}}`:               "32-bit",
		`{"jsonrpc":"2.0","id":1,"error":{"code":2147483648}}`:        "32-bit",
		`{"jsonrpc":"2.0","id":1,"error":"x"}`:                        `"error" is not an object`,
		`{"jsonrpc":"2.0","method":1}`:                                "method is not a string",
		"\ufeff{}":                                                    "not strict JSON",
		`{"jsonrpc":"2.0","id":1,"result":"\ud800"}`:                  "not strict JSON",
		`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`:                 "not strict JSON",
		`{"jsonrpc":"2.0","id":1,"result":{}} x`:                      "not strict JSON",
		`{"jsonrpc":"2.0","id":1,"result":"` + "\x1b[31m" + `"}`:      `not strict JSON`,
		`{"jsonrpc":"2.0","id":1,"result":{"a\u0000":1,"a\u0000":2}}`: "not strict JSON",
	}
	for in, want := range bad {
		m, err := FromServer([]byte(in))
		if err == nil {
			t.Errorf("%q: accepted as %+v", in, m)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %q, want %q", in, err, want)
		}
		if strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("%q: unescaped error %q", in, err)
		}
	}
	in := []byte(`{"jsonrpc":"2.0","id":"\u0041","error":{"code":-32022,"message":"no","data":{"supported":["a"]}}}`)
	m, err := FromServer(in)
	if err != nil || m.Code != -32022 || m.ErrorMessage() != "no" || string(m.ErrorData().Raw()) != `{"supported":["a"]}` || string(m.IDRaw()) != `"\u0041"` {
		t.Fatalf("%+v %v", m, err)
	}
	if !sameBytes(in, m.ID) || !sameBytes(in, m.Error) {
		t.Error("the id or error is a copy, not a span of the message")
	}
	m, _ = FromServer([]byte(`{"jsonrpc":"2.0","id":1.0,"result":{}}`))
	if n, ok := m.IDInt(); !ok || n != 1 || string(m.IDRaw()) != "1.0" {
		t.Errorf("id 1.0: %d %v %q", n, ok, m.IDRaw())
	}
	m, _ = FromServer([]byte(`{"jsonrpc":"2.0","id":"1","result":{}}`))
	if _, ok := m.IDInt(); ok {
		t.Error(`"1" is an integer id`)
	}
}

func TestFromClient(t *testing.T) {
	type want struct {
		code   int
		msg    string
		kind   Kind
		id     string // the id kept for the answer
		method string
		nilMsg bool
	}
	cases := map[string]want{
		`{not json`: {code: -32700, msg: "Parse error: ", nilMsg: true},
		``:          {code: -32700, msg: "Parse error: ", nilMsg: true},
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`: {code: -32600, msg: "batches are not accepted", nilMsg: true},
		`[1`:  {code: -32700, nilMsg: true},
		`"x"`: {code: -32600, msg: "must be an object", nilMsg: true},
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`:                           {code: -32600, msg: "id must not be null"},
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`:                            {code: -32600, msg: "id must be a string or an integer"},
		`{"jsonrpc":"2.0","id":1e0,"method":"ping"}`:                            {code: -32600, msg: "id must be a string or an integer"},
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`:                           {code: -32600, msg: "id must be a string or an integer"},
		`{"jsonrpc":"1.0","id":null,"method":"ping"}`:                           {code: -32600, msg: "id must not be null"}, // the id is checked first
		`{"jsonrpc":"1.0","id":7,"method":"ping"}`:                              {code: -32600, msg: `"jsonrpc" must be "2.0"`, id: "7"},
		`{"id":"a","method":"ping"}`:                                            {code: -32600, msg: `"jsonrpc" must be "2.0"`, id: `"a"`},
		`{"jsonrpc":"2.0","id":7,"method":""}`:                                  {code: -32600, msg: "non-empty string", id: "7"},
		`{"jsonrpc":"2.0","id":7,"method":3}`:                                   {code: -32600, msg: "non-empty string", id: "7"},
		`{"jsonrpc":"2.0","method":"x","result":{}}`:                            {code: -32600, msg: "both a request and a response", kind: Notification, method: "x"},
		`{"jsonrpc":"2.0","id":2,"method":"x","error":1}`:                       {code: -32600, msg: "both a request and a response", kind: Request, id: "2", method: "x"},
		`{"jsonrpc":"2.0","id":7}`:                                              {code: -32600, msg: "no method, result or error", id: "7"},
		`{"jsonrpc":"2.0","id":7,"result":{},"error":{}}`:                       {code: -32600, msg: "exactly one of result and error", id: "7"},
		`{"jsonrpc":"2.0","result":{}}`:                                         {code: -32600, msg: "a response needs an id"},
		`{"jsonrpc":"2.0","id":7,"method":"x","params":[1]}`:                    {code: -32602, msg: "MCP params must be an object", kind: Request, id: "7", method: "x"},
		`{"jsonrpc":"2.0","method":"x","params":"s"}`:                           {code: -32600, msg: "params must be a structured value", kind: Notification, method: "x"},
		`{"jsonrpc":"2.0","id":-12,"method":"tools/list","params":{}}`:          {kind: Request, id: "-12", method: "tools/list"},
		`{"jsonrpc":"2.0","id":"s","method":"ping"}`:                            {kind: Request, id: `"s"`, method: "ping"},
		` {"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n":        {kind: Notification, method: "notifications/initialized"},
		`{"jsonrpc":"2.0","id":"mock-1","result":{}}`:                           {kind: Response, id: `"mock-1"`},
		`{"jsonrpc":"2.0","id":"mock-1","error":{"code":-32601,"message":"m"}}`: {kind: ErrorResponse, id: `"mock-1"`},
		`{"jsonrpc":"2.0","id":"mock-1","error":"not an object"}`:               {kind: ErrorResponse, id: `"mock-1"`},
	}
	for in, w := range cases {
		m, e := FromClient([]byte(in))
		if w.code == 0 {
			if e != nil {
				t.Errorf("%s: refused: %v", in, e)
				continue
			}
		} else if e == nil || e.Code != w.code || !strings.Contains(e.Message, w.msg) || e.Status != http.StatusBadRequest {
			t.Errorf("%s: got %+v, want %d %q", in, e, w.code, w.msg)
			continue
		}
		if (m == nil) != w.nilMsg {
			t.Errorf("%s: message %v", in, m)
			continue
		}
		if m == nil {
			continue
		}
		if m.Kind != w.kind || string(m.IDRaw()) != w.id || m.Method != w.method {
			t.Errorf("%s: kind %v id %q method %q, want %v %q %q", in, m.Kind, m.IDRaw(), m.Method, w.kind, w.id, w.method)
		}
	}
	in := []byte(`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"m"}}`)
	if m, e := FromClient(in); e != nil || m.Code != -32601 || !sameBytes(in, m.Error) {
		t.Errorf("error response %+v %v", m, e)
	}
}

func TestParse(t *testing.T) {
	for in, kind := range map[string]Kind{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`:   Request,
		`{"jsonrpc":"2.0","method":"x","params":{}}`:       Notification,
		`{"jsonrpc":"2.0","id":"a","result":{}}`:           Response,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1}}`:   ErrorResponse,
		`{"jsonrpc":"2.0","id":1}`:                         Invalid,
		`{"jsonrpc":"2.0","error":"x"}`:                    Invalid,
		`{"id":1,"method":"x"}`:                            Invalid,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`: Invalid,
		`3`: Invalid,
	} {
		m, err := Parse([]byte(in))
		if err != nil || m.Kind != kind {
			t.Errorf("%s: %v %v, want %v", in, m.Kind, err, kind)
		}
	}
	if _, err := Parse([]byte(`{"a":1,"a":2}`)); err == nil {
		t.Error("duplicate names accepted")
	}
	var je *jcs.Error
	if _, err := Parse([]byte("  {x")); err == nil || !asJCS(err, &je) || je.Offset != 3 {
		t.Errorf("offsets are in the input: %v", err)
	}
	in := []byte(`{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"t","arguments":{"a":[1.50,"x"]},"_meta":{"k":1}}}`)
	m, _ := Parse(in)
	if !sameBytes(in, m.ID) || !sameBytes(in, m.Params) {
		t.Error("spans are copies")
	}
	if v, ok := m.Param("arguments"); !ok || string(v.Raw()) != `{"a":[1.50,"x"]}` {
		t.Errorf("arguments %q", v.Raw())
	}
	if meta, ok := m.Meta(); !ok || string(meta.Raw()) != `{"k":1}` {
		t.Error("meta")
	}
	if _, ok := m.Param("nope"); ok {
		t.Error("absent param")
	}
	var zero Message
	if zero.IDRaw() != nil {
		t.Error("zero message has an id")
	}
	if _, ok := zero.Param("x"); ok {
		t.Error("zero message has params")
	}
	if zero.ErrorMessage() != "" || zero.ErrorData().Valid() {
		t.Error("zero message has an error")
	}
}

func asJCS(err error, target **jcs.Error) bool {
	e, ok := err.(*jcs.Error)
	if ok {
		*target = e
	}
	return ok
}

func TestParseBatch(t *testing.T) {
	in := []byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}, {"jsonrpc":"2.0","method":"n"} ,7,{"jsonrpc":"2.0","id":1,"result":{}}]`)
	msgs, batch, err := ParseBatch(in)
	if err != nil || !batch || len(msgs) != 4 {
		t.Fatalf("%v %v %d", err, batch, len(msgs))
	}
	kinds := []Kind{Request, Notification, Invalid, Response}
	raws := []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","method":"n"}`, `7`, `{"jsonrpc":"2.0","id":1,"result":{}}`}
	for i, m := range msgs {
		if m.Kind != kinds[i] || string(m.Raw) != raws[i] || !bytes.Contains(in, m.Raw) {
			t.Errorf("element %d: %v %q", i, m.Kind, m.Raw)
		}
	}
	if !sameBytes(in, msgs[0].Root) {
		t.Error("element bytes are copies")
	}
	if _, batch, err := ParseBatch([]byte(` [ ] `)); err == nil || !batch {
		t.Error("an empty batch was accepted")
	}
	msgs, batch, err = ParseBatch([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil || batch || len(msgs) != 1 || msgs[0].Kind != Request {
		t.Errorf("single: %v %v", batch, err)
	}
	if _, _, err := ParseBatch([]byte(`[{]`)); err == nil {
		t.Error("invalid JSON")
	}
}

// The answer carries the request's id bytes exactly as they came.
func TestAppend(t *testing.T) {
	in := []byte(`{"jsonrpc":"2.0","id":"\u0031\/x","method":"tools/call","params":{}}`)
	m, e := FromClient(in)
	if e != nil {
		t.Fatal(e)
	}
	got := AppendError(nil, m.IDRaw(), &Error{Code: mcpwire.CodeInvalidParams, Message: "Unknown tool: <b>&", Data: []byte(`{"reason":"x"}`)})
	want := `{"jsonrpc":"2.0","id":"\u0031\/x","error":{"code":-32602,"message":"Unknown tool: \u003cb\u003e\u0026","data":{"reason":"x"}}}`
	if string(got) != want {
		t.Errorf("error:\n%s\n%s", got, want)
	}
	if r, err := FromServer(got); err != nil || !bytes.Equal(r.IDRaw(), m.IDRaw()) || r.Code != -32602 {
		t.Errorf("the answer does not read back: %v", err)
	}
	if got := AppendError([]byte("x"), nil, &Error{Code: -32700, Message: "Parse error"}); string(got) != `x{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` {
		t.Errorf("null id: %s", got)
	}
	if got := AppendResult(nil, []byte("7"), []byte(`{}`)); string(got) != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Errorf("result: %s", got)
	}
	if got := AppendNotification(nil, "notifications/message", []byte(`{"level":"info"}`)); string(got) != `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}` {
		t.Errorf("notification: %s", got)
	}
	if e := Errorf(400, -32020, "Header mismatch: %s", "x"); e.Error() != "-32020 Header mismatch: x" || e.Status != 400 {
		t.Errorf("Errorf: %v", e)
	}
}

func TestKindString(t *testing.T) {
	for k, s := range map[Kind]string{Invalid: "invalid", Request: "request", Notification: "notification", Response: "response", ErrorResponse: "error response"} {
		if k.String() != s {
			t.Errorf("%d: %s", k, k)
		}
	}
	if !Response.IsResponse() || !ErrorResponse.IsResponse() || Request.IsResponse() {
		t.Error("IsResponse")
	}
}

// A header mismatch quotes the body's value in safetext's dialect: an
// invisible filler (U+3164, which Go's %q leaves as it is) is escaped, so
// the gateway's error never shows a value that reads as another.
func TestHeaderMismatchQuotesOnce(t *testing.T) {
	e := CheckHeaderValue("Mcp-Name", "a", "a\u3164")
	if e == nil {
		t.Fatal("no mismatch")
	}
	if strings.Contains(e.Message, "\u3164") || !strings.Contains(e.Message, `"a\u3164"`) {
		t.Errorf("%s", e.Message)
	}
}
