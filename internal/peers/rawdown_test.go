package peers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// rawDownstream sends bytes to the gateway exactly as given — what no SDK
// client would send — over a legacy session: HTTP POSTs to its /mcp, or
// lines to the gateway started as a stdio command.
type rawDownstream struct {
	d      downstream
	client *http.Client
	sid    string

	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	lines [][]byte
	got   chan struct{}
	once  sync.Once
}

const rawRevision = "2025-06-18"

func newRawDownstream(t *testing.T, d downstream) *rawDownstream {
	t.Helper()
	rd := &rawDownstream{d: d, got: make(chan struct{}, 1)}
	if d.url != "" {
		rd.client = &http.Client{Timeout: 30 * time.Second}
	} else {
		rd.start(t)
	}
	init := `{"jsonrpc":"2.0","id":"raw-init","method":"initialize","params":{"protocolVersion":"` + rawRevision + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	if ans := rd.send(t, []byte(init)); !bytes.Contains(ans, []byte(`"result"`)) {
		t.Fatalf("initialize through the gateway: %s", ans)
	}
	rd.send(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return rd
}

func (rd *rawDownstream) start(t *testing.T) {
	t.Helper()
	rd.cmd = exec.Command(rd.d.argv[0], rd.d.argv[1:]...)
	rd.cmd.Env = append(os.Environ(), rd.d.env...)
	rd.cmd.Stderr = &tailBuffer{max: 16 << 10}
	var err error
	if rd.stdin, err = rd.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := rd.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rd.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 32<<20)
		for sc.Scan() {
			rd.mu.Lock()
			rd.lines = append(rd.lines, bytes.Clone(sc.Bytes()))
			rd.mu.Unlock()
			select {
			case rd.got <- struct{}{}:
			default:
			}
		}
	}()
}

// exactID is msg's "id" member read with exact names, as the gateway
// reads it (nil when absent or null: nothing answers by it).
func exactID(msg []byte) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(msg, &env) != nil {
		return nil
	}
	id := env["id"]
	if len(id) == 0 || string(id) == "null" {
		return nil
	}
	return id
}

// send sends one message and returns the answer: the HTTP body, or on
// stdio the line that answers msg's id (nothing for a message without
// one, after a short pause for the gateway to read it).
func (rd *rawDownstream) send(t *testing.T, msg []byte) []byte {
	t.Helper()
	if rd.client != nil {
		return rd.post(t, msg)
	}
	if _, err := rd.stdin.Write(append(bytes.Clone(msg), '\n')); err != nil {
		t.Fatalf("writing to the gateway: %v (stderr: %s)", err, rd.cmd.Stderr.(*tailBuffer).b)
	}
	id := exactID(msg)
	if id == nil {
		time.Sleep(30 * time.Millisecond)
		return nil
	}
	deadline := time.After(20 * time.Second)
	for {
		rd.mu.Lock()
		for i, l := range rd.lines {
			// The answer, or an error with a null id: the gateway could
			// not read this message's id (it does not parse).
			if got := exactID(l); got == nil || bytes.Equal(got, id) {
				rd.lines = append(rd.lines[:i], rd.lines[i+1:]...)
				rd.mu.Unlock()
				return l
			}
		}
		rd.mu.Unlock()
		select {
		case <-rd.got:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no answer to id %s within 20 s for %s", id, msg)
		}
	}
}

func (rd *rawDownstream) post(t *testing.T, msg []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rd.d.url, bytes.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if rd.sid != "" {
		req.Header.Set(mcpwire.HeaderSessionID, rd.sid)
		req.Header.Set(mcpwire.HeaderProtocolVersion, rawRevision)
	}
	resp, err := rd.client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", msg, err)
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get(mcpwire.HeaderSessionID); sid != "" && rd.sid == "" {
		rd.sid = sid
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return body
}

// close ends the session (stdio: closes the gateway's stdin and waits for
// it to exit, so the upstream has handled all it was sent).
func (rd *rawDownstream) close() {
	rd.once.Do(func() {
		if rd.cmd == nil {
			return
		}
		_ = rd.stdin.Close()
		done := make(chan struct{})
		go func() { _ = rd.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = rd.cmd.Process.Kill()
			<-done
		}
	})
}
