package frame

import (
	"net/http"
	"strconv"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// ReasonAmbiguous is the reason code of a message refused because
// decoders in common use read it differently (Error.Reason).
const ReasonAmbiguous = "message_ambiguous"

// Names a receiver reads in a message: the JSON-RPC envelope's, the
// params members of the specification's client messages, and the _meta
// keys it defines. A member whose safetext.MemberKey is one of these and
// which is not exactly it is what a case-insensitive decoder reads in its
// place.
var (
	envelopeNames = foldSet("jsonrpc", "id", "method", "params", "result", "error")
	paramsNames   = foldSet("name", "arguments", "_meta", "cursor", "uri", "protocolVersion",
		"capabilities", "clientInfo", "requestId", "reason", "progressToken", "progress", "total",
		"message", "level", "ref", "argument", "context", "task", "taskId", "ttl", "notifications")
	metaNames = foldSet("progressToken", "traceparent", "tracestate", "baggage",
		mcpwire.MetaProtocolVersion, mcpwire.MetaClientCapabilities, mcpwire.MetaClientInfo,
		mcpwire.MetaLogLevel, "io.modelcontextprotocol/subscriptionId", "io.modelcontextprotocol/related-task")
	methodNames = func() map[string]string {
		m := map[string]string{}
		mcpwire.Methods(func(name string, _ mcpwire.Method) { m[safetext.MemberKey(name)] = name })
		return m
	}()
)

func foldSet(names ...string) map[string]string {
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[safetext.MemberKey(n)] = n
	}
	return m
}

// ambiguity is the first place in a client's message m that decoders in
// common use read differently, as the error to answer with (nil when
// there is none):
//
//   - two member names of one object, anywhere in the message, with one
//     safetext.MemberKey (exact duplicates never parse), or a member
//     named "__proto__", which JavaScript's assignment makes a prototype;
//   - a member of the envelope, of params or of params._meta that is not a
//     name the specification gives there but has the MemberKey of one
//     ("Method", "Name", "ARGUMENTS", "name\u0000x");
//   - a method that is not printable ASCII, or that is not a method of
//     the specification but has the MemberKey of one ("Tools/Call").
//
// The message is refused whole: -32600 for the envelope and the method,
// -32602 inside params. Refusing, rather than forwarding a re-encoding of
// the members the receiver read, keeps the one rule of the gateway that
// what it forwards is what it received (hashes, signatures and traces
// agree on both sides), and tells the sender, which a silent repair would
// not.
func (m *Message) ambiguity() *Error {
	if p, a, b, ok := collision(m.Root); ok {
		if a == protoMember {
			return ambiguous(p, "a member named \"__proto__\" at "+safetext.Quote(p)+": a JavaScript receiver that copies members by assignment makes it the object's prototype (the member disappears, and its contents answer for every member the object lacks)")
		}
		return ambiguous(p, "member names "+quoteName(a)+" and "+quoteName(b)+" at "+safetext.Quote(p)+
			" are one name to decoders that ignore case (Go's encoding/json, System.Text.Json, Jackson)")
	}
	if e := variant(m.Root, envelopeNames, ""); e != nil {
		return e
	}
	if m.Kind == Request || m.Kind == Notification {
		if e := methodProblem(m.Method); e != nil {
			return e
		}
	}
	if m.Params.Valid() && m.Params.Kind() == jcs.Object {
		if e := variant(m.Params, paramsNames, "/params"); e != nil {
			return e
		}
		if meta, ok := m.Params.Get("_meta"); ok && meta.Kind() == jcs.Object {
			return variant(meta, metaNames, "/params/_meta")
		}
	}
	return nil
}

func ambiguous(ptr, msg string) *Error {
	code, prefix := mcpwire.CodeInvalidRequest, "Invalid Request: "
	if len(ptr) >= len("/params") && ptr[:len("/params")] == "/params" {
		code, prefix = mcpwire.CodeInvalidParams, "Invalid params: "
	}
	return &Error{Status: http.StatusBadRequest, Code: code, Message: prefix + msg, Reason: ReasonAmbiguous}
}

func quoteName(s string) string { return safetext.Quote(safetext.Clip(s, 64)) }

// protoMember is the member name JavaScript's assignment turns into an
// object's prototype.
const protoMember = "__proto__"

// collision finds two members of one object under v with one
// safetext.MemberKey, or a member named "__proto__" (returned as a, with
// b empty): the object's pointer and the names. The pointer is built only
// for what is found.
func collision(v jcs.Value) (string, string, string, bool) {
	switch v.Kind() {
	case jcs.Array:
		for i := range v.Len() {
			if p, a, b, ok := collision(v.Index(i)); ok {
				return "/" + strconv.Itoa(i) + p, a, b, true
			}
		}
	case jcs.Object:
		if _, ok := v.Get(protoMember); ok {
			return "", protoMember, "", true
		}
		if a, b, ok := sameFoldMembers(v); ok {
			return "", a, b, true
		}
		for i := range v.Len() {
			k, x := v.Member(i)
			if x.Kind() != jcs.Object && x.Kind() != jcs.Array {
				continue
			}
			if p, a, b, ok := collision(x); ok {
				return jcs.PointerJoin("", k.Str()) + p, a, b, true
			}
		}
	}
	return "", "", "", false
}

// smallFold is the most members compared pairwise; a larger object is
// keyed by safetext.MemberKey.
const smallFold = 16

// sameFoldMembers returns two member names of object v with one
// safetext.MemberKey.
func sameFoldMembers(v jcs.Value) (string, string, bool) {
	n := v.Len()
	if n <= smallFold {
		for i := range n {
			a, _ := v.Member(i)
			for j := i + 1; j < n; j++ {
				b, _ := v.Member(j)
				if safetext.SameMember(a.StrBytes(), b.StrBytes()) {
					return a.Str(), b.Str(), true
				}
			}
		}
		return "", "", false
	}
	seen := make(map[string]string, n)
	for i := range n {
		k, _ := v.Member(i)
		name := k.Str()
		key := safetext.MemberKey(name)
		if prev, dup := seen[key]; dup {
			return prev, name, true
		}
		seen[key] = name
	}
	return "", "", false
}

// variant finds a member of object v that is not a name of known but has
// the FoldKey of one.
func variant(v jcs.Value, known map[string]string, ptr string) *Error {
	var buf [64]byte
	for i := range v.Len() {
		k, _ := v.Member(i)
		name := k.StrBytes()
		want, ok := known[string(safetext.AppendMemberKey(buf[:0], name))]
		if ok && want != string(name) {
			n := string(name)
			return ambiguous(jcs.PointerJoin(ptr, n), "member "+quoteName(n)+" at "+safetext.Quote(ptr)+
				" is "+quoteName(want)+" to decoders that ignore case, and is not "+quoteName(want))
		}
	}
	return nil
}

// methodProblem refuses a method that is not printable ASCII, or that a
// case-insensitive dispatcher would take for one of the specification's.
func methodProblem(method string) *Error {
	for i := 0; i < len(method); i++ {
		if c := method[i]; c <= ' ' || c >= 0x7f {
			return ambiguous("/method", "the method "+quoteName(method)+" is not printable ASCII")
		}
	}
	var buf [64]byte
	if want, ok := methodNames[string(safetext.AppendMemberKey(buf[:0], []byte(method)))]; ok && want != method {
		return ambiguous("/method", "the method "+quoteName(method)+" is "+quoteName(want)+
			" to a receiver that ignores case, and is not "+quoteName(want))
	}
	return nil
}
