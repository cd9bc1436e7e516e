package discover

import (
	"fmt"
	"os"
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Expand expands the variables MCP clients write in their
// configuration files — ${env:NAME} (VS Code, Cursor), ${NAME} and
// ${NAME:-default} (Claude Code), ${userHome} — and returns the values
// taken from the environment. ${input:NAME} needs the client's prompt and
// is refused, as is any other ${...} and a variable that is not set: a
// placeholder sent as literal text only fails later, as a refused
// credential.
func Expand(s string, lookup func(string) (string, bool)) (string, []string, error) {
	if !strings.Contains(s, "${") {
		return s, nil, nil
	}
	var b strings.Builder
	var vals []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", nil, fmt.Errorf("an unterminated placeholder %s", safetext.Quote(safetext.Clip(s[i:], 40)))
		}
		b.WriteString(s[:i])
		ph := s[i+2 : i+j]
		s = s[i+j+1:]
		name, def, hasDef := ph, "", false
		switch {
		case strings.HasPrefix(ph, "input:"):
			return "", nil, fmt.Errorf("${%s} asks the client to prompt for a value, and mcpdrift cannot: put it in the environment and write ${env:%s}", safetext.Escape(ph), safetext.Escape(strings.TrimPrefix(ph, "input:")))
		case ph == "userHome":
			home, err := os.UserHomeDir()
			if err != nil {
				return "", nil, fmt.Errorf("${userHome}: %s", safetext.Inert(err.Error()))
			}
			b.WriteString(home)
			continue
		case strings.HasPrefix(ph, "env:"):
			name = strings.TrimPrefix(ph, "env:")
		default:
			if k := strings.Index(ph, ":-"); k >= 0 {
				name, def, hasDef = ph[:k], ph[k+2:], true
			}
		}
		if !envName(name) || !strings.HasPrefix(ph, "env:") && vscodeVariables[name] {
			return "", nil, fmt.Errorf("${%s} is not a placeholder mcpdrift knows (${env:NAME}, ${NAME}, ${NAME:-default}, ${userHome})", safetext.Escape(safetext.Clip(ph, 60)))
		}
		v, ok := lookup(name)
		switch {
		case ok:
			vals = append(vals, v)
		case hasDef:
			v = def
		default:
			return "", nil, fmt.Errorf("${%s}: %s is not set in this environment", safetext.Escape(ph), safetext.Escape(name))
		}
		b.WriteString(v)
	}
	return b.String(), vals, nil
}

func envName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// vscodeVariables are the editor's own ${...} variables: they name no
// environment variable, and mcpdrift has no editor to ask.
var vscodeVariables = map[string]bool{
	"workspaceFolder": true, "workspaceFolderBasename": true, "workspaceRoot": true, "file": true,
	"fileWorkspaceFolder": true, "relativeFile": true, "relativeFileDirname": true, "fileBasename": true,
	"fileBasenameNoExtension": true, "fileExtname": true, "fileDirname": true, "fileDirnameBasename": true,
	"cwd": true, "lineNumber": true, "selectedText": true, "execPath": true, "pathSeparator": true,
	"defaultBuildTask": true,
}
