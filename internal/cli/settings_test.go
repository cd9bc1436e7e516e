package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// inDir runs the rest of the test in a new directory holding mcpdrift.yaml
// (when yaml is not empty).
func inDir(t *testing.T, yaml string) string {
	t.Helper()
	dir := t.TempDir()
	if yaml != "" {
		writeFile(t, dir, "mcpdrift.yaml", []byte(yaml))
	}
	t.Chdir(dir)
	return dir
}

const codesMarkdown = "# mcpdrift reason codes"

// TestSettingsPrecedence: the command line, then MCPDRIFT_<FLAG>, then
// mcpdrift.yaml's commands section, then its defaults.
func TestSettingsPrecedence(t *testing.T) {
	inDir(t, "version: 1\ndefaults:\n  format: markdown\n")
	code, out, stderr := run(t, "", "codes")
	if code != 0 || !strings.HasPrefix(out, codesMarkdown) {
		t.Fatalf("defaults.format: exit %d, stdout %.60q, stderr %q", code, out, stderr)
	}
	if !strings.Contains(stderr, `mcpdrift: settings: --format from "mcpdrift.yaml"`) {
		t.Errorf("stderr does not say where --format came from: %q", stderr)
	}
	t.Setenv("MCPDRIFT_FORMAT", "text")
	if code, out, stderr = run(t, "", "codes"); code != 0 || strings.HasPrefix(out, codesMarkdown) {
		t.Errorf("MCPDRIFT_FORMAT=text over the file: exit %d, stdout %.60q", code, out)
	}
	if !strings.Contains(stderr, "MCPDRIFT_FORMAT from the environment") {
		t.Errorf("stderr does not name the variable: %q", stderr)
	}
	if code, out, _ = run(t, "", "codes", "--format", "markdown"); code != 0 || !strings.HasPrefix(out, codesMarkdown) {
		t.Errorf("--format markdown over MCPDRIFT_FORMAT=text: exit %d, stdout %.60q", code, out)
	}
	t.Setenv("MCPDRIFT_FORMAT", "")
	inDir(t, "version: 1\ndefaults:\n  format: markdown\ncommands:\n  codes:\n    format: text\n")
	if code, out, _ = run(t, "", "codes"); code != 0 || strings.HasPrefix(out, codesMarkdown) {
		t.Errorf("commands.codes.format over defaults.format: exit %d, stdout %.60q", code, out)
	}
	// version, help and completion take no settings.
	t.Setenv("MCPDRIFT_FORMAT", "sarif")
	if code, _, stderr = run(t, "", "version"); code != 0 {
		t.Errorf("version with MCPDRIFT_FORMAT=sarif: exit %d: %s", code, stderr)
	}
}

// TestSettingsConfigFlag: --config and MCPDRIFT_CONFIG name the file; a
// named file must exist.
func TestSettingsConfigFlag(t *testing.T) {
	dir := inDir(t, "")
	cfg := writeFile(t, dir, "ci.yaml", []byte("version: 1\ncommands:\n  codes:\n    format: markdown\n"))
	if code, out, _ := run(t, "", "codes", "--config", cfg); code != 0 || !strings.HasPrefix(out, codesMarkdown) {
		t.Errorf("--config: exit %d, stdout %.60q", code, out)
	}
	t.Setenv("MCPDRIFT_CONFIG", cfg)
	if code, out, _ := run(t, "", "codes"); code != 0 || !strings.HasPrefix(out, codesMarkdown) {
		t.Errorf("MCPDRIFT_CONFIG: exit %d, stdout %.60q", code, out)
	}
	if code, _, stderr := run(t, "", "codes", "--config", filepath.Join(dir, "missing.yaml")); code != ExitUsage || !strings.Contains(stderr, "settings file") {
		t.Errorf("--config missing.yaml: exit %d, stderr %q", code, stderr)
	}
}

// TestSettingsRefused: a flag no command has, a command that does not
// exist, a value of the wrong type and a consent are refused (exit 2),
// naming the file; a suppressions-only mcpdrift.yaml is not read as
// settings.
func TestSettingsRefused(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown flag", "version: 1\ndefaults:\n  no-such-flag: 1\n", "no-such-flag"},
		{"unknown command", "version: 1\ncommands:\n  frobnicate:\n    format: json\n", "frobnicate"},
		{"flag of another command", "version: 1\ncommands:\n  codes:\n    lock: x.lock\n", "/commands/codes"},
		{"wrong type", "version: 1\ndefaults:\n  timeout: 5\n", "/defaults/timeout"},
		{"consent", "version: 1\ndefaults:\n  allow-config-commands: true\n", "allow-config-commands"},
		{"re-consent", "version: 1\ncommands:\n  approve:\n    i-reviewed-the-denied-change: true\n", "i-reviewed-the-denied-change"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inDir(t, c.yaml)
			code, _, stderr := run(t, "", "codes")
			if code != ExitUsage || !strings.Contains(stderr, "mcpdrift.yaml") || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming mcpdrift.yaml and %q", code, stderr, c.want)
			}
		})
	}
	// Suppressions only: settings pass it by (the suppressions' own
	// reading judges it, in the commands that apply them).
	inDir(t, "version: 1\nsuppressions:\n  - rule: no_such_rule\n    reason: not read here\n")
	if code, _, stderr := run(t, "", "codes"); code != 0 {
		t.Errorf("suppressions-only mcpdrift.yaml: exit %d: %s", code, stderr)
	}
}

// TestSettingsEnvNeverEchoed: a bad value from the environment is refused
// without being shown (it may be a secret), and a consent from the
// environment is ignored with a warning.
func TestSettingsEnvNeverEchoed(t *testing.T) {
	inDir(t, "")
	const secret = "Bearer-s3cr3t-value-9f8e7d"
	t.Setenv("MCPDRIFT_MAX_LIST_TOOLS", secret)
	code, out, stderr := run(t, "", "drift", "--url", "http://127.0.0.1:1/mcp", "manifest.json")
	if code != ExitUsage || !strings.Contains(stderr, "MCPDRIFT_MAX_LIST_TOOLS: not a valid value for --max-list-tools (int)") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(stderr+out, "s3cr3t") {
		t.Errorf("the variable's value was shown: %q", stderr+out)
	}
	t.Setenv("MCPDRIFT_MAX_LIST_TOOLS", "")
	t.Setenv("MCPDRIFT_ALLOW_CONFIG_COMMANDS", "true")
	_, _, stderr = run(t, "", "codes")
	if strings.Contains(stderr, "ALLOW_CONFIG") {
		t.Errorf("codes has no --allow-config-commands, yet: %q", stderr)
	}
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	allow := cmd.Flags().Bool("allow-config-commands", false, "")
	var errb strings.Builder
	e := newEnv(strings.NewReader(""), &strings.Builder{}, &errb)
	if err := e.applySettings(cmd); err != nil {
		t.Fatal(err)
	}
	if *allow || !strings.Contains(errb.String(), "MCPDRIFT_ALLOW_CONFIG_COMMANDS is ignored: --allow-config-commands is taken from the command line only") {
		t.Errorf("consent from the environment: set %v, stderr %q", *allow, errb.String())
	}
}

// TestSettingsRepeatedAndSuppressions: a repeated flag takes one value a
// line from the environment and a list from the file; a file named by
// --config that holds suppressions becomes the command's --suppressions.
func TestSettingsRepeatedAndSuppressions(t *testing.T) {
	dir := inDir(t, "")
	cfg := writeFile(t, dir, "team.yaml", []byte("version: 1\ndefaults:\n  header: [\"A=1\", \"B=2\"]\nsuppressions:\n  - rule: mcp_tool_added\n    reason: a tool we expect\n"))
	newCmd := func() (*cobra.Command, *[]string, *[]string, *string) {
		root := &cobra.Command{Use: "mcpdrift"}
		root.PersistentFlags().String(configFlag, "", "")
		cmd := &cobra.Command{Use: "drift", RunE: func(*cobra.Command, []string) error { return nil }}
		h := cmd.Flags().StringArray("header", nil, "")
		u := cmd.Flags().StringArray("pass-env", nil, "")
		s := cmd.Flags().String("suppressions", "", "")
		cmd.Flags().Bool("no-suppressions", false, "")
		root.AddCommand(cmd)
		return cmd, h, u, s
	}
	cmd, h, u, s := newCmd()
	if err := cmd.ParseFlags([]string{"--config", cfg}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPDRIFT_PASS_ENV", "HOME\nPATH\n")
	e := newEnv(strings.NewReader(""), &strings.Builder{}, &strings.Builder{})
	if err := e.applySettings(cmd); err != nil {
		t.Fatal(err)
	}
	if strings.Join(*h, ",") != "A=1,B=2" || strings.Join(*u, ",") != "HOME,PATH" || *s != cfg {
		t.Errorf("header %q, pass-env %q, suppressions %q", *h, *u, *s)
	}
	// The command line's header replaces the file's, and an explicit
	// --no-suppressions keeps the file's suppressions out.
	cmd, h, _, s = newCmd()
	if err := cmd.ParseFlags([]string{"--config", cfg, "--header", "C=3", "--no-suppressions"}); err != nil {
		t.Fatal(err)
	}
	if err := e.applySettings(cmd); err != nil {
		t.Fatal(err)
	}
	if strings.Join(*h, ",") != "C=3" || *s != "" {
		t.Errorf("with the command line's: header %q, suppressions %q", *h, *s)
	}
}

// TestSettingsREADMEExample: the mcpdrift.yaml of docs/configuration.md
// (the page the README links for settings) is one mcpdrift reads.
func TestSettingsREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "## Settings: ")
	if !ok {
		t.Fatal("docs/configuration.md has no Settings section")
	}
	_, block, ok := strings.Cut(sec, "```yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("the Settings section has no yaml block")
	}
	inDir(t, block)
	code, _, stderr := run(t, "", "codes")
	if code != 0 {
		t.Errorf("docs/configuration.md's mcpdrift.yaml: exit %d: %s", code, stderr)
	}
}

// TestSettingsNoEnvCollision: no variable that CI or the tests set
// (MCPDRIFT_REQUIRE_*, MCPDRIFT_CHROMIUM, ... in .ci/run and the tests)
// is the environment name of a flag, or CI's settings would change what
// the commands under test do.
func TestSettingsNoEnvCollision(t *testing.T) {
	var used []string
	for _, f := range []string{"../../.ci/run"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		used = append(used, regexp.MustCompile(`MCPDRIFT_[A-Z0-9_]+`).FindAllString(string(b), -1)...)
	}
	used = append(used, envAsCLI, envPeakRSS, envRunBinary, "MCPDRIFT_TEST_POSTGRES_URL", "MCPDRIFT_LARGE_TESTS")
	flags := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if TakesSettings(c) {
			for _, f := range SettingFlags(c) {
				flags[EnvName(f.Name)] = c.CommandPath() + " --" + f.Name
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(CommandTree())
	if len(flags) < 50 {
		t.Fatalf("only %d settable flags found", len(flags))
	}
	for _, v := range used {
		if f, ok := flags[v]; ok {
			t.Errorf("%s, set by CI or a test, is the environment name of %s", v, f)
		}
	}
}
