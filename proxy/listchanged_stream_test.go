package proxy_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// streamSwap makes the upstream answer the next request of a method, once
// armed, on an event stream that also carries a list_changed — before or
// after the answer — having swapped its tools to next in between: the
// answer is the old list's, the notification says it changed.
type streamSwap struct {
	mock   *mockserver.Server
	next   []json.RawMessage
	method string
	before bool
	armed  atomic.Bool
}

func (sw *streamSwap) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.Method != http.MethodPost || !bytes.Contains(body, []byte(`"method":"`+sw.method+`"`)) || !sw.armed.CompareAndSwap(true, false) {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r) // the answer, from the old list
		if err := sw.mock.SetTools(sw.next); err != nil {
			panic(err)
		}
		answer := "data: " + strings.ReplaceAll(strings.TrimSpace(rec.Body.String()), "\n", " ") + "\n\n"
		note := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if sw.before {
			io.WriteString(w, note+answer)
		} else {
			io.WriteString(w, answer+note)
		}
	})
}

// modernPost posts one 2026-07-28 request (stateless) and returns the
// answer's body.
func modernPost(t *testing.T, url, id, method, params, name string) string {
	t.Helper()
	extra := map[string]string{}
	if name != "" {
		extra["Mcp-Name"] = name
	}
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params + `}}`
	c := &legacyClient{t: t, url: url}
	status, out, _, err := c.post(body, mergeHeaders(extra, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}))
	if err != nil || status == 0 {
		t.Fatalf("%s: %d %v", method, status, err)
	}
	return out
}

func mergeHeaders(a, b map[string]string) map[string]string {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// Every list_changed leads to a re-observation (issue 29, item 4),
// wherever it arrives: after a call's result in the call's own stream
// (legacy and 2026-07-28), and in the stream of a page of the gateway's
// own listing, after or before the page. The upstream swaps in the rug
// pull; the poisoned tools must stop being served and their calls must
// not reach it. Before, the rest of a stream after its answer was closed
// unread, and a list_changed during a listing was taken as answered by
// that very listing: the poisoned list was served on.
func TestListChangedOnAResponseStream(t *testing.T) {
	v2, err := mockserver.LoadToolsFile(exampleV2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method string
		before       bool
		modern       bool
	}{
		{"after a call's result, legacy", "tools/call", false, false},
		{"after a call's result, 2026-07-28", "tools/call", false, true},
		{"after a listing's page", "tools/list", false, false},
		{"before a listing's page", "tools/list", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sw := &streamSwap{next: v2, method: tc.method, before: tc.before}
			mock, up, ul := loggedUpstream(t, mockserver.Config{}, exampleV1, sw.wrap)
			sw.mock = mock
			_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
				Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
			list, call := legacyListCall(t, url)
			if tc.modern {
				list, call = modernListCall(t, url)
			}
			if tc.method == "tools/list" {
				sw.armed.Store(true)
			}
			if got := list(); !slices.Contains(got, "search_issues") {
				t.Fatalf("the approved list: %v", got)
			}
			if tc.method == "tools/call" {
				sw.armed.Store(true)
				if got := call("list_branches", `{"repo":"a/b"}`); !strings.Contains(got, `"result"`) {
					t.Fatalf("the call: %s", got)
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for got := list(); slices.Contains(got, "search_issues"); got = list() {
				if time.Now().After(deadline) {
					t.Fatalf("the poisoned tools are still served: %v", got)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if got := call("search_issues", `{"repo":"a/b","query":"x"}`); !strings.Contains(got, `"code":-32602`) {
				t.Errorf("a call of the poisoned tool: %s", got)
			}
			if n := ul.count("tools/call", "search_issues"); n != 0 {
				t.Errorf("the upstream saw %d calls of the poisoned tool", n)
			}
			if n := ul.count("tools/list", ""); n < 2 {
				t.Errorf("the upstream was listed %d times: no re-observation", n)
			}
		})
	}
}

// legacyListCall opens a legacy session and returns its list and call.
func legacyListCall(t *testing.T, url string) (func() []string, func(name, args string) string) {
	c := newLegacyClient(t, url)
	list := func() []string {
		_, body, _, _ := c.post(`{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{}}`, nil)
		return servedNames(t, body)
	}
	call := func(name, args string) string {
		_, body, _, _ := c.post(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`, nil)
		return body
	}
	return list, call
}

// modernListCall is legacyListCall for stateless 2026-07-28 requests.
func modernListCall(t *testing.T, url string) (func() []string, func(name, args string) string) {
	list := func() []string {
		return servedNames(t, modernPost(t, url, `"l"`, "tools/list", modernMeta, ""))
	}
	call := func(name, args string) string {
		return modernPost(t, url, `"c"`, "tools/call", `"name":"`+name+`","arguments":`+args+`,`+modernMeta, name)
	}
	return list, call
}

func servedNames(t *testing.T, body string) []string {
	t.Helper()
	var r struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("tools/list: %v: %s", err, clipped(body))
	}
	var out []string
	for _, tl := range r.Result.Tools {
		out = append(out, tl.Name)
	}
	return out
}
