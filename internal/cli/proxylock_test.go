package cli

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
)

// The gateway on a lock decides external $refs with the lock's pins: under
// fail-closed a tool whose document is not pinned is hidden; once
// lock pin-ref pins it, the reloaded gateway serves it; with --verify-refs
// a document that changed after it was pinned hides it again.
func TestProxyLockRefs(t *testing.T) {
	doc := newDocServer(t, `{"$defs":{"rec":{"type":"string"}}}`)
	lp, docURL := refLock(t, doc)
	listed := func(gw string) []string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: gw})
		if err != nil {
			t.Fatalf("list through the gateway: %v", err)
		}
		tl, err := manifest.ParseToolList(obs.Transcript)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, x := range tl.Tools {
			names = append(names, x.Name)
		}
		slices.Sort(names)
		return names
	}
	gw, _, stop := runProxy(t, "--lock", lp, "--server", "refs", "--listen", "127.0.0.1:0", "--relist-interval", "1ns")
	if got := listed(gw); !slices.Equal(got, []string{"plain"}) {
		t.Fatalf("unpinned ref: the gateway serves %v, want only plain", got)
	}
	if code, _, stderr := run(t, "", "lock", "pin-ref", "refs", docURL, "--lock", lp, "--allow-private-refs", "--by", "alice@example.com"); code != 0 {
		t.Fatalf("pin-ref: exit %d: %s", code, stderr)
	}
	deadline := time.Now().Add(15 * time.Second)
	for got := listed(gw); !slices.Equal(got, []string{"lookup", "plain"}); got = listed(gw) {
		if time.Now().After(deadline) {
			t.Fatalf("pinned ref: the gateway serves %v after the reload", got)
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	// The document changes; a gateway that verifies refs hides the tool.
	doc.set(`{"$defs":{"rec":{}}}`)
	gw2, _, _ := runProxy(t, "--lock", lp, "--server", "refs", "--listen", "127.0.0.1:0", "--verify-refs", "--allow-private-refs")
	if got := listed(gw2); !slices.Equal(got, []string{"plain"}) {
		t.Errorf("changed document under --verify-refs: the gateway serves %v, want only plain", got)
	}
	// --verify-refs without --lock is a usage error.
	if code, _, stderr := run(t, "", "proxy", "--upstream-url", doc.URL, "--verify-refs"); code != 2 || !strings.Contains(stderr, "--lock") {
		t.Errorf("--verify-refs without --lock: exit %d: %s", code, stderr)
	}
}
