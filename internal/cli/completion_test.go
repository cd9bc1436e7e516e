package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCompletionScripts: cobra's completion command writes a script for
// each shell it supports.
func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash":       "__start_mcpdrift",
		"zsh":        "#compdef mcpdrift",
		"fish":       "complete -c mcpdrift",
		"powershell": "Register-ArgumentCompleter",
	} {
		code, out, stderr := run(t, "", "completion", shell)
		if code != 0 || !strings.Contains(out, marker) {
			t.Errorf("completion %s: exit %d, no %q in its script (stderr %q)", shell, code, marker, stderr)
		}
	}
}

// TestCompletionBash sources the bash script in a real bash, after
// Debian's bash-completion as an interactive bash does (cobra's script
// needs its _get_comp_words_by_ref), and completes a command, a flag and
// a subcommand, asking this test binary acting as mcpdrift
// (MCPDRIFT_TEST_AS_CLI) for the candidates, as bash asks the installed
// binary. scripts/install-bash-completion.sh installs bash-completion and
// prints the path .ci/run passes in MCPDRIFT_BASH_COMPLETION; CI requires
// the test (MCPDRIFT_REQUIRE_BASH_COMPLETION=1), elsewhere it skips.
func TestCompletionBash(t *testing.T) {
	skip := t.Skip
	if os.Getenv("MCPDRIFT_REQUIRE_BASH_COMPLETION") == "1" {
		skip = t.Fatal
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		skip("no bash on PATH: the bash completion script cannot be sourced")
	}
	bashCompletion := os.Getenv("MCPDRIFT_BASH_COMPLETION")
	if bashCompletion == "" {
		bashCompletion = "/usr/share/bash-completion/bash_completion"
	}
	if _, err := os.Stat(bashCompletion); err != nil {
		skip("no bash-completion (" + bashCompletion + "): scripts/install-bash-completion.sh installs it")
	}
	code, script, stderr := run(t, "", "completion", "bash")
	if code != 0 {
		t.Fatalf("completion bash: exit %d: %s", code, stderr)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "mcpdrift")); err != nil {
		t.Fatal(err)
	}
	scriptFile := writeFile(t, dir, "mcpdrift.bash", []byte(script))
	complete := func(line string) []string {
		t.Helper()
		// COMP_WORDS as bash splits the line (a trailing space starts an
		// empty word).
		words := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		// compopt works only while bash itself runs a completion; here
		// it would fail, so it is a no-op (it changes how candidates are
		// shown, not which).
		prog := "source " + bashCompletion + "\nset -e\nsource " + scriptFile + "\ncompopt() { :; }\n" +
			"COMP_LINE='" + line + "'; COMP_POINT=${#COMP_LINE}\n" +
			"COMP_WORDS=(" + strings.Join(quoted, " ") + "); COMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n" +
			"__start_mcpdrift\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), envAsCLI+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash completing %q: %v: %s", line, err, out)
		}
		return strings.Fields(string(out))
	}
	has := func(got []string, want string) bool {
		for _, g := range got {
			if g == want {
				return true
			}
		}
		return false
	}
	if got := complete("mcpdrift ver"); len(got) != 1 || got[0] != "version" {
		t.Errorf("mcpdrift ver<TAB> = %q, want [version]", got)
	}
	if got := complete("mcpdrift lo"); !has(got, "lock") {
		t.Errorf("mcpdrift lo<TAB> = %q, want lock among them", got)
	}
	if got := complete("mcpdrift lock "); !has(got, "check") || !has(got, "approve") && !has(got, "add") {
		t.Errorf("mcpdrift lock <TAB> = %q, want its subcommands", got)
	}
	if got := complete("mcpdrift version --fo"); len(got) != 1 || got[0] != "--format" {
		t.Errorf("mcpdrift version --fo<TAB> = %q, want [--format]", got)
	}
	if got := complete("mcpdrift nosuchcommand "); len(got) != 0 {
		t.Errorf("mcpdrift nosuchcommand <TAB> = %q, want nothing", got)
	}
}
