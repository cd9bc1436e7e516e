package frame

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func lim(maxBytes int64, maxLine, maxEvents int) SSELimits {
	return SSELimits{MaxBytes: maxBytes, MaxLine: maxLine, MaxEvents: maxEvents}
}

// readAllEvents returns "type|data" of each event and the final error.
func readAllEvents(in string, l SSELimits) ([]string, error) {
	sr := NewSSEReader(strings.NewReader(in), l)
	var out []string
	for {
		ev, err := sr.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev.Type+"|"+string(ev.Data))
	}
}

func TestSSEReader(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"data: a\n\n", []string{"|a"}},
		{"data:a\r\n\r\ndata: b\r\rdata: c\n\n", []string{"|a", "|b", "|c"}},
		{"event: message\nid: 1\ndata: x\ndata:  y\n\n", []string{"message|x\n y"}},
		{": keep-alive\n\n:\n\ndata: z\n\n", []string{"|z"}},
		{"id: p\ndata: \n\ndata: r\n\n", []string{"|", "|r"}},           // priming: empty data, left to the caller
		{"id: p\nretry: 10\n\nevent: x\n\ndata: r\n\n", []string{"|r"}}, // blocks without data are not events
		{"data\n\n", []string{"|"}},                                     // a field without a colon
		{"data: unterminated\n", nil},                                   // the stream ended inside the event
		{"data: x", nil},
		{"\n\n\ndata: x\n\n", []string{"|x"}},
		{"DATA: x\n\nfoo: bar\ndata: y\n\n", []string{"|y"}},
		{"\ufeffdata: x\n\ndata: y\n\n", []string{"|y"}}, // a byte order mark is not stripped
		{"event: endpoint\ndata: /m?s=1\n\n", []string{"endpoint|/m?s=1"}},
	}
	for _, c := range cases {
		got, err := readAllEvents(c.in, lim(1<<20, 1<<20, 100))
		if err != io.EOF {
			t.Errorf("%q: err %v", c.in, err)
		}
		if strings.Join(got, "¶") != strings.Join(c.want, "¶") {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSSEReaderIDAndRetry(t *testing.T) {
	in := "id: a\ndata: 1\n\n" + // id a
		"data: 2\n\n" + // no id field: ID "", LastEventID still a
		"id\nretry: 250\n\n" + // a data-less block resets the last id and sets retry
		"id: b\x00c\nretry: x1\ndata: 3\n\n" + // NUL: the id field is ignored; a bad retry too
		"retry: 5\nid: d\ndata: 4\n\n"
	sr := NewSSEReader(strings.NewReader(in), lim(1<<20, 1<<20, 100))
	type got struct {
		id, last string
		retry    time.Duration
	}
	want := []got{{"a", "a", 0}, {"", "a", 0}, {"", "", 0}, {"d", "d", 5 * time.Millisecond}}
	for i, w := range want {
		ev, err := sr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if g := (got{ev.ID, sr.LastEventID(), ev.Retry}); g != w {
			t.Errorf("event %d (%q): got %+v, want %+v", i, ev.Data, g, w)
		}
		if i == 2 {
			if r, ok := sr.Retry(); !ok || r != 250*time.Millisecond {
				t.Errorf("retry after the data-less block: %v %v", r, ok)
			}
		}
	}
	if r, ok := sr.Retry(); !ok || r != 5*time.Millisecond {
		t.Errorf("last retry %v %v", r, ok)
	}
	if _, err := sr.Next(); err != io.EOF {
		t.Errorf("end: %v", err)
	}
	sr = NewSSEReader(strings.NewReader("retry: 0\ndata: x\n\nretry: 99999999999999999999\ndata: y\n\n"), lim(1<<20, 1<<20, 100))
	ev, _ := sr.Next()
	if r, ok := sr.Retry(); !ok || r != 0 || ev.Retry != 0 {
		t.Errorf("retry 0: %v %v", r, ok)
	}
	sr.Next()
	if r, _ := sr.Retry(); r != 0 {
		t.Errorf("an overflowing retry was taken: %v", r)
	}
}

func TestSSEReaderOneByteReads(t *testing.T) {
	in := "data: a\r\n\r\n: c\r\ndata: {\"x\":1}\r\rdata: b\n\n"
	sr := NewSSEReader(iotest.OneByteReader(strings.NewReader(in)), lim(1<<20, 1<<20, 100))
	var got []string
	for {
		ev, err := sr.Next()
		if err != nil {
			break
		}
		got = append(got, string(ev.Data))
	}
	if strings.Join(got, ",") != `a,{"x":1},b` {
		t.Errorf("got %q", got)
	}
}

func TestSSEReaderLimits(t *testing.T) {
	var le *LimitError
	_, err := readAllEvents("data: "+strings.Repeat("x", 100)+"\n\n", lim(1<<20, 50, 100))
	if !errors.As(err, &le) || le.Limit != LimitLine || le.Max != 50 {
		t.Errorf("line: %v", err)
	}
	_, err = readAllEvents(strings.Repeat("data: x\n\n", 100), lim(200, 1<<20, 1000))
	if !errors.As(err, &le) || le.Limit != LimitBytes || le.Max != 200 {
		t.Errorf("bytes: %v", err)
	}
	got, err := readAllEvents(strings.Repeat("data: x\n\n", 100), lim(1<<20, 1<<20, 10))
	if !errors.As(err, &le) || le.Limit != LimitEvents || le.Max != 10 || len(got) != 10 {
		t.Errorf("events: %d %v", len(got), err)
	}
	// Comments count as bytes, so a stream of keep-alives is bounded too.
	_, err = readAllEvents(strings.Repeat(": ping\n", 1000), lim(500, 1<<20, 10))
	if !errors.As(err, &le) || le.Limit != LimitBytes {
		t.Errorf("comments: %v", err)
	}
	// Priming events and data-less blocks count as events.
	_, err = readAllEvents(strings.Repeat("id: 1\ndata:\n\n", 20), lim(1<<20, 1<<20, 10))
	if !errors.As(err, &le) || le.Limit != LimitEvents {
		t.Errorf("priming: %v", err)
	}
	_, err = readAllEvents(strings.Repeat("id: 1\n\n", 20), lim(1<<20, 1<<20, 10))
	if !errors.As(err, &le) || le.Limit != LimitEvents {
		t.Errorf("data-less: %v", err)
	}
	// A zero bound admits nothing.
	if _, err := readAllEvents("data: x\n\n", SSELimits{}); !errors.As(err, &le) {
		t.Errorf("zero limits: %v", err)
	}
}

// With PerEvent the bounds apply to each event and what precedes it: a
// long-lived stream of small events is never cut, one large event is.
func TestSSEReaderPerEvent(t *testing.T) {
	l := SSELimits{MaxBytes: 100, MaxLine: 100, MaxEvents: 3, PerEvent: true}
	in := strings.Repeat(": k\nid: 1\n\ndata: x\n\n", 50)
	got, err := readAllEvents(in, l)
	if err != io.EOF || len(got) != 50 {
		t.Errorf("small events: %d %v", len(got), err)
	}
	sr := NewSSEReader(strings.NewReader("data: a\n\n: padding\n\ndata: bb\n\n"), l)
	sr.Next()
	if n := sr.Consumed(); n != len64("data: a\n\n") {
		t.Errorf("consumed for the first event: %d", n)
	}
	sr.Next()
	if n := sr.Consumed(); n != len64(": padding\n\ndata: bb\n\n") {
		t.Errorf("consumed for the second event: %d", n)
	}
	var le *LimitError
	_, err = readAllEvents("data: x\n\n"+strings.Repeat("id: 1\n\n", 3)+"data: y\n\n", l)
	if !errors.As(err, &le) || le.Limit != LimitEvents {
		t.Errorf("blocks before one event: %v", err)
	}
	_, err = readAllEvents("data: x\n\ndata: "+strings.Repeat("y", 60)+"\ndata: "+strings.Repeat("y", 60)+"\n\n", l)
	if !errors.As(err, &le) || le.Limit != LimitBytes {
		t.Errorf("one large event: %v", err)
	}
}

func len64(s string) int64 { return int64(len(s)) }

func TestSSEReaderDataIsCopied(t *testing.T) {
	sr := NewSSEReader(strings.NewReader("data: first\n\ndata: second\n\n"), lim(1<<20, 1<<20, 10))
	a, _ := sr.Next()
	b, _ := sr.Next()
	if string(a.Data) != "first" || string(b.Data) != "second" || bytes.Equal(a.Data, b.Data) {
		t.Errorf("%q %q", a.Data, b.Data)
	}
}

func TestSSEReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	sr := NewSSEReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), lim(1<<20, 1<<20, 10))
	if ev, err := sr.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("%q %v", ev.Data, err)
	}
	if _, err := sr.Next(); !errors.Is(err, boom) {
		t.Fatalf("read error: %v", err)
	}
}

// The writer's bytes are the mock server's: one "event: message" with an
// id and one data: line of compacted JSON; priming as id and empty data.
func TestSSEWriter(t *testing.T) {
	var buf bytes.Buffer
	sw := NewSSEWriter(&buf)
	sw.Event(Event{ID: "s-0"})
	sw.Event(Event{Type: "message", ID: "s-1", Data: []byte("{\n  \"a\": [1, 2],\n  \"b\": \"x  y\\n\"\n}")})
	sw.Event(Event{Type: "message", Data: []byte(`{"c":true}`)})
	sw.Event(Event{Type: "endpoint", Data: []byte("/sse?sessionId=1")})
	sw.Event(Event{Data: []byte("not json\r\nline two\rthree\n")})
	sw.Event(Event{Type: "x\ny", ID: "i\rd", Retry: 1500 * time.Millisecond, Data: []byte("1")})
	sw.Comment("keep-alive")
	sw.Raw([]byte("event: message\ndata: {"))
	if buf.Len() != 0 {
		t.Fatal("written before Flush")
	}
	if sw.Buffered() == 0 {
		t.Fatal("nothing buffered")
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "id: s-0\ndata: \n\n" +
		"event: message\nid: s-1\ndata: {\"a\":[1,2],\"b\":\"x  y\\n\"}\n\n" +
		"event: message\ndata: {\"c\":true}\n\n" +
		"event: endpoint\ndata: /sse?sessionId=1\n\n" +
		"data: not json\ndata: line two\ndata: three\ndata: \n\n" +
		"event: xy\nid: id\nretry: 1500\ndata: 1\n\n" +
		": keep-alive\n\n" +
		"event: message\ndata: {"
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}
	if sw.Buffered() != 0 {
		t.Error("buffer kept after Flush")
	}
}

// JSON without whitespace between its tokens is written as it is, its
// strings' spaces and escapes untouched; whitespace between tokens, or a
// line break anywhere, takes the compaction; invalid JSON is split at its
// line breaks only. The same lines as compacting whenever there is
// whitespace (FuzzSSEWriter checks that for any data).
func TestSSEWriterCompactsOnlyWhatItMust(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":"x y","b":"\"\t\\ ","c":[1,"z\\"]}`, `{"a":"x y","b":"\"\t\\ ","c":[1,"z\\"]}`},
		{`{"a": "x y"}`, `{"a":"x y"}`},
		{"{\"a\":\t1}", `{"a":1}`},
		{"{\"a\":\"x\\\ny\"}", "{\"a\":\"x\\\ndata: y\"}"},
		{`{"a":"unterminated, 1}`, `{"a":"unterminated, 1}`},
		{`{"a":"x\" "b":1}`, `{"a":"x\" "b":1}`},
		{`not json at all`, `not json at all`},
	} {
		var buf bytes.Buffer
		sw := NewSSEWriter(&buf)
		sw.Event(Event{Data: []byte(c.in)})
		_ = sw.Flush()
		if want := "data: " + c.want + "\n\n"; buf.String() != want {
			t.Errorf("%q: wrote %q, want %q", c.in, buf.String(), want)
		}
		if got, want := dataLines([]byte(c.in), compactJSON), dataLines([]byte(c.in), compactAlways); !bytes.Equal(got, want) {
			t.Errorf("%q: %q, compacting all whitespace gives %q", c.in, got, want)
		}
	}
}

func TestSSEWriterFlushes(t *testing.T) {
	rec := httptest.NewRecorder()
	sw := NewSSEWriter(rec)
	sw.Event(Event{Data: []byte(`{}`)})
	if err := sw.Flush(); err != nil || !rec.Flushed || rec.Body.String() != "data: {}\n\n" {
		t.Errorf("%v %v %q", err, rec.Flushed, rec.Body.String())
	}
	boom := errors.New("gone")
	sw = NewSSEWriter(errWriter{boom})
	sw.Comment("x")
	if err := sw.Flush(); !errors.Is(err, boom) {
		t.Errorf("write error: %v", err)
	}
}

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

// What the writer writes, the reader reads back: JSON data compacted,
// other data with its line breaks as LF.
func TestSSERoundTrip(t *testing.T) {
	evs := []Event{
		{Type: "message", ID: "1", Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)},
		{ID: "2", Data: nil},
		{Type: "endpoint", Data: []byte("/m?x=1")},
		{Data: []byte("a\r\nb\rc\nd")},
		{Type: "message", Retry: time.Second, Data: []byte("[1, 2]")},
	}
	var buf bytes.Buffer
	sw := NewSSEWriter(&buf)
	for _, ev := range evs {
		sw.Event(ev)
	}
	sw.Flush()
	sr := NewSSEReader(&buf, lim(1<<20, 1<<20, 100))
	wantData := []string{`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`, "", "/m?x=1", "a\nb\nc\nd", "[1,2]"}
	for i, ev := range evs {
		got, err := sr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got.Type != ev.Type || got.ID != ev.ID || got.Retry != ev.Retry || string(got.Data) != wantData[i] {
			t.Errorf("event %d: got %+v (%q)", i, got, got.Data)
		}
	}
}

// A reader on the buffers of readers before it (NewSSEReaderBuffers,
// Release) reads what a fresh reader reads, stream after stream: events,
// errors, and data that later reads do not overwrite.
func TestSSEReaderBuffersReused(t *testing.T) {
	streams := []string{
		"data: " + strings.Repeat("a", 5000) + "\n\n",
		"event: message\ndata: x\ndata: y\n\n: keep\n\ndata: z\n\n",
		"data: " + strings.Repeat("b", 300) + "\n",      // ends inside an event
		"data: " + strings.Repeat("c", 200000) + "\n\n", // beyond the line bound
		"id: 7\nretry: 5\ndata: short\n\n",
		"",
	}
	l := lim(1<<20, 100000, 10)
	var b SSEBuffers
	type keptData struct {
		data []byte
		was  string
	}
	var kept []keptData
	for round := range 3 {
		for i, in := range streams {
			want, wantErr := readAllEvents(in, l)
			sr := NewSSEReaderBuffers(strings.NewReader(in), l, &b)
			var got []string
			var err error
			for {
				var ev Event
				if ev, err = sr.Next(); err != nil {
					break
				}
				got = append(got, ev.Type+"|"+string(ev.Data))
				kept = append(kept, keptData{ev.Data, string(ev.Data)})
			}
			sr.Release(&b, 1<<20)
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("round %d stream %d: %q %v, a fresh reader %q %v", round, i, got, err, want, wantErr)
			}
		}
	}
	// Every event's data is its own: the reused buffers never wrote over it.
	for _, k := range kept {
		if string(k.data) != k.was {
			t.Fatalf("data %.40q was overwritten: %.40q", k.was, k.data)
		}
	}
	if b.data == nil || cap(b.data) < 5000 {
		t.Fatalf("the buffers were not kept: data cap %d", cap(b.data))
	}
	// Larger than the bound a client keeps: dropped.
	sr := NewSSEReaderBuffers(strings.NewReader(streams[0]), l, &b)
	_, _ = sr.Next()
	sr.Release(&b, 100)
	if b.data != nil {
		t.Fatal("buffers beyond the bound were kept")
	}
}

// TestSSEReaderGrowsByDoubling: a long data line (a page of a tool list:
// 1.7 MB) is read into arrays that double, so a fresh reader allocates
// about 2.5 times the line for it (3.5 with the event's own copy), not
// the five times append's 1.25x growth cost (6.2 in all); and the growth
// never passes what MaxBytes lets an event reach.
func TestSSEReaderGrowsByDoubling(t *testing.T) {
	const n = 1700000
	in := []byte("data: " + strings.Repeat("a", n) + "\n\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sr := NewSSEReader(bytes.NewReader(in), lim(1<<30, 1<<30, 10))
	ev, err := sr.Next()
	runtime.ReadMemStats(&after)
	if err != nil || len(ev.Data) != n {
		t.Fatalf("%d bytes, %v", len(ev.Data), err)
	}
	// The line's arrays (from 4 KiB to 2 MiB), the event's own copy (n)
	// and the read buffer (32 KiB).
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*n {
		t.Errorf("reading a %d-byte line allocated %d bytes (at most %d)", n, got, 4*n)
	}
	if c := cap(sr.data); c > 2*n {
		t.Errorf("the data buffer's capacity is %d for %d bytes", c, n)
	}
	// Bounded: the buffer never grows past MaxBytes for a line within it.
	const max = 100000
	sr = NewSSEReader(strings.NewReader("data: "+strings.Repeat("b", max-20)+"\n\n"), lim(max, max, 10))
	if ev, err := sr.Next(); err != nil || len(ev.Data) != max-20 {
		t.Fatalf("%d bytes, %v", len(ev.Data), err)
	}
	if c := cap(sr.data); c > max {
		t.Errorf("the data buffer's capacity is %d with MaxBytes %d", c, max)
	}
}

// TestSSEReaderNextShared: NextShared's data is the reader's buffer, which
// the next read writes over; Next's is the event's own.
func TestSSEReaderNextShared(t *testing.T) {
	in := "data: first\n\ndata: other\n\n"
	sr := NewSSEReader(strings.NewReader(in), lim(1<<10, 1<<10, 10))
	a, err := sr.NextShared()
	if err != nil || string(a.Data) != "first" {
		t.Fatalf("%q %v", a.Data, err)
	}
	b, err := sr.NextShared()
	if err != nil || string(b.Data) != "other" {
		t.Fatalf("%q %v", b.Data, err)
	}
	if string(a.Data) != "other" {
		t.Errorf("the first event's shared data is %q: not the reader's buffer", a.Data)
	}
	sr = NewSSEReader(strings.NewReader(in), lim(1<<10, 1<<10, 10))
	a, _ = sr.Next()
	if b, _ = sr.Next(); string(a.Data) != "first" || string(b.Data) != "other" {
		t.Errorf("Next: %q, %q", a.Data, b.Data)
	}
}

// TestSSEReaderDetach: a detached event's data is the caller's (later
// reads, on these buffers or on reused ones, do not write over it), and
// the reader's next buffer is made as large as the last event it gave
// away and an eighth more, not as the largest: a next event a little
// larger is read into that one array.
func TestSSEReaderDetach(t *testing.T) {
	big := strings.Repeat("p", 100000)
	in := "data: " + big + "\n\ndata: " + strings.Repeat("q", 90000) + "\n\n"
	var b SSEBuffers
	sr := NewSSEReaderBuffers(strings.NewReader(in), lim(1<<20, 1<<20, 10), &b)
	ev, err := sr.NextShared()
	if err != nil || string(ev.Data) != big {
		t.Fatalf("%d bytes, %v", len(ev.Data), err)
	}
	given := len(sr.data) // the event's data and its line feed
	sr.Detach()
	if sr.data != nil {
		t.Fatal("the reader kept the detached buffer")
	}
	ev2, err := sr.NextShared()
	if err != nil || len(ev2.Data) != 90000 {
		t.Fatalf("%d bytes, %v", len(ev2.Data), err)
	}
	if c := cap(sr.data); c != given+given/8 {
		t.Errorf("the next buffer is %d bytes, the detached one %d (want %d)", c, given, given+given/8)
	}
	sr.Detach()
	sr.Release(&b, 1<<20)
	// A reader on the same buffers reads a small event into a small
	// buffer, and a large one, 5% larger than the last event detached
	// (90,001 bytes), into one buffer of that size and an eighth more,
	// made at once.
	again := NewSSEReaderBuffers(strings.NewReader("data: x\n\ndata: "+strings.Repeat("r", 94500)+"\n\n"), lim(1<<20, 1<<20, 10), &b)
	if _, err := again.NextShared(); err != nil || cap(again.data) > 4<<10 {
		t.Errorf("a reader on the buffers, a small event: %v, a %d-byte buffer", err, cap(again.data))
	}
	grown := 0
	testHookSSEGrow = func(int) { grown++ }
	defer func() { testHookSSEGrow = nil }()
	if _, err := again.NextShared(); err != nil || cap(again.data) != 90001+90001/8 || grown != 1 {
		t.Errorf("a reader on the buffers, a large event: %v, a %d-byte buffer made in %d arrays, want one of %d", err, cap(again.data), grown, 90001+90001/8)
	}
	if string(ev.Data) != big || len(ev2.Data) != 90000 || strings.Trim(string(ev2.Data), "q") != "" {
		t.Error("detached data was written over")
	}
}
