package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWritingBackWritesEveryByte: a staged file written through
// writingBack, in writes of every size across its chunks, holds exactly
// what was written; a write that fails reports its error.
func TestWritingBackWritesEveryByte(t *testing.T) {
	want := make([]byte, 3*(8<<20)+12345) // three chunks and some
	for i := range want {
		want[i] = byte(i * 7)
	}
	p := filepath.Join(t.TempDir(), "staged")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := writingBack(f)
	for rest, n := want, 1; len(rest) > 0; n = n*3 + 1 {
		k := min(n, len(rest))
		if m, err := w.Write(rest[:k]); err != nil || m != k {
			t.Fatalf("write of %d bytes: %d, %v", k, m, err)
		}
		rest = rest[k:]
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes, not the %d written", len(got), len(want))
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("a write to a closed file reported no error")
	}
}
