package manifest

import (
	"github.com/mcpdrift/mcpdrift/schemas"
)

// Config is mcpdrift.yaml, the one file of a repository's settings
// (schemas/config.v1.schema.json): the command line's defaults — for
// every command that has the flag (Defaults) and per command (Commands,
// keyed by the command's path without "mcpdrift": "lock check") — and the
// suppressions, which ParseSuppressions reads from the same file. A value
// is a string, a number, a boolean, or a list of strings for a flag that
// repeats; the schema names each flag a command has.
type Config struct {
	Version      int                       `yaml:"version"`
	Defaults     map[string]any            `yaml:"defaults,omitempty"`
	Commands     map[string]map[string]any `yaml:"commands,omitempty"`
	Suppressions []Suppression             `yaml:"suppressions,omitempty"`
}

// ParseConfig reads and validates mcpdrift.yaml: strict YAML (duplicate
// and unknown keys are errors) and the shipped schema. Its suppressions
// are checked by ParseSuppressions, which the commands that apply them
// call.
func ParseConfig(src []byte, file string) (*Config, error) {
	var c Config
	if err := decodeYAML(src, "configuration file", schemas.Config, &c); err != nil {
		return nil, &ArtifactError{file, err}
	}
	return &c, nil
}
