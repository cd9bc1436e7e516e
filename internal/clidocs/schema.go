package clidocs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpdrift/mcpdrift/internal/cli"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// durationPattern is a Go duration (time.ParseDuration): "30s", "1m30s",
// "1.5h", "0".
const durationPattern = `^(0|[0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h)([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))*)$`

// valueSchema is the schema of one flag's value in mcpdrift.yaml.
func valueSchema(f *pflag.Flag) map[string]any {
	s := typeSchema(f)
	if cli.AliasOf(f) != "" {
		s["deprecated"] = true
	}
	return s
}

// typeSchema is the schema of the type of one flag's value.
func typeSchema(f *pflag.Flag) map[string]any {
	switch t := f.Value.Type(); {
	case t == "bool":
		return map[string]any{"type": "boolean"}
	case t == "duration":
		return map[string]any{"type": "string", "pattern": durationPattern}
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), t == "count":
		return map[string]any{"type": "integer"}
	case strings.HasPrefix(t, "float"):
		return map[string]any{"type": "number"}
	}
	if _, ok := f.Value.(pflag.SliceValue); ok {
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	}
	return map[string]any{"type": "string"}
}

func describe(f *pflag.Flag) string {
	if to := cli.AliasOf(f); to != "" {
		return "Deprecated: the old name of --" + to + ", which it sets (it goes in the next release). Environment: " + cli.EnvName(f.Name) + "."
	}
	d := f.Usage
	if f.DefValue != "" && f.DefValue != "[]" && f.DefValue != "false" {
		d += " (default " + f.DefValue + ")"
	}
	return d + ". Environment: " + cli.EnvName(f.Name) + "."
}

// line is one flag's schema, compact, on a line of its own.
type line struct {
	name   string
	schema map[string]any
}

// ConfigSchema is the JSON Schema of mcpdrift.yaml: version, the
// suppressions (as schemas/suppressions.v1.schema.json has them), and the
// settings, each flag a setting can set with its type and its help.
func ConfigSchema(root *cobra.Command) ([]byte, error) {
	type seen struct {
		f     *pflag.Flag
		types map[string]map[string]any
		cmds  []string
	}
	union := map[string]*seen{}
	var cmds []string
	perCmd := map[string][]line{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if cli.TakesSettings(c) {
			p := cli.SettingsPath(c)
			cmds = append(cmds, p)
			flags := cli.SettingFlags(c)
			// Old spellings still set their flag (for one release).
			for _, a := range cli.AliasFlags(c) {
				if n := c.Flags().Lookup(cli.AliasOf(a)); n != nil && !cli.CommandLineOnly(n) {
					flags = append(flags, a)
				}
			}
			for _, f := range flags {
				vs := valueSchema(f)
				s := union[f.Name]
				if s == nil {
					s = &seen{f: f, types: map[string]map[string]any{}}
					union[f.Name] = s
				}
				key, _ := json.Marshal(vs)
				s.types[string(key)] = vs
				s.cmds = append(s.cmds, p)
				one := copyMap(vs)
				one["description"] = describe(f)
				perCmd[p] = append(perCmd[p], line{f.Name, one})
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	sort.Strings(cmds)

	var defaults []line
	for _, name := range sortedNames(union) {
		s := union[name]
		var one map[string]any
		if len(s.types) == 1 {
			for _, vs := range s.types {
				one = copyMap(vs)
			}
		} else {
			var anyOf []any
			for _, k := range sortedNames(s.types) {
				anyOf = append(anyOf, s.types[k])
			}
			one = map[string]any{"anyOf": anyOf}
		}
		one["description"] = fmt.Sprintf("--%s of every command that has it (%s): %s", name, strings.Join(s.cmds, ", "), describe(s.f))
		defaults = append(defaults, line{name, one})
	}

	sup, err := suppressionsSchema()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	b.WriteString(`  "$schema": "https://json-schema.org/draft/2020-12/schema",` + "\n")
	b.WriteString(`  "$id": "https://mcpdrift.dev/schemas/mcpdrift.config.v1.json",` + "\n")
	b.WriteString(`  "$comment": "Generated from mcpdrift's command tree by go run ./scripts/clidocs; do not edit. Self-contained (the suppressions are schemas/suppressions.v1.schema.json's), for editors and SchemaStore.",` + "\n")
	b.WriteString(`  "title": "mcpdrift.yaml",` + "\n")
	b.WriteString(`  "description": "mcpdrift's settings file: flag defaults for every command that has the flag (defaults) and per command (commands, keyed by the command's path without mcpdrift: \"lock check\"), and the per-rule suppressions. The command line wins, then MCPDRIFT_<FLAG> from the environment, then commands, then defaults. Consents and safety overrides (--allow-*, --i-*, --execute, --auto-approve) are taken from the command line only.",` + "\n")
	b.WriteString(`  "type": "object",` + "\n")
	b.WriteString(`  "additionalProperties": false,` + "\n")
	b.WriteString(`  "required": ["version"],` + "\n")
	b.WriteString(`  "properties": {` + "\n")
	b.WriteString(`    "version": { "const": 1 },` + "\n")
	b.WriteString(`    "suppressions": ` + sup + ",\n")
	b.WriteString(`    "defaults": {` + "\n")
	b.WriteString(`      "description": "A flag's value for every command that has it (a command's own section wins).",` + "\n")
	b.WriteString(`      "type": "object",` + "\n")
	b.WriteString(`      "additionalProperties": false,` + "\n")
	writeLines(&b, "      ", defaults)
	b.WriteString("    },\n")
	b.WriteString(`    "commands": {` + "\n")
	b.WriteString(`      "description": "Flag values for one command, by its path without mcpdrift.",` + "\n")
	b.WriteString(`      "type": "object",` + "\n")
	b.WriteString(`      "additionalProperties": false,` + "\n")
	b.WriteString(`      "properties": {` + "\n")
	for i, p := range cmds {
		fmt.Fprintf(&b, "        %s: {\n", mustJSON(p))
		fmt.Fprintf(&b, "          \"description\": %s,\n", mustJSON("mcpdrift "+p))
		b.WriteString(`          "type": "object",` + "\n")
		b.WriteString(`          "additionalProperties": false,` + "\n")
		writeLines(&b, "          ", perCmd[p])
		b.WriteString("        }")
		if i < len(cmds)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("      }\n    }\n  }\n}\n")
	var check any
	if err := json.Unmarshal(b.Bytes(), &check); err != nil {
		return nil, fmt.Errorf("generated config schema is not JSON: %w", err)
	}
	return b.Bytes(), nil
}

// writeLines writes a properties member, one property a line.
func writeLines(b *bytes.Buffer, indent string, lines []line) {
	if len(lines) == 0 {
		b.WriteString(indent + `"properties": {}` + "\n")
		return
	}
	b.WriteString(indent + `"properties": {` + "\n")
	for i, l := range lines {
		b.WriteString(indent + "  " + mustJSON(l.name) + ": " + mustJSON(l.schema))
		if i < len(lines)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(indent + "}\n")
}

// suppressionsSchema is the suppressions member of the suppression file's
// schema, compact.
func suppressionsSchema() (string, error) {
	src, err := schemas.Files().ReadFile(schemas.Suppressions)
	if err != nil {
		return "", err
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(src, &s); err != nil {
		return "", err
	}
	raw, ok := s.Properties["suppressions"]
	if !ok {
		return "", fmt.Errorf("%s has no properties.suppressions", schemas.Suppressions)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return "", err
	}
	return c.String(), nil
}

func mustJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
