// Package lock is the one artifact that CI, the reviewer and the gateway
// share: a file (mcpdrift.lock) that pins many servers. For each server it
// holds how to reach it, the identity tuple, the Assay declared baseline
// (assay.declared_mcp_manifest.v0, extractable as its own file), the
// approved tool definitions with who approved each and when, the decision
// profile, external documents pinned by hash, and the history of
// approvals.
//
// The package is pure: Parse reads bytes and Marshal writes them; the
// clock, the observation and the file system belong to the caller. Parse
// refuses a lock that does not validate against schemas/lock.v1.schema.json
// or does not recompute (a definition whose tool_digest, an approval whose
// digest, or a manifest_digest that differs from what its tools give), with
// the file and the JSON pointer. Marshal writes one canonical form — servers
// by name, tools by name, fixed member order, one line per tool entry,
// approval and definition — so a no-op rewrite changes no byte (a signature
// over the file survives it) and approving one tool changes a few lines
// about that tool.
package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/redact"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/surface"
)

// SchemaID identifies a lock.
const SchemaID = "mcpdrift.lock.v1"

// DefaultFile is where commands look for the lock (--lock).
const DefaultFile = "mcpdrift.lock"

// Profiles.
const (
	ProfileReview     = "review"
	ProfileFailClosed = "fail-closed"
)

// AutoNotation is the auto-approval of notation-only changes.
const AutoNotation = "notation"

// History actions.
const (
	ActionPinned           = "pinned"
	ActionApproved         = "approved"
	ActionAutoApproved     = "auto_approved"
	ActionRemoved          = "removed"
	ActionIdentityApproved = "identity_approved"
	ActionProfileChanged   = "profile_changed"
	ActionRefPinned        = "ref_pinned"
)

// Lock is a parsed lock.
type Lock struct {
	Servers []*Server // by name
}

// Source says how to reach a server: a URL (with header templates), or a
// stdio command as typed.
type Source struct {
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Transport string            `json:"transport,omitempty"`
	Stdio     []string          `json:"stdio,omitempty"`
	PassEnv   []string          `json:"pass_env,omitempty"`
	// Auth names how the server authorizes mcpdrift, never a token:
	// AuthOAuth (a token mcpdrift auth login cached) or
	// AuthOAuthClientCredentials (the client_credentials grant of the
	// client lock check is given).
	Auth string `json:"auth,omitempty"`
}

// The auth methods of a source.
const (
	AuthOAuth                  = "oauth"
	AuthOAuthClientCredentials = "oauth-client-credentials"
)

// Server is one server of the lock.
type Server struct {
	Name        string
	Source      Source
	Profile     string
	AutoApprove []string
	Identity    manifest.Identity
	// ClientCapabilities is the canonical ClientCapabilities object the
	// tools were observed with (nil: not recorded).
	ClientCapabilities []byte
	Declared           *manifest.Declared // tools by name
	Tools              []*Tool            // by name, one for each declared entry
	Refs               []Ref              // by URL
	History            []Event            // oldest first
	// Surface is the approved model-facing surface (surface.go; nil: the
	// server pins none), SurfaceApprovals who approved each item.
	Surface          *surface.Surface
	SurfaceApprovals []SurfaceApproval
	// NameAcknowledged, when set (the gateway's, from its suppression
	// file), goes into Baseline: see decide.Baseline.NameAcknowledged.
	// Never written to the lock.
	NameAcknowledged func(name string) bool
}

// Tool is one approved tool.
type Tool struct {
	Name     string
	Approval Approval
	// Definition is the tool object as the server sent it, with the
	// whitespace between tokens removed (json.Compact: every string,
	// escape and number kept as sent, so the digests recompute).
	Definition []byte
	tool       manifest.Tool
}

// Approval says who approved a tool's definition, when, and why.
type Approval struct {
	Digest string `json:"digest"`
	By     string `json:"by"`
	At     string `json:"at"`
	Note   string `json:"note,omitempty"`
	Auto   string `json:"auto,omitempty"` // "notation": approved by the profile
}

// Ref is an external document pinned by hash.
type Ref struct {
	URL      string `json:"url"`
	SHA256   string `json:"sha256"`
	Bytes    *int64 `json:"bytes,omitempty"`
	By       string `json:"by"`
	At       string `json:"at"`
	FromFile bool   `json:"from_file,omitempty"`
}

// Event is one entry of a server's history.
type Event struct {
	At     string `json:"at"`
	Action string `json:"action"`
	Tool   string `json:"tool,omitempty"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	By     string `json:"by"`
	Note   string `json:"note,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Kind is the surface kind of an event about the surface (Tool then
	// holds the item's key, "" for the instructions).
	Kind surface.Kind `json:"kind,omitempty"`
}

// Error is a lock that cannot be used: which file, where, and what.
type Error struct {
	File    string
	Pointer string
	Msg     string
}

func (e *Error) Error() string {
	if e.Pointer == "" {
		return safetext.Escape(e.File) + ": " + e.Msg
	}
	return fmt.Sprintf("%s: at JSON pointer %s: %s", safetext.Escape(e.File), safetext.Quote(e.Pointer), e.Msg)
}

// ToolValue is the tool's definition as a manifest.Tool (its digest is
// computed once, when the lock is read or the tool approved).
func (t *Tool) ToolValue() manifest.Tool { return t.tool }

// Server returns the named server, or nil.
func (l *Lock) Server(name string) *Server {
	i, ok := slices.BinarySearchFunc(l.Servers, name, func(s *Server, n string) int { return strings.Compare(s.Name, n) })
	if !ok {
		return nil
	}
	return l.Servers[i]
}

// Add adds a server; a name already in the lock is refused.
func (l *Lock) Add(s *Server) error {
	i, ok := slices.BinarySearchFunc(l.Servers, s.Name, func(x *Server, n string) int { return strings.Compare(x.Name, n) })
	if ok {
		return fmt.Errorf("server %s is already in the lock (lock remove it first, or approve its changes)", safetext.Quote(s.Name))
	}
	l.Servers = slices.Insert(l.Servers, i, s)
	return nil
}

// Remove removes the named server; false when there is none.
func (l *Lock) Remove(name string) bool {
	i, ok := slices.BinarySearchFunc(l.Servers, name, func(x *Server, n string) int { return strings.Compare(x.Name, n) })
	if ok {
		l.Servers = slices.Delete(l.Servers, i, i+1)
	}
	return ok
}

// Tools returns the approved definitions as manifest tools (by name).
func (s *Server) ToolValues() []manifest.Tool {
	out := make([]manifest.Tool, len(s.Tools))
	for i, t := range s.Tools {
		out[i] = t.tool
	}
	return out
}

// Tool returns the named approved tool, or nil.
func (s *Server) Tool(name string) *Tool {
	i, ok := slices.BinarySearchFunc(s.Tools, name, func(t *Tool, n string) int { return strings.Compare(t.Name, n) })
	if !ok {
		return nil
	}
	return s.Tools[i]
}

// AutoApproves reports whether the server's profile auto-approves kind.
func (s *Server) AutoApproves(kind string) bool { return slices.Contains(s.AutoApprove, kind) }

// Snapshot is the server's approved tools as a tool snapshot
// (mcpdrift.tool_snapshot.v1), for the commands that read one.
func (s *Server) Snapshot() *manifest.Snapshot {
	return &manifest.Snapshot{ServerID: s.Name, Identity: s.Identity, ManifestDigest: s.Declared.ManifestDigest,
		Completeness: manifest.Complete, Tools: s.ToolValues(), ClientCapabilities: s.ClientCapabilities}
}

// ExportDeclared is the server's Assay declared baseline as its own file:
// the bytes manifest.MarshalArtifact writes (what mcpdrift pin writes),
// which Assay reads.
func (s *Server) ExportDeclared() ([]byte, error) { return manifest.MarshalArtifact(s.Declared) }

// ValidName reports whether a server name can be used in a lock (and as
// the baseline's server id): letters, digits, '.', '_' and '-', starting
// with a letter or digit, at most 128 bytes.
func ValidName(name string) bool { return serverName.MatchString(name) && len(name) <= 128 }

var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

var (
	envName        = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerTemplate = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]* )?\$\{env:[A-Za-z_][A-Za-z0-9_]*\}$`)
)

// urlTemplate is a URL path segment a lock expands from the environment
// (URLSegmentTemplate).
var urlTemplate = regexp.MustCompile(`^\$\{env:[A-Za-z_][A-Za-z0-9_]*\}$`)

// URLSegmentTemplate reports whether a path segment of a lock's URL is a
// ${env:NAME} placeholder, expanded (path-escaped) where the lock is
// used: a hosted server whose key is a segment of its URL is locked with
// the segment as a placeholder, never the key.
func URLSegmentTemplate(seg string) bool { return urlTemplate.MatchString(seg) }

// HeaderTemplate reports whether a header value can be stored in a lock:
// one ${env:NAME} placeholder, after an optional scheme word ("Bearer
// ${env:ACME_TOKEN}"). Anything else could be a credential, and a lock is
// committed to a repository.
func HeaderTemplate(v string) bool { return headerTemplate.MatchString(v) }

// ValidProfile reports whether p is a decision profile a lock can name.
func ValidProfile(p string) bool { return p == ProfileReview || p == ProfileFailClosed }

// NewServer builds a server entry from a complete observation: the tools
// (duplicate names are refused), classified for the declared baseline with
// c, each approved as a; the history records the pin.
func NewServer(name string, src Source, profile string, id manifest.Identity, clientCaps []byte, tools []manifest.Tool, c *classify.Classifier, a Approval) (*Server, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("server name %s: use letters, digits, '.', '_' and '-' (at most 128), starting with a letter or digit", safetext.Quote(name))
	}
	if !ValidProfile(profile) {
		return nil, fmt.Errorf("profile %s: must be review or fail-closed", safetext.Quote(profile))
	}
	if err := CheckSource(src); err != nil {
		return nil, err
	}
	sorted := slices.Clone(tools)
	slices.SortStableFunc(sorted, func(a, b manifest.Tool) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].Name == sorted[i-1].Name {
			return nil, fmt.Errorf("the server lists tool %s twice: an ambiguous list cannot be pinned", safetext.Quote(sorted[i].Name))
		}
	}
	tl := &manifest.ToolList{Tools: sorted, Completeness: manifest.Complete}
	d, err := manifest.Pin(manifest.BuildObserved(name, tl, manifest.Complete, c), manifest.PinOptions{AllowEmpty: true})
	if err != nil {
		return nil, err
	}
	s := &Server{Name: name, Source: src, Profile: profile, Identity: id, Declared: d}
	if clientCaps != nil {
		doc, err := jcs.Parse(clientCaps)
		if err != nil || doc.Root().Kind() != jcs.Object {
			return nil, errors.New("client capabilities must be a JSON object")
		}
		s.ClientCapabilities = doc.Root().Canonical()
	}
	for i := range sorted {
		t, err := newTool(&sorted[i], a)
		if err != nil {
			return nil, err
		}
		s.Tools = append(s.Tools, t)
	}
	s.History = append(s.History, Event{At: a.At, Action: ActionPinned, By: a.By, Note: a.Note})
	return s, nil
}

func newTool(mt *manifest.Tool, a Approval) (*Tool, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, mt.Raw()); err != nil {
		return nil, fmt.Errorf("tool %s: %v", safetext.Quote(mt.Name), err)
	}
	doc, err := jcs.Parse(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("tool %s: %v", safetext.Quote(mt.Name), err)
	}
	t, err := manifest.ToolFromValue(doc.Root(), "")
	if err != nil {
		return nil, err
	}
	a.Digest = t.ToolDigest()
	return &Tool{Name: t.Name, Approval: a, Definition: b.Bytes(), tool: t}, nil
}

// CheckSource refuses a source a lock cannot hold: one that is not a URL
// or a stdio command, a URL that is not absolute http(s), or one that
// would store what may be a credential (user info, a query value, a path
// segment that looks like a credential), a header that is not a
// placeholder, a pass_env that is not a variable name. A lock read from a
// file is held to all of it but the look of its path segments
// (checkSource): a lock written before that rule still reads.
func CheckSource(src Source) error { return checkSource(src, true) }

func checkSource(src Source, credentials bool) error {
	switch {
	case src.URL != "" && len(src.Stdio) > 0:
		return errors.New("a source is a URL or a stdio command, not both")
	case src.URL == "" && len(src.Stdio) == 0:
		return errors.New("a source needs a URL or a stdio command")
	case len(src.Stdio) > 0 && (len(src.Headers) > 0 || src.Transport != ""):
		return errors.New("headers and transport are for a URL source")
	case src.URL != "" && len(src.PassEnv) > 0:
		return errors.New("pass_env is for a stdio source")
	case src.Auth != "" && src.URL == "":
		return errors.New("auth is for a URL source")
	case src.Auth != "" && src.Auth != AuthOAuth && src.Auth != AuthOAuthClientCredentials:
		return fmt.Errorf("auth %s: must be %s or %s", safetext.Quote(src.Auth), AuthOAuth, AuthOAuthClientCredentials)
	}
	if src.URL != "" {
		u, err := url.Parse(src.URL)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return errors.New("the url must be an absolute http or https URL")
		case u.User != nil:
			return errors.New("the url carries user info: a lock never stores a credential (send it as a header placeholder, \"Authorization\": \"Bearer ${env:TOKEN}\")")
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				if v != "" {
					return errors.New("the url carries query values: a lock never stores what may be a credential (send it as a header placeholder)")
				}
			}
		}
		_, segs := redact.PathSegments(src.URL)
		for i, seg := range segs {
			switch {
			case strings.Contains(seg, "${") && !urlTemplate.MatchString(seg):
				return fmt.Errorf("path segment %d of the url: a placeholder is a whole segment, ${env:NAME}", i)
			case credentials && !urlTemplate.MatchString(seg) && redact.CredentialLike(seg):
				// The segment is not repeated: it may be the key.
				return fmt.Errorf("path segment %d of the url looks like a credential: a lock never stores one; write the segment as a ${env:NAME} placeholder (https://host/mcp/${env:MCP_KEY}/sse) and export it where the lock is checked", i)
			}
		}
		// What no segment as written shows: a query key, or a segment of
		// the path as it is sent.
		if credentials && redact.HasCredentialShape(src.URL) {
			return errors.New("a query key or a path segment of the url looks like a credential: a lock never stores one; write a path segment as a ${env:NAME} placeholder (https://host/mcp/${env:MCP_KEY}/sse), a query value as a header placeholder")
		}
	}
	for k, v := range src.Headers {
		if !HeaderTemplate(v) {
			return fmt.Errorf("header %s: a lock stores a header only as a ${env:NAME} placeholder (optionally after a scheme word, as in \"Bearer ${env:TOKEN}\"), never a value", safetext.Quote(k))
		}
	}
	for _, n := range src.PassEnv {
		if !envName.MatchString(n) {
			return fmt.Errorf("pass_env %s is not an environment variable name", safetext.Quote(n))
		}
	}
	if src.Transport != "" && src.Transport != "streamable-http" && src.Transport != "sse" {
		return fmt.Errorf("transport %s: must be streamable-http or sse", safetext.Quote(src.Transport))
	}
	return nil
}
