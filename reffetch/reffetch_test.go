package reffetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var loopback = Options{AllowPrivate: true, Timeout: 2 * time.Second}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func TestFetchDigestsBytesReceived(t *testing.T) {
	body := `{"$defs":{"x":{"type":"string"}}}` + "\n"
	var enc string
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		enc = r.Header.Get("Accept-Encoding")
		if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
			t.Error("a credential was sent")
		}
		fmt.Fprint(w, body)
	})
	d, err := Fetch(context.Background(), s.URL+"/schema.json", loopback)
	if err != nil {
		t.Fatal(err)
	}
	if d.SHA256 != Digest([]byte(body)) || d.Bytes != int64(len(body)) || d.Final != s.URL+"/schema.json" {
		t.Errorf("got %+v, want digest %s of %d bytes", d, Digest([]byte(body)), len(body))
	}
	if enc != "identity" {
		t.Errorf("Accept-Encoding %q, want identity", enc)
	}
}

func TestFetchTooLarge(t *testing.T) {
	big := strings.Repeat("x", 2048)
	declared := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, big) })
	chunked := serve(t, func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 4; i++ {
			fmt.Fprint(w, big[:512])
			w.(http.Flusher).Flush() // no Content-Length
		}
	})
	opt := loopback
	opt.MaxBytes = 1024
	for _, u := range []string{declared.URL, chunked.URL} {
		if _, err := Fetch(context.Background(), u, opt); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v, want ErrTooLarge", u, err)
		}
	}
	// Exactly the limit is fine.
	opt.MaxBytes = 2048
	if _, err := Fetch(context.Background(), chunked.URL, opt); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}

func TestFetchSlow(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	headers := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	body := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		fmt.Fprint(w, "{")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	opt := loopback
	opt.Timeout = 200 * time.Millisecond
	for _, u := range []string{headers.URL, body.URL} {
		start := time.Now()
		_, err := Fetch(context.Background(), u, opt)
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("%s: %v, want ErrTimeout", u, err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%s: took %v with a 200 ms timeout", u, el)
		}
	}
}

func TestFetchRedirects(t *testing.T) {
	var other *httptest.Server
	other = serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "elsewhere") })
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/doc.json", http.StatusFound)
		case "/port":
			http.Redirect(w, r, other.URL+"/doc.json", http.StatusFound)
		case "/host":
			// The same server under another name: another origin.
			u, _ := url.Parse("http://" + r.Host)
			http.Redirect(w, r, "http://localhost:"+u.Port()+"/doc.json", http.StatusFound)
		case "/scheme":
			http.Redirect(w, r, "https://"+r.Host+"/doc.json", http.StatusFound)
		case "/userinfo":
			http.Redirect(w, r, "http://user:s3cret@"+r.Host+"/doc.json", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/doc.json":
			fmt.Fprint(w, "{}")
		}
	})
	d, err := Fetch(context.Background(), s.URL+"/same", loopback)
	if err != nil || d.Final != s.URL+"/doc.json" || d.SHA256 != Digest([]byte("{}")) {
		t.Fatalf("same-origin redirect: %+v %v", d, err)
	}
	for _, p := range []string{"/port", "/host", "/scheme", "/loop", "/userinfo"} {
		_, err := Fetch(context.Background(), s.URL+p, loopback)
		if !errors.Is(err, ErrRedirect) || strings.Contains(fmt.Sprint(err), "s3cret") {
			t.Errorf("%s: %v, want ErrRedirect", p, err)
		}
	}
	// None allowed.
	opt := loopback
	opt.MaxRedirects = -1
	if _, err := Fetch(context.Background(), s.URL+"/same", opt); !errors.Is(err, ErrRedirect) {
		t.Errorf("no redirects: %v", err)
	}
}

func TestFetchStatus(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	if _, err := Fetch(context.Background(), s.URL, loopback); !errors.Is(err, ErrStatus) || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: %v", err)
	}
	gz := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		fmt.Fprint(w, "\x1f\x8b")
	})
	if _, err := Fetch(context.Background(), gz.URL, loopback); err == nil || !strings.Contains(err.Error(), "Content-Encoding") {
		t.Errorf("gzip: %v", err)
	}
}

// Without AllowPrivate, loopback is refused however it is written: the
// literal (before anything is sent), a name that resolves to it (at
// connect time, in the dialer's Control hook), and the IPv4-mapped IPv6
// form. Nothing reaches the server.
func TestFetchRefusesPrivate(t *testing.T) {
	var hits atomic.Int32
	s := serve(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1); fmt.Fprint(w, "{}") })
	port := s.Listener.Addr().(*net.TCPAddr).Port
	for _, u := range []string{
		s.URL + "/a.json",
		fmt.Sprintf("http://localhost:%d/a.json", port),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/a.json", port),
		fmt.Sprintf("http://[::1]:%d/a.json", port),
		fmt.Sprintf("http://0.0.0.0:%d/a.json", port),
	} {
		_, err := Fetch(context.Background(), u, Options{Timeout: 2 * time.Second})
		var ae *AddressError
		if !errors.Is(err, ErrPrivateAddress) || !errors.As(err, &ae) {
			t.Errorf("%s: %v, want a refused address", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
	// The hook itself refuses a resolved name (the literal pre-check does
	// not see names): localhost reaches control, which refuses it.
	if err := control(false)("tcp", fmt.Sprintf("127.0.0.1:%d", port), nil); !errors.Is(err, ErrPrivateAddress) {
		t.Errorf("control: %v", err)
	}
	if err := control(false)("tcp6", fmt.Sprintf("[::ffff:127.0.0.1]:%d", port), nil); !errors.Is(err, ErrPrivateAddress) {
		t.Errorf("control mapped: %v", err)
	}
	if err := control(false)("tcp", "93.184.215.14:443", nil); err != nil {
		t.Errorf("control public: %v", err)
	}
	// With AllowPrivate the name works.
	if _, err := Fetch(context.Background(), fmt.Sprintf("http://localhost:%d/a.json", port), loopback); err != nil {
		t.Errorf("allowed: %v", err)
	}
}

func TestRefused(t *testing.T) {
	refused := []string{
		"127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "0.0.0.0", "0.1.2.3", "100.64.0.1", "192.0.0.8", "198.18.0.1",
		"224.0.0.1", "239.255.255.250", "255.255.255.255", "240.0.0.1",
		"::", "::1", "fe80::1", "fe80::1%eth0", "fc00::1", "fd12:3456::1", "ff02::1", "ff05::2", "fec0::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::127.0.0.1", "::8.8.8.8",
		"64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b:1::1", "2002:7f00:1::1", "2002:c0a8:101::1", "100::1",
	}
	for _, a := range refused {
		if why, r := Refused(netip.MustParseAddr(a)); !r || why == "" {
			t.Errorf("%s: not refused", a)
		}
	}
	for _, a := range []string{"8.8.8.8", "93.184.215.14", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"} {
		if why, r := Refused(netip.MustParseAddr(a)); r {
			t.Errorf("%s: refused (%s)", a, why)
		}
	}
	if _, r := Refused(netip.Addr{}); !r {
		t.Error("the zero address is not refused")
	}
}

func TestCheckURL(t *testing.T) {
	for _, u := range []string{"", "schema.json", "/a.json", "file:///etc/passwd", "ftp://x/a", "https://user:pw@example.com/a", "https:///a", "mailto:x@example.com", "http://:80/"} {
		if _, err := CheckURL(u); !errors.Is(err, ErrBadURL) {
			t.Errorf("%q: %v", u, err)
		}
		if _, err := Fetch(context.Background(), u, loopback); !errors.Is(err, ErrBadURL) {
			t.Errorf("fetch %q: %v", u, err)
		}
	}
	if _, err := CheckURL("https://user:s3cret@example.com/a"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("user info: %v", err)
	}
	if _, err := CheckURL("https://schemas.example.com/a.json?v=2"); err != nil {
		t.Error(err)
	}
}

func TestDigestReader(t *testing.T) {
	d, n, err := DigestReader(strings.NewReader("abc"), 3)
	if err != nil || n != 3 || d != Digest([]byte("abc")) {
		t.Errorf("%s %d %v", d, n, err)
	}
	if _, _, err := DigestReader(strings.NewReader("abcd"), 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	if Digest(nil) != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Error(Digest(nil))
	}
}

// FuzzCheckURL: CheckURL never panics, and what it accepts is an absolute
// http(s) URL with a host and no user info, whose origin is stable.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://schemas.example.com/a.json#/x", "http://[::ffff:127.0.0.1]:80/", "https://u@h/", "HTTP://Example.COM:443/a", "//h/a", "https://h:99999/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := CheckURL(s)
		if err != nil {
			return
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
			t.Fatalf("accepted %q: %+v", s, u)
		}
		if origin(u) != origin(u) || !strings.HasPrefix(origin(u), u.Scheme+"://") {
			t.Fatalf("origin of %q: %s", s, origin(u))
		}
	})
}
