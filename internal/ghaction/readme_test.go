package ghaction_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEArchiveInstall follows the README's release-archive block as a
// new user without Go would, on the snapshot's release (or the test's
// own): download (from the release directory instead of GitHub), check
// the checksum, unpack, mcpdrift version and the demo, with a PATH that
// has no go. cosign is not on this machine, so its line is left out, as
// the README says to.
func TestREADMEArchiveInstall(t *testing.T) {
	rel := makeRelease(t)
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "**A release archive**")
	_, block, ok2 := strings.Cut(sec, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README has no release-archive block")
	}
	const url = "https://github.com/mcpdrift/mcpdrift/releases/download/v$V/"
	if !strings.Contains(block, url) || !strings.Contains(block, "./mcpdrift version") || !strings.Contains(block, "./mcpdrift demo") || !strings.Contains(block, "sha256sum") {
		t.Fatalf("the README's block changed; this test follows it:\n%s", block)
	}
	var script []string
	skipCosign := false
	for _, l := range strings.Split(block, "\n") {
		switch {
		case strings.HasPrefix(l, "cosign verify-blob"):
			skipCosign = strings.HasSuffix(l, `\`)
			continue
		case skipCosign:
			skipCosign = strings.HasSuffix(l, `\`)
			continue
		case strings.HasPrefix(l, "V="):
			_, rest, _ := strings.Cut(l, " ")
			l = "V=" + rel.version + " " + rest
		}
		script = append(script, strings.ReplaceAll(l, url, "file://"+rel.dir+"/"))
	}
	// The signature bundle the block downloads.
	if _, err := os.Stat(filepath.Join(rel.dir, "checksums.txt.sigstore.json")); err != nil {
		if err := os.WriteFile(filepath.Join(rel.dir, "checksums.txt.sigstore.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := "/usr/bin:/bin"
	if _, err := exec.Command("env", "PATH="+path, "sh", "-c", "command -v go").Output(); err == nil {
		t.Skip("go is on " + path + ": this machine cannot show a user without Go")
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", strings.Join(script, "\n"))
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + path, "HOME=" + dir, "LANG=C.UTF-8"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's archive block: %v:\n%s", err, out)
	}
	for _, want := range []string{": OK", "mcpdrift " + rel.version + "\n", "platform: linux/", "mcpdrift gate"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in what the block printed:\n%s", want, out)
		}
	}
}
