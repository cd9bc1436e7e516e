package cli

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/internal/mapfile"
)

// mappableDir is a new directory whose files this system maps (a read
// lease granted on them: a local file system, leases on): the test's
// temporary directory, else one in /dev/shm (tmpfs, where a container's
// temporary directory is an overlay). Where there is none, the test
// fails in CI and is skipped elsewhere, saying why.
func mappableDir(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, parent := range []string{"", "/dev/shm"} {
		var dir string
		if parent == "" {
			dir = t.TempDir()
		} else {
			d, err := os.MkdirTemp(parent, "mcpdrift-test-")
			if err != nil {
				tried = append(tried, parent+": "+err.Error())
				continue
			}
			t.Cleanup(func() { os.RemoveAll(d) })
			dir = d
		}
		p := filepath.Join(dir, "probe")
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := mapfile.Mappable(p)
		os.Remove(p)
		if err == nil {
			return dir
		}
		tried = append(tried, dir+": "+err.Error())
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no directory whose files this system maps (%s)", strings.Join(tried, "; "))
	}
	t.Skipf("no directory whose files this system maps (%s); required in CI", strings.Join(tried, "; "))
	return ""
}

// mappedRun is one command of TestMappedInputsSame: its arguments, with
// {dir} standing for the run's directory.
type mappedRun struct {
	name string
	args []string
}

// mappedInputs copies the examples and writes a listing large enough for
// the parallel parse into dir.
func mappedInputs(t *testing.T, dir string) {
	t.Helper()
	for name, src := range map[string]string{"v1.json": exampleV1, "v2.json": exampleV2} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, name, b)
	}
	tools := corpus.LeanTools(3500, 7) // about 5 MB: parsed on every CPU
	writeFile(t, dir, "large.json", append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":`), tools...), "}}"...))
	writeFile(t, dir, "broken.json", append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":`), tools[:len(tools)/2]...), "}}"...))
	writeFile(t, dir, "imprecise.json", []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"n","inputSchema":{"type":"object","properties":{"x":{"type":"integer","maximum":9223372036854775807}}}}]}}`))
}

// mappedRuns reads every input as the file runs read them: a listing, an
// observed record, a baseline and its snapshot, two listings compared.
var mappedRuns = []mappedRun{
	{"observe", []string{"observe", "--input", "{dir}/v1.json", "--server-id", "acme", "-o", "{dir}/observed.json"}},
	{"pin --input", []string{"pin", "--input", "{dir}/v1.json", "--server-id", "acme", "-o", "{dir}/declared.json"}},
	{"pin --input large", []string{"pin", "--input", "{dir}/large.json", "--server-id", "big", "-o", "{dir}/large-declared.json"}},
	{"pin --observed", []string{"pin", "--observed", "{dir}/observed.json", "-o", "{dir}/from-observed.json"}},
	{"observe v2", []string{"observe", "--input", "{dir}/v2.json", "--server-id", "acme", "-o", "{dir}/observed2.json"}},
	{"gate", []string{"gate", "--observed", "{dir}/observed2.json", "--declared", "{dir}/declared.json", "--format", "json", "-o", "{dir}/gate.json"}},
	{"diff", []string{"diff", "{dir}/v1.json", "{dir}/v2.json", "--format", "json", "-o", "{dir}/diff.json"}},
	{"diff baseline", []string{"diff", "{dir}/declared.json", "{dir}/v2.json", "--format", "json", "-o", "{dir}/diff-baseline.json"}},
	{"diff large", []string{"diff", "{dir}/large-declared.json", "{dir}/large.json", "--format", "json", "-o", "{dir}/diff-large.json"}},
	{"observe broken", []string{"observe", "--input", "{dir}/broken.json", "--server-id", "big", "-o", "{dir}/broken-observed.json"}},
	{"pin imprecise", []string{"pin", "--input", "{dir}/imprecise.json", "--server-id", "n", "-o", "{dir}/imprecise-declared.json"}},
}

// TestMappedInputsSame: a file run whose inputs are mapped (mapfile; here
// every input, whatever its size) says and writes byte for byte what it
// says and writes when it reads them: exit codes, stdout, stderr and every
// output file. A read-only mapping also faults on any write into an
// input's bytes, and a use after the run's release, so the pass is a check
// of both.
func TestMappedInputsSame(t *testing.T) {
	type result struct {
		code           int
		stdout, stderr string
		files          map[string][]byte
	}
	pass := func(min int64) (res []result, mapped int64) {
		wasMin := mapfile.SetMin(min)
		defer mapfile.SetMin(wasMin)
		dir := mappableDir(t)
		mappedInputs(t, dir)
		before := mapfile.Mapped()
		for _, r := range mappedRuns {
			args := make([]string, len(r.args))
			for i, a := range r.args {
				args[i] = strings.ReplaceAll(a, "{dir}", dir)
			}
			code, stdout, stderr := run(t, "", args...)
			if code == ExitUsage && !strings.Contains(r.name, "broken") {
				t.Fatalf("%s: exit %d: %s", r.name, code, stderr)
			}
			res = append(res, result{code, strings.ReplaceAll(stdout, dir, "{dir}"), strings.ReplaceAll(stderr, dir, "{dir}"), map[string][]byte{}})
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			res[0].files[e.Name()] = bytes.ReplaceAll(b, []byte(dir), []byte("{dir}"))
		}
		return res, mapfile.Mapped() - before
	}
	read, none := pass(math.MaxInt64)
	if none != 0 {
		t.Fatalf("%d files mapped above any size", none)
	}
	mapped, n := pass(1)
	if n == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("no input was mapped: this system grants no read lease on the test's temporary files")
		}
		t.Skip("no input was mapped: this system grants no read lease on the test's temporary files (required in CI)")
	}
	t.Logf("%d inputs mapped", n)
	for i, r := range mappedRuns {
		if mapped[i].code != read[i].code || mapped[i].stdout != read[i].stdout || mapped[i].stderr != read[i].stderr {
			t.Errorf("%s: mapped: exit %d, stdout %q, stderr %q; read: exit %d, stdout %q, stderr %q", r.name,
				mapped[i].code, mapped[i].stdout, mapped[i].stderr, read[i].code, read[i].stdout, read[i].stderr)
		}
	}
	if len(mapped[0].files) != len(read[0].files) {
		t.Errorf("mapped runs left %d files, read runs %d", len(mapped[0].files), len(read[0].files))
	}
	for name, b := range read[0].files {
		if !bytes.Equal(mapped[0].files[name], b) {
			t.Errorf("%s differs between the mapped and the read runs", name)
		}
	}
	if code := read[len(read)-2].code; code != ExitUsage {
		t.Errorf("the truncated listing: exit %d, want %d", code, ExitUsage)
	}
}

// TestMappedInputChangedIsRefused: an input mapped that is no longer the
// file it was when the run commits (its times moved: what every write
// does) fails the run before anything is written, and says so.
func TestMappedInputChangedIsRefused(t *testing.T) {
	wasMin := mapfile.SetMin(1)
	defer mapfile.SetMin(wasMin)
	dir := mappableDir(t)
	mappedInputs(t, dir)
	in, out := filepath.Join(dir, "v1.json"), filepath.Join(dir, "declared.json")
	before := mapfile.Mapped()
	testHookBeforeCommit = func() {
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(in, later, later); err != nil {
			t.Error(err)
		}
	}
	defer func() { testHookBeforeCommit = nil }()
	code, stdout, stderr := run(t, "", "pin", "--input", in, "--server-id", "acme", "-o", out)
	if mapfile.Mapped() == before {
		if os.Getenv("CI") == "true" {
			t.Fatal("the input was not mapped: this system grants no read lease on the test's temporary files")
		}
		t.Skip("the input was not mapped: this system grants no read lease on the test's temporary files (required in CI)")
	}
	if code != ExitUsage || !strings.Contains(stderr, "changed, or may have, while it was being read") || !strings.Contains(stderr, "v1.json") {
		t.Fatalf("exit %d, stderr %q; want %d and the input named as changed", code, stderr, ExitUsage)
	}
	if stdout != "" {
		t.Errorf("stdout %q", stdout)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "declared") || strings.HasPrefix(e.Name(), ".mcpdrift-") {
			t.Errorf("%s was left behind by a refused run", e.Name())
		}
	}
}

// TestMappedInputPanicIsCleanExit: a run that panics while a snapshot is
// still being written from a mapped input's bytes reports an internal
// error (exit 2, no stack trace) and leaves nothing behind: the mapping
// is released only once the staging goroutine is done with it.
func TestMappedInputPanicIsCleanExit(t *testing.T) {
	wasMin := mapfile.SetMin(1)
	defer mapfile.SetMin(wasMin)
	dir := mappableDir(t)
	tools := corpus.LeanTools(3000, 3)
	in := writeFile(t, dir, "big.json", append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":`), tools...), "}}"...))
	before := mapfile.Mapped()
	testHookBeforeCommit = func() { panic("boom") }
	// The snapshot is still to be written when the run panics.
	testHookStaging = func() { time.Sleep(300 * time.Millisecond) }
	defer func() { testHookBeforeCommit, testHookStaging = nil, nil }()
	code, _, stderr := run(t, "", "pin", "--input", in, "--server-id", "big", "-o", filepath.Join(dir, "declared.json"))
	if mapfile.Mapped() == before && os.Getenv("CI") == "true" {
		t.Fatal("the input was not mapped: this system grants no read lease on the test's temporary files")
	}
	if code != ExitUsage || !strings.Contains(stderr, "internal error: boom") || strings.Contains(stderr, "goroutine") {
		t.Fatalf("exit %d, stderr %q; want %d and the internal error, no trace", code, stderr, ExitUsage)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "big.json" {
			t.Errorf("%s was left behind by a failed run", e.Name())
		}
	}
}

// TestMappedInputWrittenByTheRunItself: a run whose output is its own
// mapped input, opened for writing by its descriptor's path (which a
// lease would make wait for the run itself), detaches the mapping and
// goes on: it ends at once, having read the input as it was.
func TestMappedInputWrittenByTheRunItself(t *testing.T) {
	wasMin := mapfile.SetMin(1)
	defer mapfile.SetMin(wasMin)
	dir := mappableDir(t)
	mappedInputs(t, dir)
	in := filepath.Join(dir, "large.json")
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mapped, detached := mapfile.Mapped(), mapfile.Detached()
	start := time.Now()
	code, _, stderr := run(t, "", "observe", "--input", in, "--server-id", "big", "-o", "/proc/self/fd/"+strconv.Itoa(int(f.Fd())))
	took := time.Since(start)
	if mapfile.Mapped() == mapped {
		if os.Getenv("CI") == "true" {
			t.Fatal("the input was not mapped: this system grants no read lease on the test's temporary files")
		}
		t.Skip("the input was not mapped: this system grants no read lease (required in CI)")
	}
	if code != 0 || took > 10*time.Second {
		t.Fatalf("exit %d after %v (want 0 at once): %s", code, took, stderr)
	}
	if mapfile.Detached() == detached {
		t.Error("the run opened its own input for writing and its mapping was not detached")
	}
}
