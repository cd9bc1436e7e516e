package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// The differential check of what the gateway forwards: every downstream
// message it would pass to the upstream is decoded the way real servers
// decode it — mark3labs/mcp-go's envelope and CallToolRequest, the go-sdk's
// jsonrpc.DecodeMessage and CallToolParamsRaw, a map, and a tool
// handler's argument struct, all with encoding/json (which matches member
// names without regard to case) — and each must see the method, id, tool
// name and arguments the gateway decided on. testdata/smuggling.jsonl holds
// the shapes found so far; they are the seeds.

// meaningTool is the approved tool the calls name.
const meaningTool = `{"name":"get_thing","description":"Get a thing.","inputSchema":{"type":"object","required":["id"],
 "properties":{"id":{"type":"string"},"path":{"type":"string","pattern":"^/tmp/"},"ratio":{"type":"number","exclusiveMaximum":1},
 "opts":{"type":"object","properties":{"mode":{"enum":["ro"]}}}}}}`

// thingArgs is how a tool handler of get_thing decodes its arguments.
type thingArgs struct {
	ID    string  `json:"id"`
	Path  string  `json:"path"`
	Ratio float64 `json:"ratio"`
	Opts  struct {
		Mode string `json:"mode"`
	} `json:"opts"`
}

func meaningList(t testing.TB) *decide.List {
	tl, err := manifest.ParseToolList([]byte("[" + meaningTool + "]"))
	if err != nil {
		t.Fatal(err)
	}
	b := decide.NewBaseline("meaning", manifest.Identity{}, tl.Tools)
	return decide.DecideList(b, &decide.Served{Tools: tl.Tools, Completeness: manifest.Complete}, decide.Options{})
}

// admitted is the gateway's decision on a downstream message in enforce
// mode: the parse it decided on, or nil when it refuses or drops it.
func admitted(b []byte, l *decide.List) *frame.Message {
	m, e := frame.FromClient(b)
	if e != nil {
		return nil
	}
	if m.Kind == frame.Notification && !mcpwire.NotificationFromClient(m.Method) {
		return nil
	}
	if m.Method == "tools/call" && m.Kind == frame.Request {
		name, args := callTarget(m)
		if c := l.DecideCall(name, args, decide.CallOptions{}); !c.Allowed {
			return nil
		}
	}
	return m
}

func smugglingSeeds(t testing.TB) [][]byte {
	f, err := os.Open("testdata/smuggling.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			out = append(out, bytes.Clone(line))
		}
	}
	return out
}

func FuzzGatewayMeaning(f *testing.F) {
	for _, s := range smugglingSeeds(f) {
		f.Add(s)
	}
	l := meaningList(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m := admitted(b, l)
		if m == nil {
			return
		}
		if err := sameMeaning(b, m); err != nil {
			t.Fatalf("the gateway forwards %q: %v", b, err)
		}
	})
}

// TestSmugglingSeeds: of the seeds, the ones the gateway forwards mean to
// every decoder what they mean to the gateway, and the hidden tools'
// calls are never among them.
func TestSmugglingSeeds(t *testing.T) {
	l := meaningList(t)
	forwarded := 0
	for _, s := range smugglingSeeds(t) {
		m := admitted(s, l)
		if m == nil {
			continue
		}
		forwarded++
		if err := sameMeaning(s, m); err != nil {
			t.Errorf("forwarded %s: %v", s, err)
		}
		if bytes.Contains(s, []byte("exec_shell")) || bytes.Contains(s, []byte("send_email")) || bytes.Contains(s, []byte("/etc/shadow")) {
			t.Errorf("forwarded a smuggling shape: %s", s)
		}
	}
	if forwarded < 5 {
		t.Fatalf("only %d seeds forwarded: the plain calls must pass", forwarded)
	}
}

// sameMeaning decodes b as the servers do and compares with m.
func sameMeaning(b []byte, m *frame.Message) error {
	name, args := callTarget(m)
	isCall := m.Method == "tools/call" && m.Kind == frame.Request
	// mark3labs/mcp-go: its envelope, then the request type of the method.
	var base struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		ID      any    `json:"id,omitempty"`
		Result  any    `json:"result,omitempty"`
	}
	if json.Unmarshal(b, &base) == nil && m.Kind != frame.Response && m.Kind != frame.ErrorResponse {
		if base.Method != m.Method {
			return fmt.Errorf("mcp-go reads method %q, the gateway %q", base.Method, m.Method)
		}
		if err := decodedID("mcp-go", base.ID, m); err != nil {
			return err
		}
		if isCall {
			var req mcpgo.CallToolRequest
			if json.Unmarshal(b, &req) == nil {
				if req.Params.Name != name {
					return fmt.Errorf("mcp-go reads tool %q, the gateway %q", req.Params.Name, name)
				}
				if err := sameArgs("mcp-go", marshal(req.Params.Arguments), args); err != nil {
					return err
				}
			}
		}
	}
	// The go-sdk: jsonrpc.DecodeMessage, then the params of tools/call.
	if msg, err := jsonrpc.DecodeMessage(b); err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok {
			if req.Method != m.Method {
				return fmt.Errorf("go-sdk reads method %q, the gateway %q", req.Method, m.Method)
			}
			if err := decodedID("go-sdk", req.ID.Raw(), m); err != nil {
				return err
			}
			var p gosdk.CallToolParamsRaw
			if isCall && json.Unmarshal(req.Params, &p) == nil {
				if p.Name != name {
					return fmt.Errorf("go-sdk reads tool %q, the gateway %q", p.Name, name)
				}
				if len(p.Arguments) > 0 || args.Valid() {
					if err := sameArgs("go-sdk", p.Arguments, args); err != nil {
						return err
					}
				}
			}
		}
	}
	if isCall {
		return sameStruct(args)
	}
	return nil
}

// decodedID compares a decoder's id with the gateway's: absent for a
// notification; a string as its text; a number as the double it reads,
// when the gateway's id is one a double holds exactly (a larger one the
// gateway does not forward as it came).
func decodedID(who string, got any, m *frame.Message) error {
	if m.Kind != frame.Request {
		if got != nil {
			return fmt.Errorf("%s reads id %v on what the gateway takes for a notification", who, got)
		}
		return nil
	}
	switch m.ID.Kind() {
	case jcs.String:
		if s, ok := got.(string); !ok || s != m.ID.Str() {
			return fmt.Errorf("%s reads id %v, the gateway %s", who, got, m.ID.Raw())
		}
	case jcs.Number:
		if m.ID.Inexact() {
			return nil
		}
		var f float64
		switch v := got.(type) {
		case float64:
			f = v
		case int64:
			f = float64(v)
		default:
			return fmt.Errorf("%s reads id %v (%T), the gateway %s", who, got, got, m.ID.Raw())
		}
		if f != m.ID.Float() {
			return fmt.Errorf("%s reads id %v, the gateway %s", who, got, m.ID.Raw())
		}
	}
	return nil
}

func marshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// sameArgs compares a decoder's arguments with the gateway's, as
// canonical JSON (numbers as the nearest doubles: what both read).
func sameArgs(who string, got []byte, want jcs.Value) error {
	w := []byte("null")
	if want.Valid() {
		w = want.Canonical()
	}
	d, err := jcs.Parse(got)
	if err != nil {
		return fmt.Errorf("%s's arguments do not parse: %v", who, err)
	}
	if g := d.Root().Canonical(); !bytes.Equal(g, w) {
		return fmt.Errorf("%s reads arguments %s, the gateway %s", who, g, w)
	}
	return nil
}

// sameStruct decodes the arguments as a tool handler would, into
// thingArgs, and checks each field holds what the gateway saw under that
// exact name (or nothing when it saw none).
func sameStruct(args jcs.Value) error {
	if !args.Valid() || args.Kind() != jcs.Object {
		return nil
	}
	var a thingArgs
	if err := json.Unmarshal(args.Raw(), &a); err != nil {
		return nil // the handler refuses them
	}
	str := func(v jcs.Value, key string) string {
		x, ok := v.Get(key)
		if !ok {
			return ""
		}
		return x.Str()
	}
	if a.ID != str(args, "id") || a.Path != str(args, "path") {
		return fmt.Errorf("a handler reads id %q path %q, the gateway %q %q", a.ID, a.Path, str(args, "id"), str(args, "path"))
	}
	if r, ok := args.Get("ratio"); ok && r.Float() != a.Ratio || !ok && a.Ratio != 0 {
		return fmt.Errorf("a handler reads ratio %v", a.Ratio)
	}
	if o, ok := args.Get("opts"); ok && o.Kind() == jcs.Object {
		if a.Opts.Mode != str(o, "mode") {
			return fmt.Errorf("a handler reads opts.mode %q, the gateway %q", a.Opts.Mode, str(o, "mode"))
		}
	} else if a.Opts.Mode != "" {
		return fmt.Errorf("a handler reads opts.mode %q where the gateway saw no opts", a.Opts.Mode)
	}
	return nil
}

// TestServedResultHasOneToolsMember: the gateway's tools/list result keeps
// the first page's other members, but none a decoder takes for tools or
// nextCursor: mcp-go's ListToolsResult then reads only the approved list.
func TestServedResultHasOneToolsMember(t *testing.T) {
	d, err := jcs.Parse([]byte(`{"Tools":[{"name":"exec_shell","inputSchema":{"type":"object"}}],"tools":[],"NEXTCURSOR":"x","__proto__":{},"ttlMs":5000}`))
	if err != nil {
		t.Fatal(err)
	}
	got := servedResult(meaningList(t), d.Root())
	var r mcpgo.ListToolsResult
	if err := json.Unmarshal(got, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "get_thing" || r.NextCursor != "" {
		t.Fatalf("mcp-go reads %s as %+v", got, r)
	}
	if !bytes.Contains(got, []byte(`"ttlMs":5000`)) || bytes.Contains(got, []byte("__proto__")) {
		t.Fatalf("served %s", got)
	}
}
