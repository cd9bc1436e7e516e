package mockserver

import (
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// AdminHandler returns a handler that replaces the default tool list and
// the surface with the manifest POSTed to it (any form LoadManifest reads)
// — a rug pull, live.
// Mount it on a path of its own (mcpdrift mock-server --admin uses
// /admin/tools); it is not part of ServeHTTP.
//
// It refuses (403) callers that are not on a loopback address, a Host
// header that is not a loopback name (DNS rebinding) and a non-loopback
// Origin; it requires POST (405) and Content-Type application/json (415),
// which a cross-origin HTML form cannot send. The body is bounded by
// MaxAdminBodyBytes (413). A manifest that does not parse is 400 and
// changes nothing. Success is 200 {"tools":N}.
func (s *Server) AdminHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail := func(status int, msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			b := appendJSONString([]byte(`{"error":`), msg)
			_, _ = w.Write(append(b, '}'))
		}
		if !loopbackAddr(r.RemoteAddr) || !loopbackHost(r.Host) {
			fail(http.StatusForbidden, "the admin endpoint answers loopback callers only")
			return
		}
		if o := r.Header.Values("Origin"); len(o) > 0 && (len(o) > 1 || !loopbackOrigin(o[0])) {
			fail(http.StatusForbidden, "Origin not allowed")
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			fail(http.StatusMethodNotAllowed, "POST a manifest")
			return
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			fail(http.StatusUnsupportedMediaType, "Content-Type must be application/json")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxAdminBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				fail(http.StatusRequestEntityTooLarge, "manifest too large")
			} else {
				fail(http.StatusBadRequest, "cannot read the body")
			}
			return
		}
		tools, sf, err := LoadManifest(body)
		if err != nil {
			fail(http.StatusBadRequest, "manifest: "+safetext.Clip(err.Error(), 300))
			return
		}
		if err := s.SetSurface(sf); err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		if err := s.SetTools(tools); err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"tools":` + strconv.Itoa(len(tools)) + `}`))
	})
}

func loopbackAddr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
