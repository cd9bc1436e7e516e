package mcpclient

import (
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
