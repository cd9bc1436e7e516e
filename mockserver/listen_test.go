package mockserver

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSubscriptionsListen: a 2026-07-28 subscriptions/listen stream is
// acknowledged with the honoured subset, then carries one
// notifications/tools/list_changed per swap, tagged with the listen
// request's id; without ListChanged, listen is -32601 (404).
func TestSubscriptionsListen(t *testing.T) {
	s, ts := newHTTP(t, Config{Tools: simpleTools("a", 1), Era: ModernOnly, ListChanged: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(modernBody(7, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`)))
	req.Header = modernHeaders("subscriptions/listen", "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	next := func() string {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				return strings.TrimSpace(d)
			}
		}
	}
	const ack = `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"notifications":{"toolsListChanged":true}}}`
	if got := next(); got != ack {
		t.Fatalf("first event %s, want %s", got, ack)
	}
	if err := s.SetTools(simpleTools("b", 2)); err != nil {
		t.Fatal(err)
	}
	const changed = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`
	if got := next(); got != changed {
		t.Fatalf("after a swap %s, want %s", got, changed)
	}

	_, off := newHTTP(t, Config{Tools: simpleTools("a", 1), Era: ModernOnly})
	wantErr(t, post(t, off.URL, modernBody(1, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`), modernHeaders("subscriptions/listen", "")), 404, -32601)
}
