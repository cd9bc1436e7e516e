package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// TestListenToolsChanged: a swap of the mock's tools reaches the listener
// as one notification, over 2026-07-28 subscriptions/listen and over a
// legacy session's GET stream; without ListChanged the server offers no
// stream and the error says so.
func TestListenToolsChanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		era  mockserver.Era
	}{{"modern", mockserver.ModernOnly}, {"legacy", mockserver.LegacyOnly}, {"dual", mockserver.DualEra}} {
		t.Run(tc.name, func(t *testing.T) {
			s, url := mockHTTP(t, mockserver.Config{Tools: mockTools("t", 2), Era: tc.era, ListChanged: true})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got := make(chan struct{}, 8)
			done := make(chan error, 1)
			go func() { done <- ListenToolsChanged(ctx, Config{BaseURL: url + "/mcp"}, func() { got <- struct{}{} }) }()
			// The stream is open once the mock has a subscriber; swap
			// until a notification arrives (a swap before the stream is
			// open reaches nobody).
			deadline := time.After(5 * time.Second)
			for i := 0; ; i++ {
				if err := s.SetTools(mockTools("u", 3+i)); err != nil {
					t.Fatal(err)
				}
				select {
				case <-got:
				case err := <-done:
					t.Fatalf("listen ended: %v", err)
				case <-time.After(50 * time.Millisecond):
					continue
				case <-deadline:
					t.Fatal("no list_changed within 5 s")
				}
				break
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("after cancel: %v, want context.Canceled", err)
			}
		})
	}
	t.Run("unsupported", func(t *testing.T) {
		for _, era := range []mockserver.Era{mockserver.ModernOnly, mockserver.LegacyOnly} {
			_, url := mockHTTP(t, mockserver.Config{Tools: mockTools("t", 1), Era: era})
			err := ListenToolsChanged(context.Background(), Config{BaseURL: url + "/mcp", RequestTimeout: 5 * time.Second}, func() {})
			if _, ok := errors.AsType[*ListenUnsupportedError](err); !ok {
				t.Fatalf("%v: %v, want ListenUnsupportedError", era, err)
			}
		}
		if _, ok := errors.AsType[*ListenUnsupportedError](ListenToolsChanged(context.Background(), Config{Command: []string{"true"}}, func() {})); !ok {
			t.Fatal("stdio: want ListenUnsupportedError")
		}
	})
}

// TestListenServerEnds: a server that ends its subscription gracefully
// (the listen result, then the end of the stream) ends the listener with
// nil, so the caller listens again.
func TestListenServerEnds(t *testing.T) {
	s, url := mockHTTP(t, mockserver.Config{Tools: mockTools("t", 1), Era: mockserver.ModernOnly, ListChanged: true})
	done := make(chan error, 1)
	go func() { done <- ListenToolsChanged(context.Background(), Config{BaseURL: url + "/mcp"}, func() {}) }()
	time.Sleep(200 * time.Millisecond)
	s.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a graceful end: %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("listen did not end with the server")
	}
}

// FuzzListenStream: whatever a server sends on its list_changed stream,
// the reader never panics, calls back at most once per event, and ends
// with nil (the end of the stream), a ListenUnsupportedError, a
// ProtocolError or a LimitError within its bounds.
func FuzzListenStream(f *testing.F) {
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{\"notifications\":{\"toolsListChanged\":true}}}\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"x\"}}\n\n"))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{}}\n\n"))
	f.Add([]byte(": comment\n\nevent: other\ndata: x\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := Config{BaseURL: "http://127.0.0.1:1/mcp", MaxResponseBytes: 4096, MaxSSEEvents: 64}.normalize()
		if err != nil {
			t.Fatal(err)
		}
		tr := &httpTransport{cfg: &c, obs: &Observation{}, url: c.BaseURL}
		n := 0
		err = readNotifications(context.Background(), tr, bytes.NewReader(body), methodListen, 1, func() { n++ })
		if n > 64 {
			t.Fatalf("%d callbacks for at most 64 events", n)
		}
		switch err.(type) {
		case nil, *ListenUnsupportedError, *ProtocolError, *LimitError, *UnreachableError:
		default:
			t.Fatalf("unexpected error %T: %v", err, err)
		}
	})
}
