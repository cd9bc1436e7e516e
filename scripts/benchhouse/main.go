//go:build unix

// Command benchhouse times what users run — pin a live server, drift
// against it, gate an observation, diff two lists — with two builds of
// mcpdrift side by side in one run: the binary built from a git ref
// (default pre-house, the head before the redesign of issue 31) and the
// one built from the working tree, on lists of 100, 1,000, 10,000 and
// 100,000 tools. Run it from the repository:
//
//	go run ./scripts/benchhouse                              # pre-house against the working tree
//	go run ./scripts/benchhouse -sizes 100,1000 -n 9         # fewer sizes, more runs
//	go run ./scripts/benchhouse -ref main -o bench-house.md  # another baseline, the table to a file
//
// Each command runs as its own process, under GNU time (/usr/bin/time),
// and each figure is that process's own: wall time, CPU time (user +
// system) and peak resident memory (time's %M). The two builds take turns, command by command (old, new; then new,
// old in the next round), so a machine that slows down or speeds up
// weighs on both alike; a cell is the median of -n runs with its range,
// and the ratio is the median of the new/old ratios of the runs paired.
//
// The lists are internal/corpus's LeanTools (about 1.7 KB a tool, the
// size of real servers' tools: 100,000 tools are 172 MB), seed 1, and a
// second version of each with 1% of the tools changed (half in their
// description, half a parameter's type). The server is the strict mock
// (mockserver), in this process, on loopback, 100 tools a page; both
// builds talk to the same one. The commands:
//
//   - pin: pin --url (the live server, the first version);
//   - drift: drift of the live-pinned first version against the live
//     server serving the second;
//   - gate: gate of the observed second version (observe --input) against
//     the declared first (pin --input), with both snapshots;
//   - diff: diff of the two saved lists.
//
// The inputs of drift and gate are made by each build for itself, before
// the timed runs. With -inspector (default: the MCP Inspector that
// scripts/install-test-peers.sh installed, when there is one), the MCP
// Inspector's CLI lists the same live server (--method tools/list, which
// follows every page) as the baseline of pin. It follows at most 64
// pages, so it is served larger pages where the list needs more (a
// listing in fewer round trips than pin's, the baseline's advantage).
//
// At 100,000 tools the listing bounds (--max-list-bytes, 64 MiB by
// default) would refuse the 172 MB list, and the input bound
// (--max-input-bytes) the files made from it: both builds are given
// bounds of 1 GiB there, and the table says so. A command that fails is
// reported with its exit code and the last line it wrote, never timed.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

type options struct {
	ref       string
	sizes     []int
	n, nLarge int
	ops       []string
	inspector string
	timeout   time.Duration
	out       string
	keep      bool
}

func main() {
	var o options
	var sizes, ops string
	flag.StringVar(&o.ref, "ref", "pre-house", "the git ref of the baseline build")
	flag.StringVar(&sizes, "sizes", "100,1000,10000,100000", "list sizes, in tools")
	flag.IntVar(&o.n, "n", 5, "runs of each command per build and size, below 100,000 tools")
	flag.IntVar(&o.nLarge, "n-large", 1, "runs at 100,000 tools and more")
	flag.StringVar(&ops, "ops", "pin,drift,gate,diff", "the commands to time")
	flag.StringVar(&o.inspector, "inspector", "auto", "the MCP Inspector CLI's entry script (auto: the one scripts/install-test-peers.sh installed; off: none)")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "bound on one command")
	flag.StringVar(&o.out, "o", "", "also write the table to this file")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (binaries, inputs, outputs)")
	flag.Parse()
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fatal(fmt.Errorf("-sizes: %q is not a size", s))
		}
		o.sizes = append(o.sizes, n)
	}
	for _, op := range strings.Split(ops, ",") {
		if _, ok := commands[strings.TrimSpace(op)]; !ok {
			fatal(fmt.Errorf("-ops: unknown command %q", op))
		}
		o.ops = append(o.ops, strings.TrimSpace(op))
	}
	if _, err := os.Stat(timeBin); err != nil {
		fatal(fmt.Errorf("%s (GNU time) is needed: it reads each command's peak memory: %v", timeBin, err))
	}
	if err := run(o); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchhouse:", err)
	os.Exit(2)
}

// build is one mcpdrift binary under test.
type build struct {
	name string // the ref, or "tree"
	bin  string
	url  string // the flag drift names the server's URL with
}

func run(o options) error {
	work, err := os.MkdirTemp("", "benchhouse-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "benchhouse: work directory", work)
	} else {
		defer os.RemoveAll(work)
	}
	old, err := buildRef(o.ref, work)
	if err != nil {
		return err
	}
	tree, err := buildTree(work)
	if err != nil {
		return err
	}
	inspector, node := findInspector(o.inspector)
	srv, err := newServer()
	if err != nil {
		return err
	}
	defer srv.close()
	var rows []row
	for _, size := range o.sizes {
		fmt.Fprintf(os.Stderr, "benchhouse: %d tools\n", size)
		r, err := benchSize(o, size, work, srv, [2]build{old, tree}, inspector, node)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	table := render(o, old, rows, inspector != "")
	fmt.Print(table)
	if o.out != "" {
		return os.WriteFile(o.out, []byte(table), 0o644)
	}
	return nil
}

// buildRef builds cmd/mcpdrift as it is at ref (git archive, so nothing
// of the working tree leaks in).
func buildRef(ref, work string) (build, error) {
	src := filepath.Join(work, "src-ref")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return build{}, err
	}
	archive := exec.Command("git", "archive", "--format=tar", ref)
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return build{}, err
	}
	untar.Stdin = pipe
	var stderr bytes.Buffer
	archive.Stderr, untar.Stderr = &stderr, &stderr
	if err := untar.Start(); err != nil {
		return build{}, err
	}
	if err := archive.Run(); err != nil {
		return build{}, fmt.Errorf("git archive %s: %v: %s", ref, err, stderr.Bytes())
	}
	if err := untar.Wait(); err != nil {
		return build{}, fmt.Errorf("tar: %v: %s", err, stderr.Bytes())
	}
	return goBuild(ref, src, filepath.Join(work, "mcpdrift-ref"))
}

func buildTree(work string) (build, error) {
	return goBuild("tree", ".", filepath.Join(work, "mcpdrift-tree"))
}

func goBuild(name, dir, bin string) (build, error) {
	fmt.Fprintf(os.Stderr, "benchhouse: building %s\n", name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/mcpdrift")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return build{}, fmt.Errorf("building %s: %v: %s", name, err, out)
	}
	help, _ := exec.Command(bin, "drift", "--help").CombinedOutput()
	b := build{name: name, bin: bin, url: "--base-url"}
	if bytes.Contains(help, []byte("  --url string")) {
		b.url = "--url"
	}
	return b, nil
}

// server serves one mock server or another at one URL: the first
// version of a list or the second, as the command being timed needs (the
// endpoint, part of a server's identity, stays the same).
type server struct {
	url     string
	hs      *http.Server
	current atomic.Pointer[mockserver.Server]
}

func newServer() (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{url: "http://" + ln.Addr().String() + "/mcp"}
	s.hs = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.current.Load().ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go s.hs.Serve(ln)
	return s, nil
}

// use makes the server serve m.
func (s *server) use(m *mockserver.Server) { s.current.Store(m) }

func (s *server) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.hs.Shutdown(ctx)
}

// newMock is the mock server serving tools, pageSize a page.
func newMock(tools []json.RawMessage, pageSize int) (*mockserver.Server, error) {
	return mockserver.New(mockserver.Config{Tools: tools, PageSize: pageSize, ServerName: "bench-house", ServerVersion: "1.0.0",
		MaxSessions: 1 << 16, LogLimit: 1})
}

// inputs are one size's lists: two versions, as saved files and as the
// tools the server serves.
type inputs struct {
	dir            string
	v1File, v2File string
	v1, v2         []json.RawMessage
	// The bound flags given at this size (none below 100,000 tools): of
	// a listing, and of an input file.
	bound, inputBound []string
	// mocks serve v1 and v2, pageSize a page.
	mocks [2]*mockserver.Server
}

func (in *inputs) close() {
	for _, m := range in.mocks {
		if m != nil {
			m.Close()
		}
	}
}

func makeInputs(size int, work string) (*inputs, error) {
	in := &inputs{dir: filepath.Join(work, strconv.Itoa(size))}
	if err := os.MkdirAll(in.dir, 0o755); err != nil {
		return nil, err
	}
	v1 := corpus.LeanTools(size, 1)
	if err := json.Unmarshal(v1, &in.v1); err != nil {
		return nil, err
	}
	in.v2 = changed(in.v1)
	v2, err := json.Marshal(in.v2)
	if err != nil {
		return nil, err
	}
	// Saved as tools/list responses: one page without nextCursor, a list
	// known to be complete (a bare array of tools is of unknown
	// completeness, which pin refuses).
	in.v1File, in.v2File = filepath.Join(in.dir, "tools-v1.json"), filepath.Join(in.dir, "tools-v2.json")
	for _, f := range []struct {
		path  string
		tools []byte
	}{{in.v1File, v1}, {in.v2File, v2}} {
		doc := append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":`), f.tools...)
		if err := os.WriteFile(f.path, append(doc, "}}"...), 0o644); err != nil {
			return nil, err
		}
	}
	for i, tools := range [][]json.RawMessage{in.v1, in.v2} {
		if in.mocks[i], err = newMock(tools, pageSize); err != nil {
			in.close()
			return nil, err
		}
	}
	if size >= 100000 {
		in.bound = []string{"--max-list-bytes", "1073741824"}
		in.inputBound = []string{"--max-input-bytes", "1073741824"}
	}
	return in, nil
}

// changed is tools with 1% of them changed: every 200th tool's
// description starts "Changed: ", and every 200th, a hundred further on,
// has its first string parameter made an integer.
func changed(tools []json.RawMessage) []json.RawMessage {
	out := slices.Clone(tools)
	for i := range out {
		switch i % 200 {
		case 0:
			out[i] = replaceFirst(out[i], `"description":"`, `"description":"Changed: `)
		case 100:
			out[i] = replaceFirst(out[i], `"type":"string"`, `"type":"integer"`)
		}
	}
	return out
}

func replaceFirst(b json.RawMessage, old, new string) json.RawMessage {
	i := bytes.Index(b, []byte(old))
	if i < 0 {
		return b
	}
	out := make(json.RawMessage, 0, len(b)+len(new)-len(old))
	out = append(out, b[:i]...)
	out = append(out, new...)
	return append(out, b[i+len(old):]...)
}
