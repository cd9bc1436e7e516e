package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/schemas"
	"github.com/mcpdrift/mcpdrift/store"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type watchEvent struct {
	Seq            int    `json:"seq"`
	Server         string `json:"server"`
	Kind           string `json:"kind"`
	Trigger        string `json:"trigger"`
	Decision       string `json:"decision"`
	ManifestDigest struct {
		Old, New string
	} `json:"manifest_digest"`
	Tools struct {
		Added, Removed []struct{ Name, Digest string }
		Changed        []struct{ Name, Old, New string }
	} `json:"tools"`
}

// events parses every complete NDJSON line, validating each against the
// schema.
func events(t *testing.T, out string) []watchEvent {
	t.Helper()
	var evs []watchEvent
	for _, line := range strings.SplitAfter(out, "\n") {
		if !strings.HasSuffix(line, "\n") {
			break
		}
		var doc any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if err := schemas.Validate(schemas.WatchEvent, doc); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		var ev watchEvent
		_ = json.Unmarshal([]byte(line), &ev)
		evs = append(evs, ev)
	}
	return evs
}

// startWatch runs mcpdrift watch until the returned stop is called; it
// returns stdout, stderr and the exit code channel.
func startWatch(t *testing.T, args ...string) (out, errOut *syncBuffer, stop func() int) {
	t.Helper()
	out, errOut = &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() {
		code <- MainContext(ctx, append([]string{"watch"}, args...), strings.NewReader(""), out, errOut)
	}()
	var once sync.Once
	c := -1
	stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case c = <-code:
			case <-time.After(10 * time.Second):
				t.Fatal("watch did not stop")
			}
		})
		return c
	}
	t.Cleanup(func() { stop() })
	return out, errOut, stop
}

// waitFor polls until cond holds on the parsed events.
func waitFor(t *testing.T, out *syncBuffer, within time.Duration, what string, cond func([]watchEvent) bool) []watchEvent {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		evs := events(t, out.String())
		if cond(evs) {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v; events:\n%s", what, within, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hasKind(kind, trigger string) func([]watchEvent) bool {
	return func(evs []watchEvent) bool {
		for _, e := range evs {
			if e.Kind == kind && (trigger == "" || e.Trigger == trigger) {
				return true
			}
		}
		return false
	}
}

func mockManifest(t testing.TB, path string) []json.RawMessage {
	t.Helper()
	tools, err := mockserver.LoadToolsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// TestWatchSeesChange: a tool changed on the server is one changed event
// within the schedule (ttlMs 0 held at --min-interval 100 ms, plus at most
// 20% jitter), naming the tool and the decision; the server's ttl is
// honoured (no event while unchanged); the bearer token never appears.
func TestWatchSeesChange(t *testing.T) {
	const token = "watch-secret-token-0123456789"
	s, url := mock(t, mockserver.Config{RequireAuth: token}, exampleV1)
	out, errOut, stop := startWatch(t, "--url", url, "--header", "Authorization=Bearer "+token, "--min-interval", "100ms", "--no-listen")
	waitFor(t, out, 5*time.Second, "observed event", hasKind("observed", "start"))
	time.Sleep(300 * time.Millisecond)
	if n := len(events(t, out.String())); n != 1 {
		t.Fatalf("%d events while nothing changed:\n%s", n, out.String())
	}
	if err := s.SetTools(mockManifest(t, exampleV2)); err != nil {
		t.Fatal(err)
	}
	changedAt := time.Now()
	evs := waitFor(t, out, 5*time.Second, "changed event", hasKind("changed", "ttl"))
	if el := time.Since(changedAt); el > 2*time.Second {
		t.Fatalf("the change took %v to be seen", el)
	}
	ch := evs[len(evs)-1]
	if ch.Decision != "review" && ch.Decision != "deny" || ch.ManifestDigest.Old == "" || ch.ManifestDigest.Old == ch.ManifestDigest.New || len(ch.Tools.Changed)+len(ch.Tools.Added)+len(ch.Tools.Removed) == 0 {
		t.Fatalf("changed event %+v", ch)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if strings.Contains(out.String()+errOut.String(), token) {
		t.Fatal("the token was written")
	}
}

// TestWatchListChanged: with a ttl of an hour, a list_changed over
// subscriptions/listen (modern) or the GET stream (legacy) starts an
// observation at once.
func TestWatchListChanged(t *testing.T) {
	for _, era := range []mockserver.Era{mockserver.ModernOnly, mockserver.LegacyOnly} {
		t.Run(era.String(), func(t *testing.T) {
			s, url := mock(t, mockserver.Config{ListChanged: true, TTLMs: 3600000, Era: era}, exampleV1)
			out, errOut, stop := startWatch(t, "--url", url, "--min-interval", "1h", "--interval", "1h")
			waitFor(t, out, 5*time.Second, "observed event", hasKind("observed", ""))
			// The listener opens its stream after the first listing;
			// swap until the notification gets through.
			deadline := time.Now().Add(5 * time.Second)
			for i := 0; !hasKind("changed", "list_changed")(events(t, out.String())); i++ {
				if time.Now().After(deadline) {
					t.Fatalf("no list_changed event:\n%s\n%s", out.String(), errOut.String())
				}
				tools := mockManifest(t, exampleV2)
				if i%2 == 1 {
					tools = mockManifest(t, exampleV1)
				}
				if err := s.SetTools(tools); err != nil {
					t.Fatal(err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if code := stop(); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
		})
	}
}

// TestWatchWebhook: a webhook that is down neither stops nor delays the
// watch (events keep coming on stdout); once it is back it receives them.
func TestWatchWebhook(t *testing.T) {
	var up atomic.Bool
	var mu sync.Mutex
	var got []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
	}))
	defer hook.Close()
	s, url := mock(t, mockserver.Config{}, exampleV1)
	out, errOut, stop := startWatch(t, "--url", url, "--webhook", hook.URL, "--min-interval", "50ms", "--no-listen")
	waitFor(t, out, 5*time.Second, "observed event", hasKind("observed", ""))
	if err := s.SetTools(mockManifest(t, exampleV2)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, out, 5*time.Second, "changed event while the webhook is down", hasKind("changed", ""))
	up.Store(true)
	deadline := time.Now().Add(8 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook received %d events after coming back\n%s", n, errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(got[0], `"kind":"observed"`) || !strings.Contains(got[1], `"kind":"changed"`) {
		t.Fatalf("webhook got %q", got)
	}
}

// TestWatchUnreachable: a server that goes away is one unreachable event,
// and recovered when it is back.
func TestWatchUnreachable(t *testing.T) {
	var down atomic.Bool
	s := mockserver.MustNew(mockserver.Config{Tools: mockManifest(t, exampleV1)})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close()
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer ts.Close()
	out, _, stop := startWatch(t, "--url", ts.URL, "--min-interval", "50ms", "--backoff-min", "50ms", "--no-listen")
	waitFor(t, out, 5*time.Second, "observed", hasKind("observed", ""))
	down.Store(true)
	waitFor(t, out, 5*time.Second, "unreachable", hasKind("unreachable", ""))
	down.Store(false)
	evs := waitFor(t, out, 5*time.Second, "recovered", hasKind("recovered", "retry"))
	n := 0
	for _, e := range evs {
		if e.Kind == "unreachable" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d unreachable events for one streak", n)
	}
	stop()
}

// TestWatchUsage: bad flags are exit 2.
func TestWatchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"watch"},
		{"watch", "--url", "http://127.0.0.1:1/mcp", "--url", "http://127.0.0.1:1/mcp"},
		{"watch", "--url", "http://127.0.0.1:1/mcp", "--backoff-min", "0s"},
		{"watch", "--url", "ftp://x/"},
		{"watch", "--url", "http://127.0.0.1:1/mcp", "--min-interval", "2h", "--max-interval", "1h"},
		{"watch", "--url", "http://127.0.0.1:1/mcp", "--webhook", "http://user:pw@127.0.0.1:1/"},
	} {
		if code, _, stderr := run(t, "", args...); code != ExitUsage || strings.Contains(stderr, "pw@") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// TestWatchSIGTERM: the command as a process of its own ends on SIGTERM
// with exit 0, after its first event.
func TestWatchSIGTERM(t *testing.T) {
	if os.Getenv("MCPDRIFT_TEST_WATCH_ARGS") != "" {
		t.Skip("helper")
	}
	_, url := mock(t, mockserver.Config{}, exampleV1)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestWatchHelperProcess$")
	cmd.Env = append(os.Environ(), "MCPDRIFT_TEST_WATCH_ARGS="+strings.Join([]string{"watch", "--url", url, "--min-interval", "1h"}, "\x1f"))
	stdout, _ := cmd.StdoutPipe()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, `"kind":"observed"`) {
		_ = cmd.Process.Kill()
		t.Fatalf("first line %q: %v\n%s", line, err, stderr.String())
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("no exit within 10 s of SIGTERM")
	}
	if !strings.Contains(stderr.String(), "stopped") {
		t.Fatalf("stderr: %s", stderr.String())
	}
}

// TestWatchHelperProcess is the process TestWatchSIGTERM starts.
func TestWatchHelperProcess(t *testing.T) {
	args := os.Getenv("MCPDRIFT_TEST_WATCH_ARGS")
	if args == "" {
		t.Skip("run by TestWatchSIGTERM")
	}
	os.Exit(Main(strings.Split(args, "\x1f"), os.Stdin, os.Stdout, os.Stderr))
}

// TestWatchLockStore: watching a lock decides every observation against
// the server's entry (the first one allowed, the rug pull not), and
// --store records the first observation and the change, as scans of their
// own.
func TestWatchLockStore(t *testing.T) {
	s, u := mock(t, mockserver.Config{}, exampleV1)
	lp := filepath.Join(t.TempDir(), "mcpdrift.lock")
	if code, _, stderr := run(t, "", "lock", "add", "acme", "--lock", lp, "--url", u, "--by", "alice@example.com"); code != 0 {
		t.Fatalf("lock add: %d %s", code, stderr)
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	out, errOut, stop := startWatch(t, "--lock", lp, "--store", db, "--min-interval", "50ms", "--no-listen")
	evs := waitFor(t, out, 5*time.Second, "observed", hasKind("observed", ""))
	if evs[0].Server != "acme" || evs[0].Decision != "allow" {
		t.Fatalf("first event %+v", evs[0])
	}
	if err := s.SetTools(mockManifest(t, exampleV2)); err != nil {
		t.Fatal(err)
	}
	evs = waitFor(t, out, 5*time.Second, "changed", hasKind("changed", ""))
	if ch := evs[len(evs)-1]; ch.Decision == "allow" || ch.Decision == "" {
		t.Fatalf("the rug pull against the lock: %+v", ch)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	st, err := store.Open(context.Background(), db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	scans, err := st.Scans(context.Background(), 100)
	if err != nil || len(scans) != 2 {
		t.Fatalf("%d scans recorded (want the first observation and the change): %v", len(scans), err)
	}
	var digests []string
	for _, sc := range scans {
		obs, err := st.Observations(context.Background(), sc.ID)
		if err != nil || len(obs) != 1 || obs[0].Server != "acme" {
			t.Fatalf("scan %d: %+v %v", sc.ID, obs, err)
		}
		digests = append(digests, obs[0].ManifestDigest)
	}
	if digests[0] == digests[1] {
		t.Fatal("the change was not recorded")
	}
}
