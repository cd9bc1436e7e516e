package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// serveHostileStdio is the test binary as a stdio server whose tools/call
// answers are hostile (MCPDRIFT_PROXY_TEST_HOSTILE), everything else
// served by the strict mock; with MCPDRIFT_PROXY_TEST_LOG every line it
// receives is appended to that file (the upstream's own log):
//
//   - wrong-id: the answer carries the request's id + 1000;
//   - oversized-first, oversized-last, oversized-middle: a 20 MiB answer
//     whose id is its first member, its last (as the TypeScript SDK
//     writes a response), or between its result and its jsonrpc members;
//   - slow: the answer comes after 2 s.
func serveHostileStdio(s *mockserver.Server, mode, logPath string) int {
	var (
		omu sync.Mutex
		out = bufio.NewWriterSize(os.Stdout, 1<<20)
	)
	writeLine := func(b []byte) {
		omu.Lock()
		defer omu.Unlock()
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	var logf *os.File
	if logPath != "" {
		logf, _ = os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	toMock, mockIn := io.Pipe()
	fromMock, mockOut := io.Pipe()
	go s.ServeStdio(context.Background(), toMock, mockOut)
	go func() {
		sc := bufio.NewScanner(fromMock)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			writeLine(sc.Bytes())
		}
	}()
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		if logf != nil {
			logf.Write(append(append([]byte(nil), line...), '\n'))
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || m.Method != "tools/call" {
			mockIn.Write(append(line, '\n'))
			continue
		}
		go writeLine(hostileAnswer(mode, m.ID))
	}
	mockIn.Close()
	return 0
}

func hostileAnswer(mode string, id json.RawMessage) []byte {
	big := `{"content":[{"type":"text","text":"` + strings.Repeat("z", 20<<20) + `"}]}`
	switch mode {
	case "wrong-id":
		var n int64
		json.Unmarshal(id, &n)
		wrong, _ := json.Marshal(n + 1000)
		return []byte(`{"jsonrpc":"2.0","id":` + string(wrong) + `,"result":{"content":[]}}`)
	case "oversized-first":
		return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + big + `}`)
	case "oversized-last":
		return []byte(`{"result":` + big + `,"jsonrpc":"2.0","id":` + string(id) + `}`)
	case "oversized-middle":
		return []byte(`{"result":` + big + `,"id":` + string(id) + `,"jsonrpc":"2.0"}`)
	case "slow":
		time.Sleep(2 * time.Second)
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"ok"}]}}`)
}
