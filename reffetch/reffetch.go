// Package reffetch fetches the external document a tool's $ref names, once,
// with bounds, so that its SHA-256 can be pinned in the lock (mcpdrift lock
// pin-ref) or compared with the pin (--verify-refs on lock check and
// proxy). Nothing else in mcpdrift fetches a referenced document, and
// nothing here is called implicitly.
//
// The bounds of one fetch:
//
//   - size: at most Options.MaxBytes of body (default 4 MiB); a declared
//     Content-Length beyond it is refused before the body is read, and a
//     body that runs past it is refused when it does;
//   - time: the whole fetch (connect, TLS, headers and body) within
//     Options.Timeout (default 10 s) and the caller's context; a fetch
//     that answers a 401 (Options.Auth) has each of its two requests
//     within it, and the authorization between them within the
//     Authorizer's own bounds;
//   - redirects: at most Options.MaxRedirects (default 3), and only to the
//     ref's own origin (the same scheme, host and port): a redirect
//     elsewhere, a downgrade to http included, is refused; with a token,
//     only to a URL the token's resource covers;
//   - addresses: a private, loopback, link-local, unspecified, multicast
//     or otherwise non-public address (also in IPv4-mapped, IPv4-
//     compatible, NAT64 and 6to4 IPv6 forms) is refused unless
//     Options.AllowPrivate. The check is made on the address actually
//     dialed (a net.Dialer Control hook, after name resolution), so a
//     name that resolves — or is re-bound between two resolutions — to
//     an internal address is refused too; a literal address in the URL
//     is refused before anything is sent.
//
// No proxy from the environment is used (a proxy would dial in our place,
// and the address check could not see where), no cookie is sent, and
// content encoding is refused (Accept-Encoding: identity, with Go's
// transparent decompression off), so the digest is of the bytes received.
//
// No credential is sent, but for one case: a document that answers 401
// when Options.Auth is set (an OAuth session of the run) is asked for
// again, once, with the token Auth got for the document's own resource;
// the token goes only to URLs that resource covers (see Authorizer).
package reffetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Defaults of Options.
const (
	DefaultMaxBytes     = 4 << 20
	DefaultTimeout      = 10 * time.Second
	DefaultMaxRedirects = 3
)

// Options bound a fetch. The zero value is the defaults.
type Options struct {
	MaxBytes int64         // 0: DefaultMaxBytes
	Timeout  time.Duration // 0: DefaultTimeout
	// MaxRedirects is how many same-origin redirects are followed (0:
	// DefaultMaxRedirects; negative: none).
	MaxRedirects int
	// AllowPrivate allows private, loopback, link-local and the other
	// non-public addresses (--allow-private-refs).
	AllowPrivate bool
	// Auth, when set, answers a 401 of the document (package oauth's
	// DocumentAuth); nil: a document that asks for authorization is not
	// fetched.
	Auth Authorizer
}

// Authorizer gets a token for a document that asks for one (a 401). The
// document is asked for first without a credential; on a 401, Challenged
// is asked once, and the URL that answered is asked again with the
// Authorization it returns, only if Covers(resource, URL) holds, and a
// redirect is then followed only to a URL the resource covers too.
type Authorizer interface {
	// Challenged answers the 401 of a GET of url carrying these
	// WWW-Authenticate values: the Authorization header value to send
	// (a token for resource, the resource the document's own protected
	// resource metadata names), or why none is sent. rt is the fetch's
	// own transport (no proxy, the address check): a request the
	// document's answer leads to (its resource metadata) goes through
	// it. Each request of the fetch is bounded by Options.Timeout; the
	// authorization in between by the Authorizer's own bounds.
	Challenged(ctx context.Context, url string, wwwAuthenticate []string, rt http.RoundTripper) (resource, authorization string, err error)
	// Covers reports whether a token issued for resource may be sent to
	// url (package oauth's Covers).
	Covers(resource, url string) bool
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	switch {
	case o.MaxRedirects == 0:
		o.MaxRedirects = DefaultMaxRedirects
	case o.MaxRedirects < 0:
		o.MaxRedirects = 0
	}
	return o
}

// Document is what a fetch got.
type Document struct {
	URL string // as asked
	// Final is where the bytes came from (URL, or a same-origin
	// redirect's target).
	Final  string
	SHA256 string // "sha256:" and 64 lowercase hex digits
	Bytes  int64
}

// Errors a fetch can fail with (errors.Is).
var (
	ErrBadURL         = errors.New("not an absolute http or https URL without user info")
	ErrPrivateAddress = errors.New("a private, loopback, link-local or other non-public address")
	ErrTooLarge       = errors.New("the document is larger than the limit")
	ErrRedirect       = errors.New("a redirect the fetch does not follow")
	ErrStatus         = errors.New("the server did not answer 200 OK")
	ErrTimeout        = errors.New("the fetch did not finish in time")
	// ErrUnauthorized is a 401 that was not answered (no Options.Auth,
	// or it gave no token), or answered by a token and given again; the
	// error says why. It is an ErrStatus too.
	ErrUnauthorized error = statusError("the document asks for authorization")
)

// statusError is an error that is an ErrStatus too.
type statusError string

func (e statusError) Error() string        { return string(e) }
func (e statusError) Is(target error) bool { return target == ErrStatus }

// AddressError is a refused address: which, and why.
type AddressError struct {
	Addr netip.Addr
	Why  string
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("the address %s is %s: refused (a referenced document is fetched only from a public address)", e.Addr, e.Why)
}

func (e *AddressError) Unwrap() error { return ErrPrivateAddress }

// Digest is the digest of b as the lock writes it.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// DigestReader reads r to its end, at most max bytes (0: DefaultMaxBytes),
// and returns the digest of what it read and how many bytes; more than
// max is ErrTooLarge.
func DigestReader(r io.Reader, max int64) (string, int64, error) {
	if max <= 0 {
		max = DefaultMaxBytes
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, max+1))
	if err != nil {
		return "", n, err
	}
	if n > max {
		return "", n, fmt.Errorf("%w (%d bytes)", ErrTooLarge, max)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// nonPublic are the IPv4 ranges refused besides what netip classifies
// (loopback, private, link-local, multicast, unspecified).
var nonPublic = []struct {
	p   netip.Prefix
	why string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "in 0.0.0.0/8 (\"this network\")"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (carrier-grade NAT, 100.64.0.0/10)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (192.0.0.0/24)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking address space (198.18.0.0/15)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4, broadcast included)"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (fec0::/10)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (100::/64)"},
}

var (
	compat4 = netip.MustParsePrefix("::/96")
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	nat64l  = netip.MustParsePrefix("64:ff9b:1::/48")
	sixTo4  = netip.MustParsePrefix("2002::/16")
)

// Refused says whether a connection to addr is refused without
// AllowPrivate, and why. IPv4 embedded in IPv6 (mapped, compatible,
// NAT64, 6to4) is judged as the IPv4 address it carries.
func Refused(addr netip.Addr) (why string, refused bool) {
	addr = addr.WithZone("")
	if !addr.IsValid() {
		return "not an address", true
	}
	if addr.Is4In6() {
		if why, r := Refused(addr.Unmap()); r {
			return why + ", written as IPv4-mapped IPv6", true
		}
		return "", false
	}
	switch {
	case addr.IsUnspecified():
		return "unspecified", true
	case addr.IsLoopback():
		return "loopback", true
	case addr.IsPrivate():
		return "private", true
	case addr.IsLinkLocalUnicast():
		return "link-local", true
	case addr.IsLinkLocalMulticast(), addr.IsInterfaceLocalMulticast(), addr.IsMulticast():
		return "multicast", true
	}
	for _, n := range nonPublic {
		if n.p.Contains(addr) {
			return n.why, true
		}
	}
	if addr.Is6() {
		b := addr.As16()
		var v4 netip.Addr
		switch {
		case compat4.Contains(addr):
			// ::a.b.c.d (deprecated IPv4-compatible): refused whatever it
			// carries (:: and ::1 were judged above).
			return "an IPv4-compatible IPv6 address (::/96)", true
		case nat64.Contains(addr):
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case nat64l.Contains(addr):
			return "local-use NAT64 (64:ff9b:1::/48)", true
		case sixTo4.Contains(addr):
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
		if v4.IsValid() {
			if why, r := Refused(v4); r {
				return why + ", embedded in IPv6 (NAT64 or 6to4)", true
			}
		}
	}
	return "", false
}

// control refuses the dialed address (after resolution) unless allowed.
func control(allow bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if allow {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &AddressError{Why: "not an IP address and port (" + safetext.Quote(address) + ")"}
		}
		if why, r := Refused(ap.Addr()); r {
			return &AddressError{Addr: ap.Addr(), Why: why}
		}
		return nil
	}
}

// CheckURL checks that raw is a URL a fetch may ask for: absolute http or
// https, with a host and no user info. It does not resolve the host.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
		return nil, fmt.Errorf("%s: %w", safetext.Quote(Redacted(raw)), ErrBadURL)
	}
	return u, nil
}

// Redacted is raw with any user info removed, for a message; a string
// that does not parse as a URL is "the URL" (it may hold a credential
// in a form the parser does not see).
func Redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the URL"
	}
	if u.User != nil {
		u.User = nil
		return u.String()
	}
	return raw
}

// origin is a URL's scheme, lowercased host and port (the scheme's
// default when none is written).
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// Fetch fetches raw once, within the bounds of opt, and returns the digest
// of the bytes received. A 401 is answered only with opt.Auth: the
// document is then asked for again, once, with the token Auth got for
// it (see Authorizer).
func Fetch(ctx context.Context, raw string, opt Options) (*Document, error) {
	opt = opt.withDefaults()
	u, err := CheckURL(raw)
	if err != nil {
		return nil, err
	}
	q := safetext.Quote(Redacted(raw))
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !opt.AllowPrivate {
		if why, r := Refused(ip); r {
			return nil, fmt.Errorf("%s: %w", q, &AddressError{Addr: ip.WithZone(""), Why: why})
		}
	}
	d := &net.Dialer{Timeout: opt.Timeout, Control: control(opt.AllowPrivate)}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    opt.Timeout,
		ResponseHeaderTimeout:  opt.Timeout,
		DisableCompression:     true,
		MaxResponseHeaderBytes: 64 << 10,
		DisableKeepAlives:      true,
	}
	defer tr.CloseIdleConnections()
	f := &fetcher{opt: opt, tr: tr}
	doc, ch, err := f.get(ctx, u, credential{})
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", q, err)
	case ch == nil:
		doc.URL = raw
		return doc, nil
	case opt.Auth == nil:
		return nil, fmt.Errorf("%s: %w (HTTP 401), and no OAuth session of this run answers it", q, ErrUnauthorized)
	}
	// The URL that asked (a same-origin redirect's target, perhaps) is
	// asked again, with the token of its own resource, and only if the
	// resource covers it.
	resource, authz, err := opt.Auth.Challenged(ctx, ch.url.String(), ch.www, tr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (HTTP 401), and no token is sent to it: %s", q, ErrUnauthorized, safetext.Inert(err.Error()))
	}
	if authz == "" || !opt.Auth.Covers(resource, ch.url.String()) {
		return nil, fmt.Errorf("%s: %w (HTTP 401), and no token is sent to it: the token offered is for %s, which does not cover %s", q, ErrUnauthorized, safetext.Quote(resource), safetext.Quote(Redacted(ch.url.String())))
	}
	doc, ch, err = f.get(ctx, ch.url, credential{resource: resource, authorization: authz})
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", q, err)
	case ch != nil:
		return nil, fmt.Errorf("%s: %w (HTTP 401 again, with a token for %s)", q, ErrUnauthorized, safetext.Quote(resource))
	}
	doc.URL = raw
	return doc, nil
}

// credential is the Authorization of a request and the resource it was
// issued for (zero: none).
type credential struct{ resource, authorization string }

// fetcher sends the GETs of one Fetch.
type fetcher struct {
	opt Options
	tr  *http.Transport
}

// challenge is a 401: the URL that answered it and its WWW-Authenticate.
type challenge struct {
	url *url.URL
	www []string
}

// get GETs u (with c's Authorization, only where c's resource covers the
// URL) within the bounds: a document, or the 401 it got, or an error
// without the URL.
func (f *fetcher) get(ctx context.Context, u *url.URL, c credential) (*Document, *challenge, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opt.Timeout)
	defer cancel()
	want := origin(u)
	final := u.String()
	client := &http.Client{
		Transport: f.tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > f.opt.MaxRedirects {
				return fmt.Errorf("%w: more than %d redirects", ErrRedirect, f.opt.MaxRedirects)
			}
			if origin(req.URL) != want {
				return fmt.Errorf("%w: a redirect to %s leaves the ref's origin %s", ErrRedirect, safetext.Quote(Redacted(req.URL.String())), safetext.Quote(want))
			}
			if req.URL.User != nil {
				return fmt.Errorf("%w: a redirect to a URL with user info", ErrRedirect)
			}
			if c.authorization != "" && !f.opt.Auth.Covers(c.resource, req.URL.String()) {
				return fmt.Errorf("%w: a redirect to %s, which the token's resource %s does not cover", ErrRedirect, safetext.Quote(Redacted(req.URL.String())), safetext.Quote(c.resource))
			}
			final = req.URL.String()
			return nil
		},
		Jar: nil,
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, ErrBadURL
	}
	req.Header.Set("Accept", "application/schema+json, application/json;q=0.9, */*;q=0.1")
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "mcpdrift-reffetch")
	if c.authorization != "" {
		req.Header.Set("Authorization", c.authorization)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, cause(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, &challenge{url: resp.Request.URL, www: resp.Header.Values("WWW-Authenticate")}, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("%w (HTTP %d)", ErrStatus, resp.StatusCode)
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return nil, nil, fmt.Errorf("the document came with Content-Encoding %s; mcpdrift asked for identity, so the digest would not be of the document", safetext.Quote(enc))
	}
	if resp.ContentLength > f.opt.MaxBytes {
		return nil, nil, fmt.Errorf("%w (it declares %d bytes; the limit is %d)", ErrTooLarge, resp.ContentLength, f.opt.MaxBytes)
	}
	sum, n, err := DigestReader(resp.Body, f.opt.MaxBytes)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, nil, fmt.Errorf("%w (the limit is %d bytes)", ErrTooLarge, f.opt.MaxBytes)
		}
		return nil, nil, fmt.Errorf("reading the body: %w", cause(ctx, err))
	}
	return &Document{Final: final, SHA256: sum, Bytes: n}, nil, nil
}

// cause is the error to report: the refusal or bound behind a transport
// error, without the URL the transport repeats.
func cause(ctx context.Context, err error) error {
	var ae *AddressError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, ErrRedirect):
		var ue *url.Error
		if errors.As(err, &ue) {
			return ue.Err
		}
		return err
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return ErrTimeout
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return errors.New(safetext.Inert(err.Error()))
}
