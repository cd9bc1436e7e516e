package mcptrace

import (
	"encoding/hex"
	"errors"
	"strings"
)

// SpanContext is a W3C trace context: the ids and flags of traceparent
// and the tracestate list, already validated.
type SpanContext struct {
	TraceID    [16]byte
	SpanID     [8]byte
	Flags      byte
	TraceState string // canonical: members joined by ",", no empty members
	Remote     bool   // received from another process
}

// Valid reports whether sc has a trace id and a span id (W3C: neither may
// be all zeros).
func (sc SpanContext) Valid() bool {
	return sc.TraceID != [16]byte{} && sc.SpanID != [8]byte{}
}

// Sampled reports the sampled flag.
func (sc SpanContext) Sampled() bool { return sc.Flags&0x01 != 0 }

// TraceIDString and SpanIDString are the ids in lowercase hex.
func (sc SpanContext) TraceIDString() string { return hex.EncodeToString(sc.TraceID[:]) }
func (sc SpanContext) SpanIDString() string  { return hex.EncodeToString(sc.SpanID[:]) }

// TraceParent is sc as a version-00 traceparent ("" when sc is not valid).
func (sc SpanContext) TraceParent() string {
	if !sc.Valid() {
		return ""
	}
	var b [55]byte
	b[0], b[1], b[2] = '0', '0', '-'
	hex.Encode(b[3:35], sc.TraceID[:])
	b[35] = '-'
	hex.Encode(b[36:52], sc.SpanID[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{sc.Flags})
	return string(b[:])
}

// Bounds on what is read. A value beyond them is dropped, never
// truncated and propagated: a truncated tracestate would be a different
// one.
const (
	// MaxTraceParentLen bounds a traceparent of a future version (the
	// first 55 characters are read, as W3C says; version 00 is exactly 55).
	MaxTraceParentLen = 256
	// MaxTraceStateLen is the tracestate length W3C asks vendors to
	// propagate at least; a longer one is dropped whole.
	MaxTraceStateLen = 512
	// MaxTraceStateMembers is W3C's bound on list members.
	MaxTraceStateMembers = 32
)

// Errors of the parsers (fixed texts: a span or a message may carry them).
var (
	ErrTraceParent     = errors.New("malformed traceparent")
	ErrTraceParentSize = errors.New("oversized traceparent")
	ErrTraceState      = errors.New("malformed tracestate")
	ErrTraceStateSize  = errors.New("oversized tracestate")
)

// ParseTraceParent reads a W3C traceparent strictly: lowercase hex only;
// version 00 exactly "00-{32 hex}-{16 hex}-{2 hex}"; version ff refused; a
// later version read from its first 55 characters, which must be followed
// by "-" or nothing; a trace id or parent id of all zeros refused.
func ParseTraceParent(s string) (SpanContext, error) {
	var sc SpanContext
	if len(s) > MaxTraceParentLen {
		return sc, ErrTraceParentSize
	}
	if len(s) < 55 {
		return sc, ErrTraceParent
	}
	ver, ok := hexByte(s[0:2])
	switch {
	case !ok || ver == 0xff:
		return sc, ErrTraceParent
	case ver == 0 && len(s) != 55:
		return sc, ErrTraceParent
	case len(s) > 55 && s[55] != '-':
		return sc, ErrTraceParent
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return sc, ErrTraceParent
	}
	if !lowerHex(s[3:35]) || !lowerHex(s[36:52]) || !lowerHex(s[53:55]) {
		return sc, ErrTraceParent
	}
	_, _ = hex.Decode(sc.TraceID[:], []byte(s[3:35]))
	_, _ = hex.Decode(sc.SpanID[:], []byte(s[36:52]))
	sc.Flags, _ = hexByte(s[53:55])
	if !sc.Valid() {
		return SpanContext{}, ErrTraceParent
	}
	return sc, nil
}

func hexByte(s string) (byte, bool) {
	if len(s) != 2 || !lowerHex(s) {
		return 0, false
	}
	var b [1]byte
	_, err := hex.Decode(b[:], []byte(s))
	return b[0], err == nil
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ParseTraceState reads a W3C tracestate strictly and returns it
// canonical (members joined by ",", optional whitespace and empty members
// removed). Any malformed member, a repeated key, more than 32 members or
// more than 512 bytes refuses the whole value: a partial list is never
// propagated.
func ParseTraceState(s string) (string, error) {
	if len(s) > MaxTraceStateLen {
		return "", ErrTraceStateSize
	}
	var members []string
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		m := strings.Trim(part, " \t")
		if m == "" {
			continue // W3C allows empty list members
		}
		k, v, ok := strings.Cut(m, "=")
		if !ok || !traceStateKey(k) || !traceStateValue(v) || seen[k] {
			return "", ErrTraceState
		}
		seen[k] = true
		if members = append(members, m); len(members) > MaxTraceStateMembers {
			return "", ErrTraceState
		}
	}
	return strings.Join(members, ","), nil
}

// traceStateKey: simple-key = lcalpha 0*255(lcalpha / DIGIT / "_" / "-" /
// "*" / "/"); multi-tenant-key = tenant-id "@" system-id, tenant-id =
// (lcalpha / DIGIT) 0*240(...), system-id = lcalpha 0*13(...).
func traceStateKey(k string) bool {
	if tenant, system, ok := strings.Cut(k, "@"); ok {
		return len(tenant) >= 1 && len(tenant) <= 241 && (lcalpha(tenant[0]) || digit(tenant[0])) && keyChars(tenant[1:]) &&
			len(system) >= 1 && len(system) <= 14 && lcalpha(system[0]) && keyChars(system[1:])
	}
	return len(k) >= 1 && len(k) <= 256 && lcalpha(k[0]) && keyChars(k[1:])
}

func keyChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(lcalpha(c) || digit(c) || c == '_' || c == '-' || c == '*' || c == '/') {
			return false
		}
	}
	return true
}

func lcalpha(c byte) bool { return 'a' <= c && c <= 'z' }
func digit(c byte) bool   { return '0' <= c && c <= '9' }

// traceStateValue: 0*255(chr) nblk-chr; chr = %x20 / nblk-chr; nblk-chr =
// %x21-2B / %x2D-3C / %x3E-7E.
func traceStateValue(v string) bool {
	if len(v) < 1 || len(v) > 256 || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c > 0x7e || c == ',' || c == '=' {
			return false
		}
	}
	return true
}
