// Package probe evaluates a live drift run: a declared manifest against
// what a running server served, the server against the MCP specification
// (conformance) and what the run established about who the server talks to
// (authentication posture). It is pure: the CLI performs the network calls
// (mcpclient) and hands the observations in.
package probe

import (
	"net"
	"net/url"
	"strings"
)

// Target classes, from the URL's host.
const (
	ClassLocal      = "local"
	ClassDev        = "dev"
	ClassStaging    = "staging"
	ClassProduction = "production"
	ClassUnknown    = "unknown"
	ClassStdio      = "stdio" // a child process on this machine
)

var (
	devLabels     = map[string]bool{"dev": true, "develop": true, "development": true, "test": true, "testing": true, "sandbox": true, "local": true, "localdomain": true, "internal": true, "lan": true, "home": true, "example": true, "invalid": true}
	stagingLabels = map[string]bool{"staging": true, "stage": true, "stg": true, "preprod": true, "pre-prod": true, "uat": true, "qa": true}
	prodLabels    = map[string]bool{"prod": true, "production": true, "live": true, "prd": true}
)

// ClassifyTarget derives local/dev/staging/production/unknown from a URL's
// host. Loopback names and addresses are local; private, link-local and
// CGNAT addresses and hosts with a dev/test/sandbox label (or a .local,
// .internal, .test TLD) are dev; staging/stage/uat/qa labels are staging;
// prod/production/live labels, and any other public DNS name, are
// production; a public IP literal is unknown. The rule is visible in every
// finding that depends on it, so a reader can disagree with it.
func ClassifyTarget(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return ClassUnknown
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return ClassLocal
	}
	if ip := net.ParseIP(host); ip != nil {
		switch {
		case ip.IsLoopback(), ip.IsUnspecified():
			return ClassLocal
		case ip.IsPrivate(), ip.IsLinkLocalUnicast(), isCGNAT(ip):
			return ClassDev
		}
		return ClassUnknown
	}
	labels := strings.FieldsFunc(host, func(r rune) bool { return r == '.' || r == '-' || r == '_' })
	has := func(set map[string]bool) bool {
		for _, l := range labels {
			if set[l] {
				return true
			}
		}
		return false
	}
	switch {
	case has(prodLabels):
		return ClassProduction
	case has(stagingLabels):
		return ClassStaging
	case has(devLabels):
		return ClassDev
	}
	return ClassProduction
}

func isCGNAT(ip net.IP) bool {
	v4 := ip.To4()
	return v4 != nil && v4[0] == 100 && v4[1]&0xc0 == 64
}

// IsPlaintext reports whether the URL uses plain HTTP.
func IsPlaintext(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && strings.EqualFold(u.Scheme, "http")
}
