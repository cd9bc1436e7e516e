package ghaction_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// A runner of a composite action's steps as GitHub's runner runs them:
// each step's env evaluated (the expressions the action uses: inputs.*,
// github.action_path, github.action_ref, steps.ID.outputs.*), its run
// script given to bash --noprofile --norc -eo pipefail, a fresh
// GITHUB_OUTPUT per step read back as the step's outputs, GITHUB_PATH
// lines put before PATH for the next steps; the first failing step ends
// the run. Any other expression, an if:, or a uses: step fails the test:
// the action must stay within what this runner proves.

type actionFile struct {
	Inputs map[string]struct {
		Description string `yaml:"description"`
		Default     string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID    string            `yaml:"id"`
			Name  string            `yaml:"name"`
			If    string            `yaml:"if"`
			Uses  string            `yaml:"uses"`
			Shell string            `yaml:"shell"`
			Run   string            `yaml:"run"`
			Env   map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func loadAction(t *testing.T, path string) *actionFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if a.Runs.Using != "composite" || len(a.Runs.Steps) == 0 {
		t.Fatalf("%s: not a composite action with steps", path)
	}
	return &a
}

var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// run is one run of the action.
type run struct {
	t         *testing.T
	act       *actionFile
	inputs    map[string]string
	actionDir string // github.action_path
	actionRef string
	workspace string
	env       []string // GITHUB_*, RUNNER_*, PATH, HOME
	outputs   map[string]map[string]string
	log       strings.Builder
	failed    string // the step that failed
	exit      int
}

func (r *run) eval(s string) string {
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		e := expression.FindStringSubmatch(m)[1]
		switch {
		case strings.HasPrefix(e, "inputs."):
			name := strings.TrimPrefix(e, "inputs.")
			in, ok := r.act.Inputs[name]
			if !ok {
				r.t.Fatalf("expression %q names no input", e)
			}
			if v, ok := r.inputs[name]; ok {
				return v
			}
			return r.eval(in.Default)
		case e == "github.action_path":
			return r.actionDir
		case e == "github.action_ref":
			return r.actionRef
		case e == "github.actor":
			return "octocat"
		case e == "github.run_id":
			return "4242"
		case strings.HasPrefix(e, "steps."):
			parts := strings.Split(e, ".")
			if len(parts) != 4 || parts[2] != "outputs" {
				r.t.Fatalf("expression %q", e)
			}
			return r.outputs[parts[1]][parts[3]]
		}
		r.t.Fatalf("the test's runner does not evaluate %q", e)
		return ""
	})
}

// getenv returns a variable of env.
func getenv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, _ := strings.Cut(env[i], "="); k == key {
			return v
		}
	}
	return ""
}

// steps runs the steps until one fails.
func (r *run) steps() {
	r.outputs = map[string]map[string]string{}
	for i, s := range r.act.Runs.Steps {
		if s.If != "" || s.Uses != "" || s.Shell != "bash" || s.Run == "" {
			r.t.Fatalf("step %d (%s): only run: steps in bash, without if:, are run here", i, s.Name)
		}
		out := filepath.Join(r.t.TempDir(), "output")
		if err := os.WriteFile(out, nil, 0o644); err != nil {
			r.t.Fatal(err)
		}
		env := append([]string{}, r.env...)
		env = append(env, "GITHUB_OUTPUT="+out)
		pathFile := getenv(r.env, "GITHUB_PATH")
		if b, err := os.ReadFile(pathFile); err == nil {
			var extra []string
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if l != "" {
					extra = append([]string{l}, extra...)
				}
			}
			if len(extra) > 0 {
				env = append(env, "PATH="+strings.Join(extra, ":")+":"+getenv(r.env, "PATH"))
			}
		}
		for k, v := range s.Env {
			env = append(env, k+"="+r.eval(v))
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", r.eval(s.Run))
		cmd.Dir = r.workspace
		cmd.Env = env
		b, err := cmd.CombinedOutput()
		r.log.WriteString("## " + s.ID + "\n")
		r.log.Write(b)
		r.outputs[s.ID] = readOutputs(r.t, out)
		if err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				r.t.Fatalf("step %s: %v", s.ID, err)
			}
			r.failed, r.exit = s.ID, ee.ExitCode()
			return
		}
	}
}

// readOutputs reads a GITHUB_OUTPUT file: NAME=VALUE lines and
// NAME<<DELIMITER blocks.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if k, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(k, "=") {
			var v []string
			for sc.Scan() && sc.Text() != delim {
				v = append(v, sc.Text())
			}
			out[k] = strings.Join(v, "\n")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %q", line)
		}
		out[k] = v
	}
	return out
}
