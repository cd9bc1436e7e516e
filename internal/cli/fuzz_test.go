package cli

import (
	"bytes"
	"strings"
	"testing"
)

// Whatever the input, the CLI exits 0, 1, 2 or 3 and never panics or
// prints a stack trace; nothing on stderr is a raw control character.
func FuzzCLIInputs(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{"name":"a"}]}`, `[{"name":"a","inputSchema":{"type":"object"}}]`,
		`{"schema":"assay.mcp_manifest_observed.v0","status":"observed","server":{"id":"s"},"observed":{"canonicalization":"assay.mcp_manifest_projection.v0","tools_list_observed":true,"tools_list_complete":"complete","tool_digests":[]}}`,
		`{"schema":"mcpdrift.tool_snapshot.v1"}`, "declared_mcp_manifests:\n  s:\n    manifest_digest: x\n", "\x1b[2J", "",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, which uint8) {
		dir := t.TempDir()
		p := writeFile(t, dir, "in", in)
		cmds := [][]string{
			{"observe", "--input", "-", "--server-id", "s", "-q"},
			{"pin", "--observed", "-"},
			{"gate", "--observed", "-", "--policy", p},
			{"gate", "--observed", p, "--declared", "-"},
			{"diff", p, "-"},
			{"pin", "--input", "-", "--server-id", "s", "--no-snapshot"},
		}
		args := cmds[int(which)%len(cmds)]
		var out, errb bytes.Buffer
		code := Main(args, bytes.NewReader(in), &out, &errb)
		if code < 0 || code > 3 {
			t.Fatalf("%v: exit %d", args, code)
		}
		if s := errb.String(); strings.Contains(s, "goroutine ") || strings.Contains(s, "internal error") {
			t.Fatalf("%v: %s", args, s)
		}
		for _, r := range errb.String() {
			if r < 0x20 && r != '\n' {
				t.Fatalf("%v: raw control character %U on stderr", args, r)
			}
		}
	})
}

func FuzzMCPConfig(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"x":{"command":"npx","args":["-y","p"],"env":{"K":"V"}}}}`))
	f.Add([]byte(`{"servers":{"x":{"url":"https://h/mcp","headers":{"A":"b"}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := loadConfigServer(b, "f", "x")
		if err != nil {
			return
		}
		if (cs.command == nil) == (cs.url == "") {
			t.Fatal("exactly one of command and url")
		}
	})
}
