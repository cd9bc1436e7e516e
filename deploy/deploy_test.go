// Package deploy_test checks the Kubernetes manifests in deploy/: every
// YAML document parses strictly, validates against the strict JSON Schema
// of its kind (generated from the Kubernetes OpenAPI document by
// scripts/k8sschemas, in testdata/), and carries the fields the gateway's
// deployment depends on; the example baseline is one the gateway loads.
package deploy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mcpdrift/mcpdrift/internal/cli"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// schemaDir holds the strict schemas, named as kubeconform names them.
const schemaDir = "testdata/kubernetes-v1.36.3"

type object = map[string]any

// doc is one YAML document of a file in deploy/.
type doc struct {
	file string
	obj  object
}

// load parses every YAML document under deploy/ strictly: duplicate
// keys, tabs for indentation, anchors and aliases are errors, and every
// document is a Kubernetes object (apiVersion, kind, metadata.name).
func load(t *testing.T) []doc { t.Helper(); return loadDir(t, ".") }

// loadDir is load of the manifests under dir.
func loadDir(t *testing.T, dir string) []doc {
	t.Helper()
	var out []doc
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path == filepath.Join(dir, "testdata") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); d.IsDir() || ext != ".yaml" && ext != ".yml" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dec := yaml.NewDecoder(bytes.NewReader(src))
		for i := 0; ; i++ {
			var n yaml.Node
			if err := dec.Decode(&n); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Errorf("%s: document %d: %v", path, i, err)
				break
			}
			if why := anchored(&n); why != "" {
				t.Errorf("%s: document %d: %s", path, i, why)
			}
			var obj object
			if err := n.Decode(&obj); err != nil { // duplicate keys are refused here
				t.Errorf("%s: document %d: %v", path, i, err)
				continue
			}
			if obj == nil {
				continue
			}
			if str(obj, "apiVersion") == "" || str(obj, "kind") == "" || str(obj, "metadata", "name") == "" {
				t.Errorf("%s: document %d is not a Kubernetes object (apiVersion, kind, metadata.name)", path, i)
			}
			out = append(out, doc{path, obj})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no manifests in deploy/")
	}
	return out
}

// anchored refuses anchors, aliases and merge keys: what a reader sees
// must be what is applied.
func anchored(n *yaml.Node) string {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return "an anchor or alias (&" + n.Anchor + ")"
	}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 && c.Value == "<<" {
			return "a merge key (<<)"
		}
		if why := anchored(c); why != "" {
			return why
		}
	}
	return ""
}

// at walks maps by key and lists by index ("0").
func at(v any, path ...string) any {
	for _, p := range path {
		switch x := v.(type) {
		case object:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func str(v any, path ...string) string {
	s, _ := at(v, path...).(string)
	return s
}

func kindFile(obj object) string {
	kind := strings.ToLower(str(obj, "kind"))
	group, version, ok := strings.Cut(str(obj, "apiVersion"), "/")
	if !ok {
		return kind + "-" + group + ".json"
	}
	return kind + "-" + strings.Split(group, ".")[0] + "-" + version + ".json"
}

// Every object validates against the strict schema of its kind: an
// unknown field (a typo), a wrong type or a missing required field fails.
func TestManifestsValidate(t *testing.T) { validateDocs(t, load(t)) }

// validateDocs validates each object against its kind's strict schema.
func validateDocs(t *testing.T, docs []doc) {
	t.Helper()
	for _, d := range docs {
		name := d.file + ": " + str(d.obj, "kind") + " " + str(d.obj, "metadata", "name")
		sch, err := os.ReadFile(filepath.Join(schemaDir, kindFile(d.obj)))
		if err != nil {
			t.Errorf("%s: no schema for it in %s (add its kind to scripts/k8sschemas's run): %v", name, schemaDir, err)
			continue
		}
		c, err := schemas.Compile(sch)
		if err != nil {
			t.Fatalf("%s: %v", kindFile(d.obj), err)
		}
		inst, err := json.Marshal(d.obj)
		if err != nil {
			t.Fatal(err)
		}
		problems, err := c.Validate(inst)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s: %s", name, p.Pointer, p.Msg)
		}
	}
}

// The strict schemas do refuse what they should (so a passing validation
// means something).
func TestSchemasRefuse(t *testing.T) {
	sch, err := os.ReadFile(filepath.Join(schemaDir, "deployment-apps-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := schemas.Compile(sch)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"selector":{},"template":{"spec":{"containers":[{"name":"c","securityContxt":{}}]}}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"selector":{},"template":{"spec":{"containers":[{"name":"c","securityContext":{"readOnlyRootFilesystem":"yes"}}]}}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"selector":{},"template":{"spec":{"containers":[{"securityContext":{}}]}}}}`,
		`{"apiVersion":"v1","kind":"Deployment","metadata":{"name":"x"}}`,
	} {
		if p, err := c.Validate([]byte(bad)); err != nil || len(p) == 0 {
			t.Errorf("accepted %s (%v)", bad, err)
		}
	}
}

func find(docs []doc, kind, name string) object {
	for _, d := range docs {
		if str(d.obj, "kind") == kind && str(d.obj, "metadata", "name") == name {
			return d.obj
		}
	}
	return nil
}

// flagValue returns the value of --name=VALUE in args.
func flagValue(args []any, name string) string {
	for _, a := range args {
		if s, _ := a.(string); strings.HasPrefix(s, "--"+name+"=") {
			return strings.TrimPrefix(s, "--"+name+"=")
		}
	}
	return ""
}

func portOf(addr string) string {
	_, p, _ := strings.Cut(addr, ":")
	return p
}

// The fields the gateway's deployment depends on.
func TestGatewayDeployment(t *testing.T) {
	docs := load(t)
	dep := find(docs, "Deployment", "mcpdrift-proxy")
	if dep == nil {
		t.Fatal("no Deployment mcpdrift-proxy")
	}
	pod := at(dep, "spec", "template").(object)
	spec := pod["spec"].(object)
	containers := spec["containers"].([]any)
	if len(containers) != 1 {
		t.Fatalf("%d containers", len(containers))
	}
	c := containers[0].(object)
	args, _ := c["args"].([]any)
	if len(args) == 0 || args[0] != "proxy" {
		t.Fatalf("the container does not run mcpdrift proxy: %v", args)
	}
	ports := map[string]int{}
	for _, p := range c["ports"].([]any) {
		ports[str(p, "name")] = at(p, "containerPort").(int)
	}
	listen, metrics := flagValue(args, "listen"), flagValue(args, "metrics-listen")
	if portOf(listen) != strconv.Itoa(ports["mcp"]) || portOf(metrics) != strconv.Itoa(ports["metrics"]) {
		t.Errorf("--listen %s and --metrics-listen %s are not the ports named mcp and metrics: %v", listen, metrics, ports)
	}

	// Readiness on /healthz of the gateway's port; liveness never on
	// /healthz (an upstream that is down must not restart the gateway).
	if str(c, "readinessProbe", "httpGet", "path") != "/healthz" || str(c, "readinessProbe", "httpGet", "port") != "mcp" {
		t.Errorf("readinessProbe: %v", c["readinessProbe"])
	}
	if str(c, "livenessProbe", "httpGet", "path") == "/healthz" {
		t.Error("livenessProbe on /healthz: an unready upstream would restart the gateway")
	}

	// Prometheus scrapes the metrics port.
	ann := at(pod, "metadata", "annotations").(object)
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" || ann["prometheus.io/port"] != strconv.Itoa(ports["metrics"]) {
		t.Errorf("Prometheus annotations %v (metrics port %d)", ann, ports["metrics"])
	}

	// Its own ServiceAccount, no API token.
	sa := str(spec, "serviceAccountName")
	if sa == "" || sa == "default" || find(docs, "ServiceAccount", sa) == nil {
		t.Errorf("serviceAccountName %q: not a ServiceAccount of deploy/", sa)
	}
	if at(spec, "automountServiceAccountToken") != false {
		t.Error("the pod mounts a service account token; the gateway never calls the API")
	}

	// Non-root, no privilege escalation, read-only root, no capabilities.
	if at(spec, "securityContext", "runAsNonRoot") != true || at(c, "securityContext", "runAsNonRoot") != true {
		t.Error("runAsNonRoot is not set on the pod and the container")
	}
	if uid, _ := at(spec, "securityContext", "runAsUser").(int); uid == 0 {
		t.Error("runAsUser is root or unset")
	}
	if str(spec, "securityContext", "seccompProfile", "type") != "RuntimeDefault" {
		t.Error("no RuntimeDefault seccomp profile")
	}
	for _, f := range []struct {
		key  string
		want any
	}{{"allowPrivilegeEscalation", false}, {"readOnlyRootFilesystem", true}, {"privileged", false}} {
		if at(c, "securityContext", f.key) != f.want {
			t.Errorf("container securityContext.%s is %v, want %v", f.key, at(c, "securityContext", f.key), f.want)
		}
	}
	if drop, _ := at(c, "securityContext", "capabilities", "drop").([]any); !slices.Contains(drop, any("ALL")) {
		t.Errorf("capabilities.drop %v lacks ALL", drop)
	}

	// Resources set, and the Go memory limit below the container's.
	for _, k := range []string{"requests", "limits"} {
		for _, r := range []string{"cpu", "memory"} {
			if at(c, "resources", k, r) == nil {
				t.Errorf("resources.%s.%s is not set", k, r)
			}
		}
	}
	if str(c, "resources", "limits", "memory") != "1Gi" || !envHas(c, "GOMEMLIMIT", "900MiB") {
		t.Errorf("GOMEMLIMIT must stay below the memory limit (%v); update both together", at(c, "resources", "limits", "memory"))
	}

	// The baseline from the ConfigMap, mounted read-only as a directory
	// (a subPath mount never sees the ConfigMap's updates, so the gateway
	// would never reload), --declared inside it; the token likewise.
	mounts := map[string]object{}
	for _, m := range c["volumeMounts"].([]any) {
		mounts[str(m, "name")] = m.(object)
	}
	volumes := map[string]object{}
	for _, v := range spec["volumes"].([]any) {
		volumes[str(v, "name")] = v.(object)
	}
	for _, v := range []struct{ volume, flag, source, sourceKind string }{
		{"baseline", "declared", "configMap", "ConfigMap"},
		{"token", "listen-token-file", "secret", ""},
	} {
		m, vol := mounts[v.volume], volumes[v.volume]
		if m == nil || vol == nil {
			t.Errorf("no volume %q mounted", v.volume)
			continue
		}
		if m["readOnly"] != true || m["subPath"] != nil {
			t.Errorf("volume %q: readOnly %v, subPath %v: want read-only, no subPath", v.volume, m["readOnly"], m["subPath"])
		}
		if dir := str(m, "mountPath"); filepath.Dir(flagValue(args, v.flag)) != filepath.Clean(dir) {
			t.Errorf("--%s=%s is not in the %q mount (%s)", v.flag, flagValue(args, v.flag), v.volume, dir)
		}
		if vol[v.source] == nil {
			t.Errorf("volume %q is not a %s", v.volume, v.source)
		}
		if v.sourceKind != "" && find(docs, v.sourceKind, str(vol, v.source, "name")) == nil {
			t.Errorf("volume %q: %s %q is not in deploy/", v.volume, v.sourceKind, str(vol, v.source, "name"))
		}
	}
	if mode, _ := at(volumes["token"], "secret", "defaultMode").(int); mode&0o007 != 0 {
		t.Errorf("the token Secret is readable by others (mode %o)", mode)
	}

	// The Service reaches the pods on the gateway's port, with client
	// affinity for legacy sessions.
	svc := find(docs, "Service", "mcpdrift-proxy")
	if svc == nil {
		t.Fatal("no Service mcpdrift-proxy")
	}
	labels := at(pod, "metadata", "labels").(object)
	for k, v := range at(svc, "spec", "selector").(object) {
		if labels[k] != v {
			t.Errorf("the Service selects %s=%v, which the pods do not carry", k, v)
		}
	}
	if str(svc, "spec", "ports", "0", "targetPort") != "mcp" {
		t.Errorf("the Service targets %v, not the mcp port", at(svc, "spec", "ports", "0", "targetPort"))
	}
	if str(svc, "spec", "sessionAffinity") != "ClientIP" {
		t.Error("the Service has no session affinity: legacy sessions live in one replica")
	}
}

func envHas(c object, name, value string) bool {
	env, _ := c["env"].([]any)
	for _, e := range env {
		if str(e, "name") == name {
			return str(e, "value") == value
		}
	}
	return false
}

// The ConfigMap's baseline is one the gateway loads: the declared baseline
// and its snapshot agree (mcpdrift diff reads the baseline through the
// snapshot and finds nothing changed), and the pinned endpoint is the
// Deployment's upstream, so the identity check passes.
func TestExampleBaseline(t *testing.T) {
	docs := load(t)
	cm := find(docs, "ConfigMap", "mcpdrift-baseline")
	dep := find(docs, "Deployment", "mcpdrift-proxy")
	if cm == nil || dep == nil {
		t.Fatal("no ConfigMap mcpdrift-baseline or Deployment mcpdrift-proxy")
	}
	dir := t.TempDir()
	for _, f := range []string{"declared.json", "declared.snapshot.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(str(cm, "data", f)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	decl := filepath.Join(dir, "declared.json")
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"diff", decl, decl}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("the ConfigMap's baseline does not load: exit %d\n%s%s", code, out.String(), errb.String())
	}
	var snap struct {
		Identity struct {
			Endpoint string `json:"endpoint"`
		} `json:"identity"`
	}
	if err := json.Unmarshal([]byte(str(cm, "data", "declared.snapshot.json")), &snap); err != nil {
		t.Fatal(err)
	}
	args, _ := at(dep, "spec", "template", "spec", "containers", "0", "args").([]any)
	if up := flagValue(args, "upstream-url"); snap.Identity.Endpoint != up {
		t.Errorf("the baseline pins endpoint %q, the gateway's upstream is %q: every list would be withheld", snap.Identity.Endpoint, up)
	}
}

// kubeconform, when it is installed (go install
// github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0), validates the
// manifests against the same schemas, offline.
func TestKubeconform(t *testing.T) {
	bin := os.Getenv("KUBECONFORM")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("kubeconform"); err != nil {
			t.Skip("kubeconform is not installed (KUBECONFORM=path, or on PATH); TestManifestsValidate checks the same schemas")
		}
	}
	cmd := exec.Command(bin, "-strict", "-summary", "-schema-location", schemaDir+"/{{ .ResourceKind }}{{ .KindSuffix }}.json", "kubernetes")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubeconform: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
