package mcpclient

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAllEvents returns "type|data" of each event and the final error.
func readAllEvents(in string, maxBytes int64, maxLine, maxEvents int) ([]string, error) {
	sr := newSSEReader(strings.NewReader(in), "m", maxBytes, maxLine, maxEvents)
	var out []string
	for {
		ev, err := sr.next()
		if err != nil {
			return out, err
		}
		out = append(out, ev.typ+"|"+string(ev.data))
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
	}
	for _, c := range cases {
		got, err := readAllEvents(c.in, 1<<20, 1<<20, 100)
		if err != io.EOF {
			t.Errorf("%q: err %v", c.in, err)
		}
		if strings.Join(got, "¶") != strings.Join(c.want, "¶") {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSSEReaderOneByteReads(t *testing.T) {
	in := "data: a\r\n\r\n: c\r\ndata: {\"x\":1}\r\rdata: b\n\n"
	sr := newSSEReader(iotest.OneByteReader(strings.NewReader(in)), "m", 1<<20, 1<<20, 100)
	var got []string
	for {
		ev, err := sr.next()
		if err != nil {
			break
		}
		got = append(got, string(ev.data))
	}
	if strings.Join(got, ",") != `a,{"x":1},b` {
		t.Errorf("got %q", got)
	}
}

func TestSSEReaderLimits(t *testing.T) {
	var le *LimitError
	_, err := readAllEvents("data: "+strings.Repeat("x", 100)+"\n\n", 1<<20, 50, 100)
	if !errors.As(err, &le) || le.Kind != LimitResponseBytes || le.Max != 50 {
		t.Errorf("line: %v", err)
	}
	_, err = readAllEvents(strings.Repeat("data: x\n\n", 100), 200, 1<<20, 1000)
	if !errors.As(err, &le) || le.Kind != LimitResponseBytes || le.Max != 200 {
		t.Errorf("bytes: %v", err)
	}
	got, err := readAllEvents(strings.Repeat("data: x\n\n", 100), 1<<20, 1<<20, 10)
	if !errors.As(err, &le) || le.Kind != LimitSSEEvents || len(got) != 10 {
		t.Errorf("events: %d %v", len(got), err)
	}
	// Comments count as bytes, so a stream of keep-alives is bounded too.
	_, err = readAllEvents(strings.Repeat(": ping\n", 1000), 500, 1<<20, 10)
	if !errors.As(err, &le) || le.Kind != LimitResponseBytes {
		t.Errorf("comments: %v", err)
	}
	// Priming events and data-less blocks count as events.
	_, err = readAllEvents(strings.Repeat("id: 1\ndata:\n\n", 20), 1<<20, 1<<20, 10)
	if !errors.As(err, &le) || le.Kind != LimitSSEEvents {
		t.Errorf("priming: %v", err)
	}
}

func TestSSEReaderDataIsCopied(t *testing.T) {
	sr := newSSEReader(strings.NewReader("data: first\n\ndata: second\n\n"), "m", 1<<20, 1<<20, 10)
	a, _ := sr.next()
	b, _ := sr.next()
	if string(a.data) != "first" || string(b.data) != "second" || bytes.Equal(a.data, b.data) {
		t.Errorf("%q %q", a.data, b.data)
	}
}
