package mockserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the mock. It is safe for concurrent use.
type Server struct {
	cfg            Config
	modernVersions []string
	legacyVersions []string
	allVersions    []string
	serverInfo     []byte
	cacheScope     string
	hostile        map[string]bool

	tools     atomic.Pointer[toolSet]
	surf      atomic.Pointer[surfaceSet] // nil: no surface (surface.go)
	connTools map[int]*toolSet
	anon      *toolSet
	capTools  map[string]*toolSet
	capNames  []string // the keys of capTools, sorted

	connSeq    atomic.Int64
	sessionSeq atomic.Int64

	mu       sync.Mutex
	sessions map[string]*session
	order    []string // session ids, oldest first
	sse      map[string]*sseSession
	sseOpen  int // HTTP+SSE streams open now
	sseTotal int // HTTP+SSE streams opened so far
	srvReqs  int // server requests sent (ids)
	remote   map[string]int
	log      []LogEntry
	logNext  int
	logTotal int

	done      chan struct{}
	closeOnce sync.Once

	// subs receive notifications/tools/list_changed (Config.ListChanged).
	subs   map[int]chan []byte
	subSeq int

	// polled are the responses PollCalls keeps for the GET that resumes
	// from the event id they are keyed by (oldest first in polledOrder).
	polled      map[string]polledResponse
	polledOrder []string
}

// listChangedNotification is what ListChanged sends.
var listChangedNotification = []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)

// subscribe registers a receiver of list_changed notifications.
func (s *Server) subscribe() (int, chan []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs == nil {
		s.subs = map[int]chan []byte{}
	}
	s.subSeq++
	ch := make(chan []byte, 16)
	s.subs[s.subSeq] = ch
	return s.subSeq, ch
}

func (s *Server) unsubscribe(id int) {
	s.mu.Lock()
	delete(s.subs, id)
	s.mu.Unlock()
}

// notifyListChanged sends list_changed to every subscriber (never
// blocking: a full queue drops it).
func (s *Server) notifyListChanged() { s.notify(listChangedNotification) }

// notify sends a list_changed notification to every subscriber (never
// blocking: a full queue drops it), with ListChanged.
func (s *Server) notify(note []byte) {
	if !s.cfg.ListChanged {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.subs {
		select {
		case ch <- note:
		default:
		}
	}
}

type session struct {
	id          string
	version     string
	conn        int
	initialized bool     // notifications/initialized received
	caps        []string // the client capabilities initialize declared
}

// toolSet is an immutable tool list.
type toolSet struct {
	raws  [][]byte
	names []string // "" when a tool has no string name
}

func newToolSet(tools []json.RawMessage) (*toolSet, error) {
	ts := &toolSet{raws: make([][]byte, 0, len(tools)), names: make([]string, 0, len(tools))}
	for i, t := range tools {
		if !json.Valid(t) {
			return nil, fmt.Errorf("tool %d is not valid JSON", i)
		}
		b := append([]byte(nil), t...)
		var probe struct {
			Name *string `json:"name"`
		}
		name := ""
		if json.Unmarshal(b, &probe) == nil && probe.Name != nil {
			name = *probe.Name
		}
		ts.raws = append(ts.raws, b)
		ts.names = append(ts.names, name)
	}
	return ts, nil
}

func (ts *toolSet) find(name string) ([]byte, bool) {
	for i, n := range ts.names {
		if n == name {
			return ts.raws[i], true
		}
	}
	return nil, false
}

// New builds a server from cfg (defaults filled in; cfg's slices are copied).
func New(cfg Config) (*Server, error) {
	if len(cfg.SupportedVersions) == 0 {
		cfg.SupportedVersions = DefaultVersions
	}
	s := &Server{
		sessions: map[string]*session{},
		sse:      map[string]*sseSession{},
		remote:   map[string]int{},
		hostile:  map[string]bool{},
		done:     make(chan struct{}),
	}
	for _, v := range cfg.SupportedVersions {
		if !versionRE.MatchString(v) {
			return nil, fmt.Errorf("mockserver: version %q is not YYYY-MM-DD", v)
		}
		if slices.Contains(s.allVersions, v) {
			continue
		}
		s.allVersions = append(s.allVersions, v)
		if isModernRev(v) {
			if cfg.Era != LegacyOnly {
				s.modernVersions = append(s.modernVersions, v)
			}
		} else if cfg.Era != ModernOnly {
			s.legacyVersions = append(s.legacyVersions, v)
		}
	}
	// The versions this server actually speaks, in the configured order.
	s.allVersions = slices.DeleteFunc(s.allVersions, func(v string) bool {
		return !slices.Contains(s.modernVersions, v) && !slices.Contains(s.legacyVersions, v)
	})
	if len(s.allVersions) == 0 {
		return nil, fmt.Errorf("mockserver: no supported version is left for era %s", cfg.Era)
	}
	if cfg.PageSize < 0 {
		return nil, errors.New("mockserver: PageSize must be >= 0")
	}
	if cfg.TTLMs < 0 {
		return nil, errors.New("mockserver: TTLMs must be >= 0")
	}
	if cfg.ServerName == "" {
		cfg.ServerName = "mcpdrift-mockserver"
	}
	if cfg.ServerVersion == "" {
		cfg.ServerVersion = "0.0.0"
	}
	s.cacheScope = cfg.CacheScope
	if s.cacheScope == "" {
		s.cacheScope = "public"
		if cfg.RequireAuth != "" {
			s.cacheScope = "private"
		}
	}
	if s.cacheScope != "public" && s.cacheScope != "private" {
		return nil, fmt.Errorf("mockserver: CacheScope must be public or private, not %q", s.cacheScope)
	}
	cfg.boundDefaults()
	for _, m := range cfg.HostileMethods {
		s.hostile[m] = true
	}
	info, err := json.Marshal(struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}{cfg.ServerName, cfg.ServerVersion})
	if err != nil {
		return nil, err
	}
	s.serverInfo = info

	ts, err := newToolSet(cfg.Tools)
	if err != nil {
		return nil, fmt.Errorf("mockserver: Tools: %w", err)
	}
	s.tools.Store(ts)
	ss, err := newSurfaceSet(cfg.Surface)
	if err != nil {
		return nil, fmt.Errorf("mockserver: Surface: %w", err)
	}
	s.surf.Store(ss)
	if cfg.SurfacePageSize < 0 {
		return nil, errors.New("mockserver: SurfacePageSize must be >= 0")
	}
	s.connTools = map[int]*toolSet{}
	for n, tools := range cfg.ConnectionTools {
		if s.connTools[n], err = newToolSet(tools); err != nil {
			return nil, fmt.Errorf("mockserver: ConnectionTools[%d]: %w", n, err)
		}
	}
	if cfg.AnonymousTools != nil {
		if s.anon, err = newToolSet(cfg.AnonymousTools); err != nil {
			return nil, fmt.Errorf("mockserver: AnonymousTools: %w", err)
		}
	}
	s.capTools = map[string]*toolSet{}
	for c, tools := range cfg.CapabilityTools {
		if s.capTools[c], err = newToolSet(tools); err != nil {
			return nil, fmt.Errorf("mockserver: CapabilityTools[%q]: %w", c, err)
		}
		s.capNames = append(s.capNames, c)
	}
	slices.Sort(s.capNames)
	cfg.Tools, cfg.ConnectionTools, cfg.AnonymousTools, cfg.CapabilityTools, cfg.Surface = nil, nil, nil, nil, nil
	cfg.SupportedVersions = slices.Clone(cfg.SupportedVersions)
	cfg.HostileMethods = slices.Clone(cfg.HostileMethods)
	cfg.EndlessLists = slices.Clone(cfg.EndlessLists)
	s.cfg = cfg
	return s, nil
}

// boundDefaults sets every bound left zero to its default.
func (cfg *Config) boundDefaults() {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxAdminBodyBytes <= 0 {
		cfg.MaxAdminBodyBytes = DefaultMaxAdminBodyBytes
	}
	if cfg.LogLimit <= 0 {
		cfg.LogLimit = DefaultLogLimit
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if len(cfg.HostileMethods) == 0 {
		cfg.HostileMethods = []string{"tools/list"}
	}
}

// MustNew is New that panics on a bad Config (for tests).
func MustNew(cfg Config) *Server {
	s, err := New(cfg)
	if err != nil {
		panic(err)
	}
	return s
}

// SetTools atomically replaces the default tool list (each must be valid
// JSON). The next tools/list of every connection and session that is not
// pinned by ConnectionTools, and not anonymous, sees it.
func (s *Server) SetTools(tools []json.RawMessage) error {
	ts, err := newToolSet(tools)
	if err != nil {
		return err
	}
	s.tools.Store(ts)
	s.notifyListChanged()
	return nil
}

// ReloadFile loads a manifest file (LoadManifestFile) and SetTools it,
// and SetSurface its surface (none when the file holds none).
func (s *Server) ReloadFile(path string) (int, error) {
	tools, sf, err := LoadManifestFile(path)
	if err != nil {
		return 0, err
	}
	if err := s.SetSurface(sf); err != nil {
		return 0, err
	}
	return len(tools), s.SetTools(tools)
}

// Tools returns a copy of the current default tool list.
func (s *Server) Tools() []json.RawMessage {
	ts := s.tools.Load()
	out := make([]json.RawMessage, len(ts.raws))
	for i, r := range ts.raws {
		out[i] = append(json.RawMessage(nil), r...)
	}
	return out
}

// SupportedVersions are the versions the server speaks (after the era
// filter), in the configured order.
func (s *Server) SupportedVersions() []string { return slices.Clone(s.allVersions) }

// Close ends never-ending and oversized streams in progress and stops
// ServeStdio loops. It does not close listeners (that is the http.Server's
// job). Idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
}

// toolsFor is the list a request is served: the anonymous one, the
// connection's, or the default one, plus CapabilityTools for the client
// capabilities it declared.
func (s *Server) toolsFor(conn int, anonymous bool, caps []string) *toolSet {
	ts := s.tools.Load()
	if anonymous && s.anon != nil {
		ts = s.anon
	} else if c, ok := s.connTools[conn]; ok {
		ts = c
	}
	var extra []*toolSet
	for _, c := range s.capNames {
		if slices.Contains(caps, c) {
			extra = append(extra, s.capTools[c])
		}
	}
	if len(extra) == 0 {
		return ts
	}
	out := &toolSet{raws: slices.Clone(ts.raws), names: slices.Clone(ts.names)}
	for _, e := range extra {
		out.raws = append(out.raws, e.raws...)
		out.names = append(out.names, e.names...)
	}
	return out
}

type connKey struct{}

type connSlot struct{ n atomic.Int64 }

// ConnContext is meant for http.Server.ConnContext: it lets the server
// number TCP connections exactly (for ConnectionTools and the log).
// Without it connections are told apart by the request's RemoteAddr.
func (s *Server) ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &connSlot{})
}

// connNumber numbers connections in the order of their first request.
func (s *Server) connNumber(r *http.Request) int {
	if slot, ok := r.Context().Value(connKey{}).(*connSlot); ok {
		if n := slot.n.Load(); n != 0 {
			return int(n)
		}
		n := s.connSeq.Add(1)
		if slot.n.CompareAndSwap(0, n) {
			return int(n)
		}
		return int(slot.n.Load())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.remote[r.RemoteAddr]; ok {
		return n
	}
	if len(s.remote) >= 4096 {
		clear(s.remote)
	}
	n := int(s.connSeq.Add(1))
	s.remote[r.RemoteAddr] = n
	return n
}

// Connections is the number of connections (HTTP and stdio) seen so far.
func (s *Server) Connections() int { return int(s.connSeq.Load()) }

// Sessions is the number of legacy sessions started so far (ended ones
// included).
func (s *Server) Sessions() int { return int(s.sessionSeq.Load()) }

func (s *Server) newSession(version string, caps []string) *session {
	var b [16]byte
	_, _ = rand.Read(b[:])
	n := int(s.sessionSeq.Add(1))
	ss := &session{id: "mock-" + hex.EncodeToString(b[:]), version: version, conn: n, caps: caps}
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.order) >= s.cfg.MaxSessions {
		delete(s.sessions, s.order[0])
		s.order = s.order[1:]
	}
	s.sessions[ss.id] = ss
	s.order = append(s.order, ss.id)
	return ss
}

func (s *Server) session(id string) (session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[id]
	if !ok {
		return session{}, false
	}
	return *ss, true
}

func (s *Server) markInitialized(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss, ok := s.sessions[id]; ok {
		ss.initialized = true
	}
}

func (s *Server) endSession(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[id]; !ok {
		return false
	}
	delete(s.sessions, id)
	s.order = slices.DeleteFunc(s.order, func(x string) bool { return x == id })
	return true
}

// sleep waits d, or less if ctx ends or the server closes.
func (s *Server) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-s.done:
	}
}
