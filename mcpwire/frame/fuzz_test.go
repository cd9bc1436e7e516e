package frame

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
)

type sseRun struct {
	events []Event
	err    error
	n      int64
}

func readSSE(r io.Reader, l SSELimits) sseRun {
	sr := NewSSEReader(r, l)
	var run sseRun
	for {
		ev, err := sr.Next()
		if err != nil {
			run.err, run.n = err, sr.Consumed()
			return run
		}
		run.events = append(run.events, ev)
	}
}

// FuzzSSEReader: every bound holds, data comes from the input, and the
// events do not depend on how the input is cut into reads.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data:a\r\n\r\n", "id: 1\ndata: \n\n: c\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\"}\n\n",
		"data: x\rdata: y\r\r", "\r\n\r\n", "data", ":", "data: " + string(make([]byte, 70)) + "\n\n",
		"retry: 10\nid: a\x00b\n\nid: c\ndata: d\n\n", "event: endpoint\ndata: /sse?sessionId=1\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const maxBytes, maxLine, maxEvents = 256, 64, 8
		l := SSELimits{MaxBytes: maxBytes, MaxLine: maxLine, MaxEvents: maxEvents}
		run := readSSE(bytes.NewReader(in), l)
		var le *LimitError
		if run.err != io.EOF && !errors.As(run.err, &le) {
			t.Fatalf("unexpected error %v", run.err)
		}
		if run.err == io.EOF && run.n > maxBytes {
			t.Fatalf("consumed %d bytes without a limit error", run.n)
		}
		if len(run.events) > maxEvents {
			t.Fatalf("%d events", len(run.events))
		}
		total := 0
		for _, ev := range run.events {
			total += len(ev.Data)
			if total > maxBytes {
				t.Fatalf("%d bytes of data from a %d-byte bound", total, maxBytes)
			}
			if !bytes.Contains(in, ev.Data) && !bytes.Contains(ev.Data, []byte("\n")) {
				t.Fatalf("data %q is not from the input", ev.Data)
			}
			if !strings.Contains(string(in), ev.ID) || strings.ContainsAny(ev.ID, "\x00\r\n") {
				t.Fatalf("id %q", ev.ID)
			}
		}
		if run.err == io.EOF {
			// Within the bounds, the events are the format's (a reader
			// written from the WHATWG text, line by line).
			ref := referenceSSE(in)
			if len(ref) != len(run.events) {
				t.Fatalf("%d events, the format's reading %d: %q", len(run.events), len(ref), in)
			}
			for i := range ref {
				a, b := ref[i], run.events[i]
				if a.Type != b.Type || a.ID != b.ID || a.Retry != b.Retry || !bytes.Equal(a.Data, b.Data) {
					t.Fatalf("event %d: %+v, the format's reading %+v", i, b, a)
				}
			}
		}
		one := readSSE(iotest.OneByteReader(bytes.NewReader(in)), l)
		if len(one.events) != len(run.events) || (one.err == io.EOF) != (run.err == io.EOF) {
			t.Fatalf("one-byte reads: %d events (%v), whole: %d (%v)", len(one.events), one.err, len(run.events), run.err)
		}
		for i := range one.events {
			a, b := one.events[i], run.events[i]
			if a.Type != b.Type || a.ID != b.ID || a.Retry != b.Retry || !bytes.Equal(a.Data, b.Data) {
				t.Fatalf("event %d differs with one-byte reads: %+v / %+v", i, a, b)
			}
		}
		// A reader on the buffers a reader of the same input left (a
		// client's next response) reads the same events.
		var bufs SSEBuffers
		first := NewSSEReaderBuffers(bytes.NewReader(in), l, &bufs)
		for {
			if _, err := first.Next(); err != nil {
				break
			}
		}
		first.Release(&bufs, maxBytes)
		again := NewSSEReaderBuffers(bytes.NewReader(in), l, &bufs)
		for i := 0; ; i++ {
			ev, err := again.Next()
			if err != nil {
				if (err == io.EOF) != (run.err == io.EOF) || i != len(run.events) {
					t.Fatalf("reused buffers: %d events (%v), fresh: %d (%v)", i, err, len(run.events), run.err)
				}
				break
			}
			if i >= len(run.events) || ev.Type != run.events[i].Type || ev.ID != run.events[i].ID || !bytes.Equal(ev.Data, run.events[i].Data) {
				t.Fatalf("reused buffers: event %d differs", i)
			}
		}
		// NextShared reads the same events (each looked at before the
		// reader is read again), and the bytes it shares are the reader's
		// own buffer: Next's are a copy.
		shared := NewSSEReader(iotest.OneByteReader(bytes.NewReader(in)), l)
		var detached [][]byte // every other event's data, given away
		for i := 0; ; i++ {
			ev, err := shared.NextShared()
			if err != nil {
				if (err == io.EOF) != (run.err == io.EOF) || i != len(run.events) {
					t.Fatalf("NextShared: %d events (%v), Next: %d (%v)", i, err, len(run.events), run.err)
				}
				break
			}
			if i >= len(run.events) || ev.Type != run.events[i].Type || ev.ID != run.events[i].ID || ev.Retry != run.events[i].Retry || !bytes.Equal(ev.Data, run.events[i].Data) {
				t.Fatalf("NextShared: event %d differs", i)
			}
			if len(ev.Data) > 0 && len(shared.data) > 0 && &ev.Data[0] != &shared.data[0] {
				t.Fatalf("NextShared: event %d's data is not the reader's buffer", i)
			}
			if i%2 == 0 {
				shared.Detach()
				detached = append(detached, ev.Data)
			}
		}
		// What was detached is the caller's: no later read wrote over it.
		for j, d := range detached {
			if !bytes.Equal(d, run.events[2*j].Data) {
				t.Fatalf("the data of event %d, detached, was overwritten: %q, want %q", 2*j, d, run.events[2*j].Data)
			}
		}
		// PerEvent bounds each event: never more than the whole-stream bounds admit per event.
		pe := readSSE(bytes.NewReader(in), SSELimits{MaxBytes: maxBytes, MaxLine: maxLine, MaxEvents: maxEvents, PerEvent: true})
		if pe.err != io.EOF && !errors.As(pe.err, &le) {
			t.Fatalf("per event: %v", pe.err)
		}
		if len(pe.events) < len(run.events) {
			t.Fatalf("per-event bounds read fewer events (%d) than whole-stream ones (%d)", len(pe.events), len(run.events))
		}
	})
}

// referenceSSE reads a whole event stream as the WHATWG event stream
// format says, without bounds and without buffering tricks: the reference
// FuzzSSEReader compares the reader against.
func referenceSSE(in []byte) []Event {
	var evs []Event
	var ev Event
	var data []byte
	fields, hasData := false, false
	for {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			return evs // a line without its end: the stream ended inside it
		}
		line := in[:i]
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			in = in[i+2:]
		} else {
			in = in[i+1:]
		}
		if len(line) == 0 {
			if fields && hasData {
				ev.Data = bytes.TrimSuffix(data, []byte("\n"))
				if ev.Data == nil {
					ev.Data = []byte{}
				}
				evs = append(evs, ev)
			}
			ev, data, fields, hasData = Event{}, nil, false, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if j := bytes.IndexByte(line, ':'); j >= 0 {
			field, value = line[:j], bytes.TrimPrefix(line[j+1:], []byte(" "))
		}
		fields = true
		switch string(field) {
		case "data":
			data = append(append(data, value...), '\n')
			hasData = true
		case "event":
			ev.Type = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID = string(value)
			}
		case "retry":
			if d, ok := retryValue(value); ok {
				ev.Retry = d
			}
		}
	}
}

// wantData is what a reader gets back for data the writer wrote: valid
// JSON compacted, anything else with its line breaks as LF.
func wantData(data []byte) []byte {
	if json.Valid(data) {
		var b bytes.Buffer
		_ = json.Compact(&b, data)
		return b.Bytes()
	}
	d := bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(d, []byte("\r"), []byte("\n"))
}

// FuzzSSEWriter: what the writer writes, a reader reads back as one event.
func FuzzSSEWriter(f *testing.F) {
	f.Add("message", "s-1", []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`), uint16(0))
	f.Add("", "s-0", []byte(nil), uint16(0))
	f.Add("endpoint", "", []byte("/sse?sessionId=abc"), uint16(0))
	f.Add("x\r\ny", "i\nd", []byte("{\n  \"a\": [1, 2]\n}"), uint16(1500))
	f.Add(" lead", " lead", []byte(" lead\r\rtrail "), uint16(3))
	f.Add("m", "", []byte("not json\nat all"), uint16(0))
	f.Add("m", "", []byte(`{"a":"x y","b":"\"\t\\","c":[1,"z\\"]}`), uint16(0))
	f.Add("m", "", []byte(`{"a":"x\`+"\n"+`y"}`), uint16(0))
	f.Add("m", "", []byte(`{"a":"open string, 1}`), uint16(0))
	f.Fuzz(func(t *testing.T, typ, id string, data []byte, retry uint16) {
		if strings.ContainsRune(id, 0) {
			return // a reader ignores such an id field, as the format says
		}
		var buf bytes.Buffer
		sw := NewSSEWriter(&buf)
		sw.Event(Event{Type: typ, ID: id, Retry: time.Duration(retry) * time.Millisecond, Data: data})
		sw.Comment("keep-alive\n" + typ)
		if err := sw.Flush(); err != nil {
			t.Fatal(err)
		}
		run := readSSE(bytes.NewReader(buf.Bytes()), SSELimits{MaxBytes: 1 << 20, MaxLine: 1 << 20, MaxEvents: 10})
		if run.err != io.EOF || len(run.events) != 1 {
			t.Fatalf("%q: %d events, %v", buf.Bytes(), len(run.events), run.err)
		}
		got := run.events[0]
		drop := strings.NewReplacer("\r", "", "\n", "")
		if got.Type != drop.Replace(typ) || got.ID != drop.Replace(id) || got.Retry != time.Duration(retry)*time.Millisecond {
			t.Fatalf("%q: got %+v", buf.Bytes(), got)
		}
		if want := wantData(data); !bytes.Equal(got.Data, want) {
			t.Fatalf("%q: data %q, want %q", buf.Bytes(), got.Data, want)
		}
		if json.Valid(data) && bytes.Count(buf.Bytes(), []byte("data:")) != 1 {
			t.Fatalf("JSON on more than one data: line: %q", buf.Bytes())
		}
		if got, want := dataLines(data, compactJSON), dataLines(data, compactAlways); !bytes.Equal(got, want) {
			t.Fatalf("%q: data lines %q, compacting all whitespace gives %q", data, got, want)
		}
	})
}

// dataLines is the data: lines an event with data gets when compact is
// the compaction.
func dataLines(data []byte, compact func([]byte) ([]byte, bool)) []byte {
	if c, ok := compact(data); ok {
		data = c
	}
	return appendLines(nil, "data: ", data)
}

// compactAlways is compactJSON without its shortcut: every datum with
// whitespace is compacted by encoding/json (false: invalid JSON).
func compactAlways(b []byte) ([]byte, bool) {
	if bytes.IndexAny(b, " \t\r\n") < 0 {
		return b, true
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, false
	}
	return out.Bytes(), true
}

type lineStep struct {
	line    string
	tooLong bool
	eof     bool
}

// referenceLines is what LineReader must give for in: the input split at
// LF; a piece longer than max is too long (and skipped); the piece after
// the last LF comes with io.EOF.
func referenceLines(in []byte, max int) []lineStep {
	parts := bytes.Split(in, []byte("\n"))
	var out []lineStep
	for i, p := range parts {
		last := i == len(parts)-1
		if len(p) > max {
			out = append(out, lineStep{tooLong: true, eof: last})
			continue
		}
		out = append(out, lineStep{line: string(p), eof: last})
	}
	return out
}

func readLineSteps(r io.Reader, max int) ([]lineStep, error) {
	lr := NewLineReader(r, int64(max))
	var out []lineStep
	for {
		line, err := lr.Next()
		switch {
		case IsLineTooLong(err):
			if int64(len(line)) != 0 {
				return out, errors.New("a too-long line came with bytes")
			}
			serr := lr.Skip()
			if serr != nil && serr != io.EOF {
				return out, serr
			}
			out = append(out, lineStep{tooLong: true, eof: serr == io.EOF})
			if serr == io.EOF {
				return out, nil
			}
		case err == io.EOF:
			return append(out, lineStep{line: string(line), eof: true}), nil
		case err != nil:
			return out, err
		default:
			if len(line) > max {
				return out, errors.New("a line beyond the bound")
			}
			out = append(out, lineStep{line: string(line)})
		}
	}
}

// FuzzLineReader: the lines are the input split at LF, each within the
// bound or refused and skipped, however the input is cut into reads.
func FuzzLineReader(f *testing.F) {
	for _, s := range []string{
		"a\r\n\n  \nb\n", "a\nb", "", "\n", "0123456789\n", "xxxxxxxxxxxx\nok\n", "xxxxxxxxxxxxxxxxxxxxxxxx",
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n" + `{"jsonrpc":"2.0","method":"n"}`,
	} {
		f.Add([]byte(s), uint8(10))
	}
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		want := referenceLines(in, int(max))
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = bytes.NewReader(in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			got, err := readLineSteps(r, int(max))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("one byte %v: got %+v, want %+v", oneByte, got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("one byte %v: step %d: got %+v, want %+v", oneByte, i, got[i], want[i])
				}
			}
		}
		line := AppendLine(nil, in)
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' || bytes.IndexByte(line, '\r') >= 0 || len(line) != len(in)+1 {
			t.Fatalf("AppendLine %q", line)
		}
		if json.Valid(in) {
			a, _ := jcs.Canonicalize(in)
			b, err := jcs.Canonicalize(line)
			if err == nil && !bytes.Equal(a, b) {
				t.Fatalf("AppendLine changed the canonical form: %s / %s", a, b)
			}
		}
	})
}

// within reports whether v is a span of in (the same memory).
func within(in []byte, v jcs.Value) bool {
	if !v.Valid() {
		return true
	}
	raw := v.Raw()
	return len(raw) > 0 && v.Offset()+len(raw) <= len(in) && &in[v.Offset()] == &raw[0]
}

// FuzzEnvelope: the three readings agree where their rules do, every kept
// member is a span of the input, and an answer carries the exact id.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":""}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32022,"message":"m","data":{"supported":["a"],"requested":"b"}}}`,
		`{"jsonrpc":"2.0","error":{"code":-32700}}`, `{"jsonrpc":"2.0","method":"ping","id":3}`,
		`{"jsonrpc":"2.0","id":1e0,"result":{}}`, `[{}]`, ``, `{"jsonrpc":"2.0","id":1,"id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"h\u00e9"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rm"}}]`,
		` {"jsonrpc":"2.0","id":"mock-srv-1","result":{}} `, `{"jsonrpc":"2.0","id":-0,"method":"x","params":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		pm, perr := Parse(in)
		sm, serr := FromServer(in)
		cm, cerr := FromClient(in)
		msgs, _, berr := ParseBatch(in)
		emptyBatch := perr == nil && pm.Root.Kind() == jcs.Array && pm.Root.Len() == 0
		if (perr == nil && !emptyBatch) != (berr == nil) {
			t.Fatalf("Parse %v, ParseBatch %v", perr, berr)
		}
		if serr == nil {
			if perr != nil || pm.Kind != sm.Kind || !bytes.Equal(pm.IDRaw(), sm.IDRaw()) || pm.Method != sm.Method || pm.Code != sm.Code {
				t.Fatalf("Parse %+v / FromServer %+v", pm, sm)
			}
			if sm.Kind == Invalid {
				t.Fatal("FromServer accepted an invalid message")
			}
			if !bytes.Equal(sm.Raw, TrimSpace(in)) {
				t.Fatal("Raw is not the trimmed input")
			}
		} else if perr == nil && pm.Kind != Invalid && len(TrimSpace(in)) > 0 && TrimSpace(in)[0] != '[' {
			t.Fatalf("Parse classified as %v what FromServer refused: %v", pm.Kind, serr)
		}
		if cerr == nil {
			switch {
			case perr != nil:
				t.Fatal("FromClient accepted what Parse did not")
			case cm.Kind == Invalid:
				t.Fatal("FromClient accepted an invalid message")
			case cm.Kind == ErrorResponse && pm.Kind != ErrorResponse && pm.Kind != Invalid,
				cm.Kind != ErrorResponse && cm.Kind != pm.Kind:
				t.Fatalf("FromClient %v, Parse %v", cm.Kind, pm.Kind)
			case (cm.Kind == Request || cm.Kind == Notification) && cm.Params.Valid() && cm.Params.Kind() != jcs.Object:
				t.Fatal("FromClient accepted params that are not an object")
			case cm.ID.Valid() && cm.ID.Kind() == jcs.Null:
				t.Fatal("FromClient accepted a null id")
			}
			// The answer to an accepted request carries its exact id.
			if cm.Kind == Request {
				ans := AppendError(nil, cm.IDRaw(), &Error{Code: mcpwire.CodeInvalidParams, Message: string(in)})
				am, err := FromServer(ans)
				if err != nil || am.Kind != ErrorResponse || !bytes.Equal(am.IDRaw(), cm.IDRaw()) {
					t.Fatalf("answer %s: %v", ans, err)
				}
				res := AppendResult(nil, cm.IDRaw(), []byte(`{}`))
				if rm, err := FromServer(res); err != nil || !bytes.Equal(rm.IDRaw(), cm.IDRaw()) {
					t.Fatalf("result %s: %v", res, err)
				}
			}
		} else if cerr.Status != http.StatusBadRequest || (cerr.Code != mcpwire.CodeParseError && cerr.Code != mcpwire.CodeInvalidRequest && cerr.Code != mcpwire.CodeInvalidParams) {
			t.Fatalf("FromClient error %+v", cerr)
		}
		for i, m := range []*Message{pm, sm, cm} {
			if m == nil {
				continue
			}
			src := in
			if i == 1 {
				src = TrimSpace(in) // what FromServer parses
			}
			for _, v := range []jcs.Value{m.Root, m.ID, m.Params, m.Result, m.Error} {
				if !within(src, v) {
					t.Fatalf("a member is not a span of the input: %q", v.Raw())
				}
			}
			if len(m.Raw) > 0 && !bytes.Contains(in, m.Raw) {
				t.Fatal("Raw is not from the input")
			}
			_, _ = m.IDInt()
			_ = m.ErrorMessage()
			_ = m.ErrorData()
			_, _ = m.Meta()
			if hs, err := DeriveHeaders(m, "2025-11-25"); err == nil {
				hs.Set(http.Header{})
			}
		}
		for _, m := range msgs {
			if !within(in, m.Root) {
				t.Fatal("a batch element is not a span of the input")
			}
		}
	})
}

// FuzzHeaders: CheckHeaders never accepts a request whose headers, read
// independently, disagree with its body, and accepts what DeriveHeaders
// derived from it.
func FuzzHeaders(f *testing.F) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"get_weather"}}`, "2026-07-28", "tools/call", "get_weather")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"h\u00e9"}}`, "2026-07-28", "tools/call", "=?base64?aMOp?=")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{`+meta+`,"uri":" x "}}`, "2026-07-28", "resources/read", " x ")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`, " 2026-07-28 ", "tools/list", "")
	f.Add(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{`+meta+`}}`, "2026-07-28", "", "")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{`+meta+`,"name":"=?base64?x?="}}`, "2026-07-28", "prompts/get", "=?base64?PT9iYXNlNjQ/eD89?=")
	f.Fuzz(func(t *testing.T, body, pv, method, name string) {
		m, err := Parse([]byte(body))
		if err != nil || (m.Kind != Request && m.Kind != Notification) {
			return
		}
		hs, err := DeriveHeaders(m, "")
		if err != nil {
			// A body whose method or version cannot be a header value is
			// never accepted, whatever headers come with it.
			if e := CheckHeaders(http.Header{}, m, nil); e == nil || e.Code != mcpwire.CodeInvalidRequest {
				t.Fatalf("DeriveHeaders refuses %q (%v) but CheckHeaders says %v", body, err, e)
			}
			return
		}
		// Derived headers are accepted (a request needs a body version, and a name where one is required).
		derived := http.Header{}
		hs.Set(derived)
		if hs.ProtocolVersion != "" && (NameKey(hs.Method) == "" || hs.HasName) {
			if e := CheckHeaders(derived, m, nil); e != nil && !(m.Kind == Notification && e.Code == mcpwire.CodeHeaderMismatch && metaVersionMismatch(m, hs)) {
				t.Fatalf("derived headers %v refused: %v", derived, e)
			}
		}
		h := http.Header{}
		for k, v := range map[string]string{mcpwire.HeaderProtocolVersion: pv, mcpwire.HeaderMethod: method, mcpwire.HeaderName: name} {
			if v != "" {
				h.Set(k, v)
			}
		}
		e := CheckHeaders(h, m, nil)
		if e != nil {
			if e.Code != mcpwire.CodeHeaderMismatch && e.Code != mcpwire.CodeInvalidParams {
				t.Fatalf("code %d", e.Code)
			}
			return
		}
		trim := func(s string) string { return strings.Trim(s, " \t") }
		if trim(pv) == "" && hs.ProtocolVersion == "" && m.Kind == Request {
			t.Fatal("a request without any version accepted")
		}
		if m.Kind == Request {
			if trim(pv) != hs.ProtocolVersion || trim(method) != m.Method {
				t.Fatalf("accepted version %q / method %q for a body with %q / %q", pv, method, hs.ProtocolVersion, m.Method)
			}
			if NameKey(m.Method) != "" {
				got, err := mcpwire.DecodeHeaderValue(trim(name))
				if err != nil || got != hs.Name || !hs.HasName {
					t.Fatalf("accepted Mcp-Name %q for %q", name, hs.Name)
				}
			}
		} else if method != "" && trim(method) != m.Method {
			t.Fatalf("notification: accepted Mcp-Method %q for %q", method, m.Method)
		}
	})
}

// metaVersionMismatch: a notification whose _meta names a version that is
// not a string (DeriveHeaders then has none of its own to derive).
func metaVersionMismatch(m *Message, hs Headers) bool {
	meta, ok := m.Meta()
	if !ok {
		return false
	}
	v, ok := meta.Get(mcpwire.MetaProtocolVersion)
	return ok && (v.Kind() != jcs.String || v.Str() != hs.ProtocolVersion)
}
