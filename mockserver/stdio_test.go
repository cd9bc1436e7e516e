package mockserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/manifest"
)

type stdioConn struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
	stop context.CancelFunc
}

func startStdio(t *testing.T, s *Server) *stdioConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &stdioConn{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1), stop: cancel}
	go func() {
		c.done <- s.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close() })
	return c
}

func (c *stdioConn) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *stdioConn) recv() []byte {
	c.t.Helper()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		b, err := c.out.ReadBytes('\n')
		ch <- res{b, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			c.t.Fatalf("reading stdout: %v", r.err)
		}
		if bytes.Count(r.b, []byte("\n")) != 1 || bytes.ContainsRune(r.b, '\r') {
			c.t.Fatalf("not one line: %q", r.b)
		}
		return r.b[:len(r.b)-1]
	case <-time.After(5 * time.Second):
		c.t.Fatal("no answer on stdout")
	}
	return nil
}

func (c *stdioConn) call(line string) rpcMsg {
	c.t.Helper()
	c.send(line)
	return decode(c.t, c.recv())
}

func wantCode(t *testing.T, m rpcMsg, code int) {
	t.Helper()
	if m.Error == nil || m.Error.Code != code {
		t.Fatalf("want error %d, got %+v / %s", code, m.Error, m.Result)
	}
}

// sameToolsOneLine: the stdio line carries the source's tool bytes with
// CR/LF turned into spaces.
func sameToolsOneLine(t *testing.T, line, source []byte) {
	t.Helper()
	a, err := manifest.ParseToolList(line)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := manifest.ParseToolList(source)
	if len(a.Tools) != len(b.Tools) {
		t.Fatalf("%d tools, want %d", len(a.Tools), len(b.Tools))
	}
	for i := range a.Tools {
		want := bytes.ReplaceAll(b.Tools[i].Raw(), []byte("\n"), []byte(" "))
		if !bytes.Equal(a.Tools[i].Raw(), want) {
			t.Fatalf("tool %d differs", i)
		}
	}
}

func TestStdioModern(t *testing.T) {
	s := MustNew(Config{Tools: v1Tools(t)})
	c := startStdio(t, s)
	wantCode(t, c.call(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`), -32602)
	wantCode(t, c.call(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`), -32602)
	m := c.call(modernBodyV(2, "server/discover", "", "2099-01-01"))
	wantCode(t, m, -32022)
	if !bytes.Contains(m.Error.Data, []byte(`"requested":"2099-01-01"`)) {
		t.Fatalf("data %s", m.Error.Data)
	}
	wantCode(t, c.call(modernBody(3, "ping", "")), -32601)
	m = c.call(modernBody(4, "server/discover", ""))
	if m.Error != nil || !bytes.Contains(m.Result, []byte(`"supportedVersions"`)) {
		t.Fatalf("discover %s", m.Result)
	}
	// A notification gets no reply: the next line answers the next request.
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	c.send(modernBody(5, "tools/list", ""))
	line := c.recv()
	if m := decode(t, line); string(m.ID) != "5" {
		t.Fatalf("answer to %s", m.ID)
	}
	sameToolsOneLine(t, line, examples.V1)
	m = c.call(modernBody(6, "tools/call", `"name":"search_issues"`))
	if string(m.Result) != `{"resultType":"complete","content":[{"type":"text","text":"ok"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpdrift-mockserver","version":"0.0.0"}}}` {
		t.Fatalf("tools/call %s", m.Result)
	}
	wantCode(t, c.call(modernBody(7, "tools/call", `"name":"nope"`)), -32602)
	// Garbage and blank lines.
	m = c.call(`{not json`)
	wantCode(t, m, -32700)
	if string(m.ID) != "null" {
		t.Fatalf("parse error id %s", m.ID)
	}
	c.send("")
	wantCode(t, c.call(`[1]`), -32600)
	c.in.Close()
	if err := <-c.done; err != nil {
		t.Fatalf("ServeStdio at EOF: %v", err)
	}
	l := s.Log()
	if len(l) == 0 || l[0].Transport != "stdio" || l[len(l)-1].Code != -32600 {
		t.Fatalf("stdio log %+v", l)
	}
}

func TestStdioLegacy(t *testing.T) {
	s := MustNew(Config{Tools: v1Tools(t), ConnectionTools: map[int][]json.RawMessage{2: simpleTools("b", 1)}})
	c := startStdio(t, s)
	wantCode(t, c.call(listBody), -32000)
	wantCode(t, c.call(`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`), -32601)
	if m := c.call(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); string(m.Result) != `{}` {
		t.Fatalf("ping %s", m.Result)
	}
	wantCode(t, c.call(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`), -32602)
	m := c.call(legacyInitBody("2025-06-18"))
	if !bytes.Contains(m.Result, []byte(`"protocolVersion":"2025-06-18"`)) {
		t.Fatalf("initialize %s", m.Result)
	}
	wantCode(t, c.call(listBody), -32000) // before notifications/initialized
	wantCode(t, c.call(legacyInitBody("2025-06-18")), -32600)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(listBody)
	line := c.recv()
	sameToolsOneLine(t, line, examples.V1)
	if bytes.Contains(line, []byte(`"resultType"`)) {
		t.Fatal("legacy stdio result has resultType")
	}
	// Modern requests are still served statelessly on a dual-era stdio server.
	if m := c.call(modernBody(9, "server/discover", "")); m.Error != nil {
		t.Fatalf("modern after initialize: %+v", m.Error)
	}

	// A second stdio connection, initialized, is legacy session 2.
	c2 := startStdio(t, s)
	c2.call(legacyInitBody("2025-11-25"))
	c2.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := names(t, listOf(t, c2.call(listBody)).Tools); strings.Join(got, ",") != "b0" {
		t.Fatalf("session 2 list %v", got)
	}
}

func TestStdioEras(t *testing.T) {
	lo := startStdio(t, MustNew(Config{Era: LegacyOnly}))
	wantCode(t, lo.call(modernBody(1, "server/discover", "")), -32601)
	mo := startStdio(t, MustNew(Config{Era: ModernOnly}))
	m := mo.call(legacyInitBody("2025-11-25"))
	wantCode(t, m, -32601)
	if !bytes.Contains(m.Error.Data, []byte(`"supported":["2026-07-28"]`)) {
		t.Fatalf("data %s", m.Error.Data)
	}
	wantCode(t, mo.call(listBody), -32602)
}

func TestStdioLimitsAndCancel(t *testing.T) {
	s := MustNew(Config{MaxBodyBytes: 1024})
	c := startStdio(t, s)
	wantCode(t, c.call(`{"jsonrpc":"2.0","id":1,"method":"tools/list","pad":"`+strings.Repeat("x", 200<<10)+`"}`), -32600)
	if m := c.call(modernBody(2, "tools/list", "")); m.Error != nil {
		t.Fatalf("after a long line: %+v", m.Error)
	}
	c.stop()
	select {
	case err := <-c.done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("ServeStdio after cancel: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not stop")
	}
	// Close stops it too.
	s2 := MustNew(Config{})
	c2 := startStdio(t, s2)
	s2.Close()
	select {
	case err := <-c2.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not stop on Close")
	}
}

func TestStdioHostile(t *testing.T) {
	c := startStdio(t, MustNew(Config{WrongID: true}))
	if m := c.call(modernBody(8, "tools/list", "")); string(m.ID) != "1008" {
		t.Fatalf("id %s", m.ID)
	}
	c = startStdio(t, MustNew(Config{Oversized: 100_000}))
	c.send(modernBody(8, "tools/list", ""))
	line := c.recv()
	if len(line) < 100_000 || !json.Valid(line) {
		t.Fatalf("oversized line %d bytes", len(line))
	}
	c = startStdio(t, MustNew(Config{NeverEndingSSE: true}))
	c.send(modernBody(8, "tools/list", ""))
	if m := c.call(modernBody(9, "server/discover", "")); string(m.ID) != "9" {
		t.Fatalf("never-answered request was answered: %s", m.ID)
	}
}
