//go:build unix

package telemetry

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCertificateFIFORefused: a certificate variable naming a FIFO is
// refused at once; opening it waited for a writer with no bound, before
// any MCP request (found by a review).
func TestCertificateFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ca.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, files := range []TLSFiles{
		{CA: fifo, CAFrom: EnvCertificate},
		{Cert: fifo, CertFrom: EnvClientCertificate, Key: fifo, KeyFrom: EnvClientKey},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := New(&Settings{URL: "https://127.0.0.1:1/v1/traces", ServiceName: "svc", TLS: files}, Options{})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
				t.Errorf("%+v: %v, want refused as not a regular file", files, err)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("%+v: New still blocked after 3 s", files)
		}
	}
}
