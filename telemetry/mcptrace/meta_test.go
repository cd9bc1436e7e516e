package mcptrace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

func parse(t testing.TB, s string) *frame.Message {
	t.Helper()
	m, e := frame.FromClient([]byte(s))
	if e != nil {
		t.Fatalf("%s: %s", s, e.Message)
	}
	return m
}

var ours = SpanContext{TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5, 6}, Flags: 1}

func TestFromMeta(t *testing.T) {
	m := parse(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"traceparent":"`+tpValid+`","tracestate":"a=1, b=2"}}}`)
	sc, err := FromMeta(m)
	if err != nil || !sc.Remote || sc.TraceParent() != tpValid || sc.TraceState != "a=1,b=2" {
		t.Fatalf("FromMeta = %+v, %v", sc, err)
	}
	for name, body := range map[string]string{
		"malformed":        `{"traceparent":"00-xyz"}`,
		"not a string":     `{"traceparent":42}`,
		"oversized":        `{"traceparent":"` + strings.Repeat("0", 1<<20) + `"}`,
		"tracestate alone": `{"tracestate":"a=1"}`,
	} {
		m := parse(t, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":`+body+`}}`)
		if sc, err := FromMeta(m); err == nil || sc.Valid() {
			t.Errorf("%s: FromMeta = %+v, %v; want dropped", name, sc, err)
		}
		if !HasContext(m) {
			t.Errorf("%s: HasContext false", name)
		}
	}
	// A bad tracestate is dropped alone: the traceparent stays.
	for name, ts := range map[string]string{"bad": `"A=1"`, "oversized": `"` + strings.Repeat("a=1,", 1000) + `"`, "not a string": `[]`} {
		m := parse(t, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"traceparent":"`+tpValid+`","tracestate":`+ts+`}}}`)
		sc, err := FromMeta(m)
		if err == nil || sc.TraceParent() != tpValid || sc.TraceState != "" {
			t.Errorf("tracestate %s: %+v, %v", name, sc, err)
		}
	}
	if sc, err := FromMeta(parse(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil || sc.Valid() {
		t.Fatalf("no context: %+v, %v", sc, err)
	}
}

func TestRewriteMeta(t *testing.T) {
	tp := `"traceparent":"` + ours.TraceParent() + `"`
	for _, c := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{` + tp + `}}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` + tp + `}}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}`, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` + tp + `},"cursor":"c"}}`},
		// Nothing to remove: the bytes of _meta stay, members appended.
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{ "z": 1 ,"a":[1, 2] }}}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{ "z": 1 ,"a":[1, 2] ,` + tp + `}}}`},
		// A context replaced: the other members in their order.
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"z":1,"traceparent":"` + tpValid + `","tracestate":"a=1","a":2}, "cursor":null}}`,
			`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"z":1,"a":2,` + tp + `}, "cursor":null}}`},
		// Params that cannot carry a context: unchanged.
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":7}}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":7}}`},
	} {
		got := RewriteMeta(parse(t, c.in), ours)
		if string(got) != c.want {
			t.Errorf("RewriteMeta(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	// With no context of its own, only what was there is removed.
	in := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"traceparent":"bad","k":1}}}`
	if got := string(RewriteMeta(parse(t, in), SpanContext{})); got != `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"k":1}}}` {
		t.Errorf("removal: %s", got)
	}
	plain := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"k":1}}}`
	if got := RewriteMeta(parse(t, plain), SpanContext{}); string(got) != plain {
		t.Errorf("nothing to do changed the bytes: %s", got)
	}
}

// FuzzRewriteMeta: for any message a strict server accepts, the rewritten
// message is still one, of the same kind, method and id, carries exactly
// the context set (or none), and keeps every other _meta member.
func FuzzRewriteMeta(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"traceparent":"`+tpValid+`","x":{"y":[1,2]}},"cursor":"c"}}`), true)
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), true)
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"ping","params":{"_meta":{"tracestate":"k=v"}}}`), false)
	f.Fuzz(func(t *testing.T, b []byte, set bool) {
		m, e := frame.FromClient(b)
		if e != nil || (m.Kind != frame.Request && m.Kind != frame.Notification) {
			return
		}
		sc := SpanContext{}
		if set {
			sc = ours
			sc.TraceState = "mcpdrift=1"
		}
		out := RewriteMeta(m, sc)
		n, e := frame.FromClient(bytes.Clone(out))
		if e != nil {
			t.Fatalf("%s rewritten to %s: %s", b, out, e.Message)
		}
		if n.Kind != m.Kind || n.Method != m.Method || string(n.IDRaw()) != string(m.IDRaw()) {
			t.Fatalf("%s rewritten to %s: another message", b, out)
		}
		params, hasParams := m.Root.Get("params")
		carries := !hasParams || params.Kind() == jcs.Object && func() bool {
			meta, ok := params.Get("_meta")
			return !ok || meta.Kind() == jcs.Object
		}()
		got, err := FromMeta(n)
		switch {
		case !carries:
			if !bytes.Equal(out, m.Raw) {
				t.Fatalf("%s changed though it cannot carry a context", b)
			}
		case set && (err != nil || got.TraceParent() != sc.TraceParent() || got.TraceState != sc.TraceState):
			t.Fatalf("%s rewritten to %s: context %+v, %v", b, out, got, err)
		case !set && HasContext(n):
			t.Fatalf("%s rewritten to %s still has a context", b, out)
		}
		if old, ok := m.Meta(); ok {
			nm, _ := n.Meta()
			for i := range old.Len() {
				k, v := old.Member(i)
				if k.Str() == MetaTraceParent || k.Str() == MetaTraceState {
					continue
				}
				if w, ok := nm.Get(k.Str()); !ok || !bytes.Equal(w.Raw(), v.Raw()) {
					t.Fatalf("%s rewritten to %s lost _meta member %q", b, out, k.Str())
				}
			}
		}
	})
}
