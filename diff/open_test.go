//go:build unix

package diff_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/diff"
)

// TestOpenFile: a regular file within the bound is opened, and its reading
// fails should it grow past the bound meanwhile; a named pipe is left to
// the FileReader without being opened (opening it would wait for a
// writer, and closing it would lose one).
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.json")
	if err := os.WriteFile(p, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	open := diff.OpenFile(10)
	f, ok, err := open(p)
	if !ok || err != nil {
		t.Fatalf("a file within the bound: %v %v", ok, err)
	}
	app, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	app.WriteString(`        `)
	app.Close()
	if _, err := io.ReadAll(f); err == nil || !strings.Contains(err.Error(), "grew past") {
		t.Errorf("a file that grew past the bound while read: %v", err)
	}
	f.Close()
	if _, ok, _ := open(p); ok {
		t.Error("a file past the bound was opened")
	}

	fifo := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err) // unix: a temporary directory takes a named pipe
	}
	done := make(chan bool)
	go func() {
		_, ok, _ := diff.OpenFile(1 << 20)(fifo)
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("a named pipe was opened to be read in parts")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OpenFile waited on a named pipe")
	}
}
