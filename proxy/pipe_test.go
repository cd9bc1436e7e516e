package proxy_test

import (
	"io"
	"os"
)

func ioPipe() (*io.PipeReader, *io.PipeWriter) { return io.Pipe() }

func writeTemp(t interface {
	Helper()
	Fatal(...any)
}, dir, name, data string) string {
	t.Helper()
	p := dir + "/" + name
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
