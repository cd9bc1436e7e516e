//go:build unix

package drift_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/drift"
	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// TestReadNamedPipe: a declared snapshot given as a named pipe, larger
// than a pipe's buffer, is read whole, once, through the FileReader.
// Peeking at it does not open it: an open and close can lose a writer
// that has written all and closed, and the read would then wait for ever
// (that race is too narrow to make here; diff's TestOpenFile checks that
// a pipe is not opened to be read in parts).
func TestReadNamedPipe(t *testing.T) {
	src := append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":`), corpus.LeanTools(1000, 1)...), "}}"...)
	tl, err := manifest.ParseToolList(src)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := manifest.MarshalSnapshot("acme", manifest.Identity{Endpoint: "http://127.0.0.1/mcp"}, tl, tl.Completeness)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "acme.snapshot.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err) // unix: a temporary directory takes a named pipe
	}
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Write(snap)
			f.Close()
		}
	}()
	done := make(chan error, 1)
	go func() {
		r := drift.Read(fifo, os.ReadFile, diff.OpenFile(1<<20), nil)
		in, _, err := r.WaitKnown(tl)
		if err == nil && in.ToolCount != len(tl.Tools) {
			t.Errorf("read %d tools of %d", in.ToolCount, len(tl.Tools))
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the read of a named pipe did not end")
	}
}
