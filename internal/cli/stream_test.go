package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	if err := e.emitStream("", plain, write); err != nil {
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
	if err := e.emitStream("", redacted, write); err != nil {
		t.Fatal(err)
	}
	if err := e.emitStream("", "-", write); err != nil {
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
	if err := e.emitStream("", failed, func(w io.Writer) error {
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

// TestEmitSnapshotExact: a snapshot is written as made or not at all: a
// run with secrets whose snapshot the redaction would change fails the
// commit, to a file or to stdout, with nothing written and nothing staged
// left, and one the redaction leaves alone is written byte for byte.
func TestEmitSnapshotExact(t *testing.T) {
	const secret = "s3cr3t-value-for-the-snapshot"
	for _, body := range []string{
		`{"tools":[{"name":"a","description":"carrying ` + secret + `"}]}`,
		`{"tools":[{"name":"a","description":"cut ` + secret[:12] + `…"}]}`,
	} {
		for _, target := range []string{"snap.json", "-"} {
			dir := t.TempDir()
			var stdout bytes.Buffer
			e := newEnv(strings.NewReader(""), &stdout, io.Discard)
			e.secrets.Add("a test secret", secret)
			path := target
			if target != "-" {
				path = filepath.Join(dir, target)
			}
			if err := e.emitSnapshot(path, func(w io.Writer) error { _, err := io.WriteString(w, body); return err }); err != nil {
				t.Fatal(err)
			}
			err := e.commit()
			if err == nil || !strings.Contains(err.Error(), "refusing to write") || strings.Contains(err.Error(), secret[:12]) {
				t.Fatalf("%s to %s: commit %v", body, target, err)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 || stdout.Len() != 0 {
				t.Fatalf("%s to %s: %d files left, %d bytes on stdout", body, target, len(left), stdout.Len())
			}
		}
	}
	dir := t.TempDir()
	e := newEnv(strings.NewReader(""), io.Discard, io.Discard)
	e.secrets.Add("a test secret", secret)
	body := `{"tools":[{"name":"a","description":"send Bearer…"}]}`
	path := filepath.Join(dir, "snap.json")
	if err := e.emitSnapshot(path, func(w io.Writer) error { _, err := io.WriteString(w, body); return err }); err != nil {
		t.Fatal(err)
	}
	if err := e.commit(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != body {
		t.Fatalf("written %q, %v", b, err)
	}
}

// TestCommitReportsTheFirstFailure: outputs are staged at once, but the
// failure reported is the first in their order, as when they were written
// one by one: a stream that fails before a target whose directory went
// away is the one named, and nothing is left behind.
func TestCommitReportsTheFirstFailure(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEnv(strings.NewReader(""), io.Discard, io.Discard)
	release := make(chan struct{})
	if err := e.emitStream("", filepath.Join(dir, "first.json"), func(w io.Writer) error {
		<-release // fails only once the later output has been looked at
		io.WriteString(w, "half")
		return errors.New("the writer broke")
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.emit(filepath.Join(sub, "second.json"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(50 * time.Millisecond); close(release) }()
	err := e.commit()
	if err == nil || !strings.Contains(err.Error(), "the writer broke") || !strings.Contains(err.Error(), "first.json") {
		t.Fatalf("commit: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("%d files left", len(left))
	}
}
