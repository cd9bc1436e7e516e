package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmitStream: an output written at commit by a function (a snapshot
// too large to hold) reaches a file as written when the run has nothing to
// redact, is gathered and redacted like any other output when it has, goes
// to stdout gathered, and a function that fails fails the commit with no
// file left behind, staged or not.
func TestEmitStream(t *testing.T) {
	const secret = "s3cr3t-value-for-the-stream"
	body := strings.Repeat("tool bytes ", 300000) + "carrying " + secret + " at the end"
	write := func(w io.Writer) error {
		for chunk := range strings.SplitSeq(body, "carrying") {
			if _, err := io.WriteString(w, chunk); err != nil {
				return err
			}
			if _, err := io.WriteString(w, "carrying"); err != nil {
				return err
			}
		}
		return nil
	}
	want := strings.Repeat("tool bytes ", 300000) + "carrying " + secret + " at the endcarrying"
	dir := t.TempDir()

	var stdout bytes.Buffer
	e := newEnv(strings.NewReader(""), &stdout, io.Discard)
	plain := filepath.Join(dir, "plain.json")
	if err := e.emitStream(plain, write); err != nil {
		t.Fatal(err)
	}
	if err := e.commit(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(plain); err != nil || string(b) != want {
		t.Fatalf("streamed file: %d bytes, %v", len(b), err)
	}

	e = newEnv(strings.NewReader(""), &stdout, io.Discard)
	e.secrets.Add("a test secret", secret)
	redacted := filepath.Join(dir, "redacted.json")
	if err := e.emitStream(redacted, write); err != nil {
		t.Fatal(err)
	}
	if err := e.emitStream("-", write); err != nil {
		t.Fatal(err)
	}
	if err := e.commit(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(redacted)
	if err != nil || strings.Contains(string(b), secret) || !strings.HasPrefix(string(b), "tool bytes tool bytes") {
		t.Fatalf("with a secret: %d bytes, has the secret %v, %v", len(b), strings.Contains(string(b), secret), err)
	}
	if strings.Contains(stdout.String(), secret) || !strings.HasPrefix(stdout.String(), "tool bytes") {
		t.Fatalf("stdout: %d bytes, has the secret %v", stdout.Len(), strings.Contains(stdout.String(), secret))
	}

	e = newEnv(strings.NewReader(""), io.Discard, io.Discard)
	failed := filepath.Join(dir, "failed.json")
	if err := e.emitStream(failed, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("the writer broke")
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.commit(); err == nil || !strings.Contains(err.Error(), "the writer broke") {
		t.Fatalf("a failing stream committed: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, p := range left {
		if base := filepath.Base(p); base != "plain.json" && base != "redacted.json" {
			t.Errorf("left behind: %s", base)
		}
	}
}
