package mcpclient

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a fake stdio MCP server: argv
// "fake-mcp-server MODE" with MCPCLIENT_FAKE=1 in the environment (which
// only reaches the child through Config.PassEnv).
const fakeArg = "fake-mcp-server"

func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == fakeArg {
		if os.Getenv("MCPCLIENT_FAKE") != "1" {
			fmt.Fprintln(os.Stderr, "MCPCLIENT_FAKE not passed")
			os.Exit(97)
		}
		fakeServer(os.Args[2])
		os.Exit(0)
	}
	os.Setenv("MCPCLIENT_FAKE", "1")
	os.Setenv("MCPCLIENT_SECRET", "hunter2")
	os.Exit(m.Run())
}

// fakeCommand is the Command of a fake server in mode.
func fakeCommand(mode string) []string { return []string{os.Args[0], fakeArg, mode} }

type fakeMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params map[string]any  `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func fakeServer(mode string) {
	out := bufio.NewWriter(os.Stdout)
	send := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	fmt.Fprintf(os.Stderr, "fake server %s starting\n", mode)
	var grandchild *exec.Cmd
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: missing API_TOKEN")
		os.Exit(3)
	case "sleep":
		time.Sleep(time.Minute)
		return
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		grandchild = exec.Command(os.Args[0], fakeArg, "sleep")
		grandchild.Env = os.Environ()
		if err := grandchild.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(4)
		}
	case "legacy":
		send("fake legacy server ready (a log line on stdout)")
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	pingOK := false
	for in.Scan() {
		var q fakeMsg
		if err := json.Unmarshal(in.Bytes(), &q); err != nil {
			fmt.Fprintf(os.Stderr, "bad line: %q\n", in.Bytes())
			os.Exit(5)
		}
		if q.Method == "" { // a reply to our request
			if string(q.ID) == `"ping-1"` && string(q.Result) == "{}" {
				pingOK = true
			}
			continue
		}
		switch mode {
		case "silent":
			continue
		case "garbage":
			send(`{not json at all`)
			continue
		case "wrongid":
			send(`{"jsonrpc":"2.0","id":99,"result":{}}`)
			continue
		}
		modern := mode != "legacy" && mode != "legacy-silent-discover"
		switch {
		case q.Method == "server/discover" && mode == "legacy-silent-discover":
			// no answer: an old server ignoring an unknown method
		case q.Method == "server/discover" && !modern:
			send(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, q.ID)
		case q.Method == "server/discover":
			name := "fake-stdio"
			switch mode {
			case "envdump":
				var names []string
				for _, kv := range os.Environ() {
					names = append(names, strings.SplitN(kv, "=", 2)[0])
				}
				sort.Strings(names)
				name = strings.Join(names, ",")
			case "stubborn":
				name = fmt.Sprintf("pids:%d,%d", os.Getpid(), grandchild.Process.Pid)
			}
			send(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":%q,"version":"7"}},"ttlMs":0,"cacheScope":"public"}}`, q.ID, name)
		case q.Method == "initialize":
			send(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake-stdio-legacy","version":"1"}}}`, q.ID)
		case q.Method == "notifications/initialized":
			send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			send(`{"jsonrpc":"2.0","id":"ping-1","method":"ping"}`)
		case q.Method == "tools/list":
			cursor, _ := q.Params["cursor"].(string)
			meta, _ := q.Params["_meta"].(map[string]any)
			if modern && meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" {
				send(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"missing _meta"}}`, q.ID)
				continue
			}
			send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)
			if cursor == "" {
				send(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"s1","inputSchema":{"type":"object"}}],"nextCursor":"n1","ttlMs":0,"cacheScope":"public"}}`, q.ID)
			} else {
				send(`{"jsonrpc":"2.0", "id":%s, "result":{"tools":[{"name":"s2","inputSchema":{"type":"object"},"x-extra":[1.50,"\u2028"]}],"ttlMs":0,"cacheScope":"public"}}`, q.ID)
			}
		default:
			send(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, q.ID)
		}
	}
	fmt.Fprintf(os.Stderr, "fake server %s: stdin closed (ping answered: %v)\n", mode, pingOK)
	if mode == "stubborn" {
		time.Sleep(time.Minute)
	}
}
