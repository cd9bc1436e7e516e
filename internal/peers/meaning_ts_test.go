package peers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// TestGatewayMeaningTypeScript is the differential check of the gateway's
// forwarded messages (proxy.FuzzGatewayMeaning) against the TypeScript
// SDK, which the Go fuzz target cannot call: the smuggling seeds and a
// few thousand messages generated from their member names are read by
// the SDK's own schemas (JSONRPCMessageSchema, CallToolRequestSchema)
// and a zod tool handler, as server-everything reads them, and every one
// the gateway would forward must mean the same method, id, tool name and
// arguments there.
func TestGatewayMeaningTypeScript(t *testing.T) {
	node, entry := everythingPeer(t)
	i := strings.LastIndex(entry, string(filepath.Separator)+"node_modules"+string(filepath.Separator))
	if i < 0 {
		t.Fatalf("cannot find node_modules above %s", entry)
	}
	root := entry[:i]
	script := filepath.Join(t.TempDir(), "meaning.cjs")
	if err := os.WriteFile(script, []byte(tsMeaning), 0o644); err != nil {
		t.Fatal(err)
	}
	msgs := smuggleSeeds(t, "get_thing", "exec_shell", `{"id":"1"}`)
	msgs = append(msgs, generatedMessages(4000)...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, root)
	cmd.Stdin = bytes.NewReader(append(bytes.Join(msgs, []byte("\n")), '\n'))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var views []tsView
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var v tsView
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("node printed %q: %v", sc.Text(), err)
		}
		views = append(views, v)
	}
	if len(views) != len(msgs) {
		t.Fatalf("%d answers for %d messages", len(views), len(msgs))
	}
	forwarded, read := 0, 0
	for k, msg := range msgs {
		m := gatewayForwards(msg)
		if m == nil {
			continue
		}
		forwarded++
		if !views[k].OK {
			continue // the SDK refuses it: it means nothing there
		}
		read++
		if err := views[k].agrees(m); err != nil {
			t.Errorf("the gateway forwards %s, which the TypeScript SDK reads otherwise: %v", msg, err)
		}
	}
	t.Logf("%d messages, %d the gateway forwards, %d of them read by the SDK", len(msgs), forwarded, read)
	if read < 50 {
		t.Fatalf("only %d forwarded messages were read by the SDK: the check proves little", read)
	}
}

// gatewayForwards is the gateway's decision on a downstream message as the
// framing and the notification rule make it (the call decision, pinned
// schema and all, is proxy.FuzzGatewayMeaning's).
func gatewayForwards(b []byte) *frame.Message {
	m, e := frame.FromClient(b)
	if e != nil || m.Kind == frame.Notification && !mcpwire.NotificationFromClient(m.Method) {
		return nil
	}
	return m
}

type tsView struct {
	OK      bool            `json:"ok"`
	Method  *string         `json:"method"`
	ID      json.RawMessage `json:"id"`
	Name    *string         `json:"name"`
	Args    json.RawMessage `json:"args"`
	Handler json.RawMessage `json:"handler"`
}

func (v tsView) agrees(m *frame.Message) error {
	if m.Kind != frame.Request && m.Kind != frame.Notification {
		return nil
	}
	if v.Method == nil || *v.Method != m.Method {
		return fmt.Errorf("method %v", v.Method)
	}
	switch {
	case m.Kind == frame.Notification && string(v.ID) != "null":
		return fmt.Errorf("an id %s on a notification", v.ID)
	case m.Kind == frame.Request && !m.ID.Inexact() && !sameJSON(v.ID, m.ID.Raw()):
		return fmt.Errorf("id %s, the gateway %s", v.ID, m.ID.Raw())
	}
	if m.Method != "tools/call" || m.Kind != frame.Request {
		return nil
	}
	var name string
	var args jcs.Value
	if n, ok := m.Param("name"); ok && n.Kind() == jcs.String {
		name = n.Str()
	}
	args, _ = m.Param("arguments")
	if v.Name == nil || *v.Name != name {
		return fmt.Errorf("tool %v, the gateway %q", v.Name, name)
	}
	want := []byte("null")
	if args.Valid() {
		want = args.Raw()
	}
	if !sameJSON(v.Args, want) {
		return fmt.Errorf("arguments %s, the gateway %s", v.Args, want)
	}
	if len(v.Handler) > 0 && string(v.Handler) != "null" {
		var h struct {
			ID   string
			Path string
			Opts struct{ Mode string }
		}
		_ = json.Unmarshal(v.Handler, &h)
		get := func(x jcs.Value, k string) string {
			if !x.Valid() {
				return ""
			}
			y, ok := x.Get(k)
			if !ok {
				return ""
			}
			return y.Str()
		}
		opts, _ := args.Get("opts")
		if h.ID != get(args, "id") || h.Path != get(args, "path") || h.Opts.Mode != get(opts, "mode") {
			return fmt.Errorf("a zod handler reads %s", v.Handler)
		}
	}
	return nil
}

// sameJSON compares two JSON texts canonically.
func sameJSON(a, b []byte) bool {
	da, err1 := jcs.Parse(a)
	db, err2 := jcs.Parse(b)
	return err1 == nil && err2 == nil && bytes.Equal(da.Root().Canonical(), db.Root().Canonical())
}

// generatedMessages builds n messages from the smuggling seeds' member
// names and values, deterministically.
func generatedMessages(n int) [][]byte {
	r := rand.New(rand.NewPCG(29, 1))
	env := []string{`"id"`, `"ID"`, `"\u0130d"`, `"method"`, `"Method"`, `"params"`, `"Params"`, `"param\u017f"`, `"__proto__"`, `"jsonrpc"`}
	par := []string{`"name"`, `"Name"`, `"NAME"`, `"arguments"`, `"ARGUMENTS"`, `"__proto__"`, `"na\u0000me"`, `"_meta"`, `"task"`, `"nam\u212A"`}
	arg := []string{`"id"`, `"Id"`, `"path"`, `"PATH"`, `"pat\u0127"`, `"__proto__"`, `"opts"`, `"constructor"`, `"mode"`, `"\u212Aind"`}
	methods := []string{`"tools/call"`, `"ping"`, `"Tools/Call"`, `"notifications/initialized"`, `"tools/list"`}
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	obj := func(keys []string, val func(depth int) string, depth int) string {
		k := 1 + r.IntN(4)
		seen := map[string]bool{}
		var parts []string
		for range k {
			key := pick(keys)
			if seen[key] {
				continue
			}
			seen[key] = true
			parts = append(parts, key+":"+val(depth))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	var value func(depth int) string
	value = func(depth int) string {
		switch r.IntN(5) {
		case 0:
			return `"1"`
		case 1:
			return `"/etc/shadow"`
		case 2:
			return "7"
		case 3:
			if depth < 3 {
				return obj(arg, value, depth+1)
			}
		}
		return `"get_thing"`
	}
	out := make([][]byte, 0, n)
	for range n {
		params := `{"name":"get_thing","arguments":` + obj(arg, value, 0) + "}"
		if r.IntN(3) == 0 {
			params = obj(par, func(d int) string { return obj(arg, value, d) }, 0)
		}
		parts := []string{`"jsonrpc":"2.0"`, `"method":` + pick(methods), `"params":` + params}
		if r.IntN(4) > 0 {
			parts = append(parts, `"id":`+fmt.Sprint(r.IntN(100)))
		}
		if r.IntN(2) == 0 {
			parts = append(parts, pick(env)+":"+value(0))
		}
		r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		out = append(out, []byte("{"+strings.Join(parts, ",")+"}"))
	}
	return out
}

// tsMeaning reads each line as server-everything's SDK reads a message:
// JSONRPCMessageSchema, then CallToolRequestSchema for tools/call, and a
// zod object handler for its arguments; it prints what each saw.
const tsMeaning = `
const path = require('path');
const root = process.argv[2];
const types = require(path.join(root, 'node_modules/@modelcontextprotocol/sdk/dist/cjs/types.js'));
const z = require(path.join(root, 'node_modules/zod/v4'));
const thing = z.object({id: z.string(), path: z.string().optional(), opts: z.object({mode: z.string().optional()}).optional()});
const rl = require('readline').createInterface({input: process.stdin, crlfDelay: Infinity});
rl.on('line', line => {
  const out = {ok: false};
  try {
    const m = types.JSONRPCMessageSchema.parse(JSON.parse(line));
    out.ok = true;
    out.method = m.method === undefined ? null : m.method;
    out.id = Object.prototype.hasOwnProperty.call(m, 'id') ? m.id : null;
    if (m.method === 'tools/call') {
      const r = types.CallToolRequestSchema.parse(m);
      out.name = r.params.name;
      out.args = r.params.arguments === undefined ? null : r.params.arguments;
      const h = thing.safeParse(r.params.arguments === undefined ? {} : r.params.arguments);
      out.handler = h.success ? h.data : null;
    }
  } catch (e) { out.ok = out.ok && false; out.err = String(e).slice(0, 200); }
  console.log(JSON.stringify(out));
});
`
