package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Settings: every flag a command takes can also come from the environment
// (MCPDRIFT_<FLAG>) or from mcpdrift.yaml (its defaults, for every command
// that has the flag, and its commands section, per command). The command
// line wins, then the environment, then the file (its commands section
// before its defaults). A flag that says a person consented to something
// is taken from the command line only (CommandLineOnly).

// envPrefix starts every environment variable that sets a flag.
const envPrefix = "MCPDRIFT_"

// configFlag names the file of settings (default: mcpdrift.yaml in the
// current directory, when there is one).
const configFlag = "config"

// cliOnlyAnnotation marks a flag CommandLineOnly (pflag annotations).
const cliOnlyAnnotation = "mcpdrift_command_line_only"

// EnvName is the environment variable that sets a flag: MCPDRIFT_ and the
// flag's name in capitals, '-' as '_' (--max-list-tools:
// MCPDRIFT_MAX_LIST_TOOLS).
func EnvName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// CommandLineOnly says whether a flag is taken from the command line only,
// never from the environment or a file: a consent or a safety override
// (--allow-*, --i-*, --execute, --auto-approve, or a flag annotated so)
// must be typed by the person who gives it, not inherited from a
// repository's file or a CI variable. help, version and config are not
// settings either.
func CommandLineOnly(f *pflag.Flag) bool {
	switch {
	case f.Name == "help", f.Name == "version", f.Name == configFlag:
		return true
	case strings.HasPrefix(f.Name, "allow-"), strings.HasPrefix(f.Name, "i-"):
		return true
	case f.Name == "execute", f.Name == "auto-approve":
		return true
	}
	_, ok := f.Annotations[cliOnlyAnnotation]
	return ok || f.Hidden || f.Deprecated != ""
}

// TakesSettings says whether cmd reads settings: a command that runs
// something, not help, completion or version.
func TakesSettings(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		switch c.Name() {
		case "help", "completion", "version", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return false
		}
	}
	return cmd.Runnable() && !cmd.Hidden
}

// SettingsPath is a command's key in mcpdrift.yaml's commands section: its
// path without "mcpdrift" ("lock check").
func SettingsPath(cmd *cobra.Command) string {
	p := cmd.CommandPath()
	if r := cmd.Root(); r != nil {
		p = strings.TrimPrefix(strings.TrimPrefix(p, r.Name()), " ")
	}
	return p
}

// SettingFlags are the flags of cmd that settings can set, in order.
func SettingFlags(cmd *cobra.Command) []*pflag.Flag {
	var out []*pflag.Flag
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !CommandLineOnly(f) {
			out = append(out, f)
		}
	})
	return out
}

// repeated says whether a flag takes one value per occurrence.
func repeated(f *pflag.Flag) bool {
	_, ok := f.Value.(pflag.SliceValue)
	return ok
}

// applySettings sets cmd's flags that the command line left unset from
// the environment, then from the settings file, and says on stderr which
// it set (names and where from, never values: a header's value is a
// secret).
func (e *env) applySettings(cmd *cobra.Command) error {
	e.warnAliases(cmd)
	if !TakesSettings(cmd) {
		return nil
	}
	cfg, cfgPath, err := loadConfig(cmd)
	if err != nil {
		return err
	}
	var fromEnv, fromFile []string
	aliases := map[string][]string{} // a flag's old names
	for _, a := range AliasFlags(cmd) {
		aliases[AliasOf(a)] = append(aliases[AliasOf(a)], a.Name)
	}
	for _, f := range SettingFlags(cmd) {
		if f.Changed {
			continue
		}
		// Its own name first, then its old ones (deprecated, warned).
		names := append([]string{f.Name}, aliases[f.Name]...)
		set := false
		for _, n := range names {
			name := EnvName(n)
			v, ok := os.LookupEnv(name)
			if !ok || v == "" {
				continue
			}
			if err := setFromEnv(f, v); err != nil {
				return usageErr("%s: %s", name, err)
			}
			if n != f.Name {
				fmt.Fprintf(e.stderr, "mcpdrift: warning: %s is deprecated: %s\n", name, strings.ReplaceAll(aliasMessage(f.Name), "--"+f.Name, EnvName(f.Name)))
			}
			fromEnv, set = append(fromEnv, name), true
			break
		}
		if set {
			continue
		}
		for _, n := range names {
			v, ok := configValue(cfg, SettingsPath(cmd), n)
			if !ok {
				continue
			}
			if err := setFromConfig(f, v); err != nil {
				return usageErr("%s: %s: %s", safetext.Escape(cfgPath), n, err)
			}
			if n != f.Name {
				fmt.Fprintf(e.stderr, "mcpdrift: warning: %s: %s is deprecated: %s\n", safetext.Quote(cfgPath), n, strings.ReplaceAll(aliasMessage(f.Name), "--"+f.Name, f.Name))
			}
			fromFile = append(fromFile, "--"+f.Name)
			break
		}
	}
	e.warnCommandLineOnly(cmd)
	// A file named by --config or MCPDRIFT_CONFIG holds the suppressions
	// too: the commands that read them read them from it.
	if cfg != nil && len(cfg.Suppressions) > 0 && cfgPath != manifest.SuppressionsFile {
		if f := cmd.Flags().Lookup("suppressions"); f != nil && !f.Changed && !flagTrue(cmd, "no-suppressions") {
			if err := f.Value.Set(cfgPath); err != nil {
				return err
			}
			f.Changed = true
		}
	}
	if (len(fromEnv) > 0 || len(fromFile) > 0) && !flagTrue(cmd, "quiet") {
		var parts []string
		if len(fromFile) > 0 {
			parts = append(parts, strings.Join(fromFile, ", ")+" from "+safetext.Quote(cfgPath))
		}
		if len(fromEnv) > 0 {
			parts = append(parts, strings.Join(fromEnv, ", ")+" from the environment")
		}
		fmt.Fprintf(e.stderr, "mcpdrift: settings: %s (the command line overrides them)\n", strings.Join(parts, "; "))
	}
	return nil
}

// warnCommandLineOnly says when the environment tries to set a flag that
// is taken from the command line only.
func (e *env) warnCommandLineOnly(cmd *cobra.Command) {
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !CommandLineOnly(f) || f.Name == "help" || f.Name == "version" || f.Name == configFlag || AliasOf(f) != "" {
			return
		}
		if v, ok := os.LookupEnv(EnvName(f.Name)); ok && v != "" {
			fmt.Fprintf(e.stderr, "mcpdrift: warning: %s is ignored: --%s is taken from the command line only\n", EnvName(f.Name), f.Name)
		}
	})
}

func flagTrue(cmd *cobra.Command, name string) bool {
	f := cmd.Flags().Lookup(name)
	return f != nil && f.Value.Type() == "bool" && f.Value.String() == "true"
}

// setFromEnv sets f from an environment variable's value: a repeated flag
// takes one value per line.
func setFromEnv(f *pflag.Flag, v string) error {
	if repeated(f) {
		for _, line := range strings.Split(v, "\n") {
			if line = strings.TrimSuffix(line, "\r"); line == "" {
				continue
			}
			if err := setOne(f, line); err != nil {
				return err
			}
		}
		return nil
	}
	return setOne(f, v)
}

// setFromConfig sets f from a value of mcpdrift.yaml (the schema allows a
// list only for a repeated flag).
func setFromConfig(f *pflag.Flag, v any) error {
	if list, ok := v.([]any); ok {
		if !repeated(f) {
			return fmt.Errorf("--%s takes one value, not a list", f.Name)
		}
		for _, x := range list {
			if err := setOne(f, scalarText(x)); err != nil {
				return err
			}
		}
		return nil
	}
	return setOne(f, scalarText(v))
}

func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// setOne sets one value; its error names the flag and the kind of value
// it takes, never the value (it may be a secret).
func setOne(f *pflag.Flag, v string) error {
	if err := f.Value.Set(v); err != nil {
		return fmt.Errorf("not a valid value for --%s (%s)", f.Name, f.Value.Type())
	}
	f.Changed = true
	return nil
}

// configValue is the value mcpdrift.yaml gives flag for the command at
// path: its commands section first, then its defaults.
func configValue(cfg *manifest.Config, path, flag string) (any, bool) {
	if cfg == nil {
		return nil, false
	}
	if v, ok := cfg.Commands[path][flag]; ok {
		return v, true
	}
	v, ok := cfg.Defaults[flag]
	return v, ok
}

// loadConfig reads the settings file: --config, else MCPDRIFT_CONFIG,
// else mcpdrift.yaml in the current directory when it is a regular file
// and holds settings (a file of suppressions only is the suppressions'
// business, read as before). A file named explicitly must exist.
func loadConfig(cmd *cobra.Command) (*manifest.Config, string, error) {
	path, named := "", false
	if f := cmd.Flags().Lookup(configFlag); f != nil && f.Changed {
		path, named = f.Value.String(), true
	} else if v := os.Getenv(EnvName(configFlag)); v != "" {
		path, named = v, true
	} else {
		st, err := os.Stat(manifest.SuppressionsFile)
		if err != nil || !st.Mode().IsRegular() {
			return nil, "", nil
		}
		path = manifest.SuppressionsFile
	}
	src, err := readSettingsFile(path)
	if err != nil {
		return nil, "", err
	}
	if !named && !holdsSettings(src) {
		return nil, path, nil
	}
	cfg, err := manifest.ParseConfig(src, path)
	if err != nil {
		return nil, "", &exitError{ExitUsage, err.Error()}
	}
	if err := checkConfigFlags(cmd.Root(), cfg); err != nil {
		return nil, "", &exitError{ExitUsage, safetext.Escape(path) + ": " + err.Error()}
	}
	return cfg, path, nil
}

// holdsSettings says whether a YAML document has a top-level defaults or
// commands key. A file that does not parse holds none here: the
// suppressions' reading reports it, as before.
func holdsSettings(src []byte) bool {
	var top map[string]any
	if yaml.Unmarshal(src, &top) != nil {
		return false
	}
	_, d := top["defaults"]
	_, c := top["commands"]
	return d || c
}

// maxSettingsFile bounds the settings file (it is read whole).
const maxSettingsFile = 1 << 20

func readSettingsFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErr("settings file %s: %s", safetext.Quote(path), safetext.Escape(errors.Unwrap(err).Error()))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, usageErr("settings file %s is not a regular file", safetext.Quote(path))
	}
	src, err := io.ReadAll(io.LimitReader(f, maxSettingsFile+1))
	if err != nil {
		return nil, usageErr("settings file %s: %s", safetext.Quote(path), safetext.Escape(err.Error()))
	}
	if len(src) > maxSettingsFile {
		return nil, usageErr("settings file %s is larger than %d bytes", safetext.Quote(path), maxSettingsFile)
	}
	return src, nil
}

// checkConfigFlags refuses a command or a flag mcpdrift.yaml names that
// does not exist, or that settings cannot set (the schema says the same;
// this names what is wrong in words).
func checkConfigFlags(root *cobra.Command, cfg *manifest.Config) error {
	all := map[string]bool{}
	cmds := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if TakesSettings(c) {
			cmds[SettingsPath(c)] = c
			for _, f := range SettingFlags(c) {
				all[f.Name] = true
			}
			for _, f := range AliasFlags(c) {
				all[f.Name] = true
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	for _, k := range sortedKeys(cfg.Defaults) {
		if !all[k] {
			return fmt.Errorf("defaults: no command takes --%s as a setting (mcpdrift COMMAND --help lists the flags; --allow-*, --i-*, --execute and --auto-approve are taken from the command line only)", safetext.Escape(k))
		}
	}
	for _, p := range sortedKeys(cfg.Commands) {
		c, ok := cmds[p]
		if !ok {
			return fmt.Errorf("commands: no command %s", safetext.Quote(p))
		}
		for _, k := range sortedKeys(cfg.Commands[p]) {
			f := c.Flags().Lookup(k)
			if f == nil || CommandLineOnly(f) && AliasOf(f) == "" {
				return fmt.Errorf("commands: %s: mcpdrift %s takes no --%s as a setting", safetext.Quote(p), p, safetext.Escape(k))
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
