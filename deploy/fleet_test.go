package deploy_test

import (
	"bytes"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/cli"
	"github.com/mcpdrift/mcpdrift/lock"
)

// fleetWorkloads are the fleet's workloads: the scan CronJob, the Indexed
// Job and the watch Deployment, with their pod templates.
func fleetWorkloads(t *testing.T, docs []doc) map[string]object {
	t.Helper()
	out := map[string]object{}
	for _, w := range []struct {
		kind, name string
		path       []string
	}{
		{"CronJob", "mcpdrift-scan", []string{"spec", "jobTemplate", "spec", "template"}},
		{"Job", "mcpdrift-scan-shards", []string{"spec", "template"}},
		{"Deployment", "mcpdrift-watch", []string{"spec", "template"}},
	} {
		o := find(docs, w.kind, w.name)
		if o == nil {
			t.Fatalf("no %s %s", w.kind, w.name)
		}
		pod, _ := at(o, w.path...).(object)
		if pod == nil {
			t.Fatalf("%s %s has no pod template", w.kind, w.name)
		}
		out[w.kind] = pod
	}
	return out
}

// flagsOf are the flags `mcpdrift CMD --help` lists.
func flagsOf(t *testing.T, cmd string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main([]string{cmd, "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("%s --help: exit %d %s", cmd, code, errb.String())
	}
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9-]+)`).FindAllStringSubmatch(out.String(), -1) {
		flags = append(flags, m[1])
	}
	return flags
}

// The fleet's workloads: each its own ServiceAccount with no token, the
// gateway's security context, the lock from the mcpdrift-fleet ConfigMap
// mounted read-only as a directory, args the command knows, every $(VAR)
// of the args defined in the container's env, the store's password from
// a Secret (never in the args), verdict exit codes failing the Job
// without retries, the shard count equal to the Job's completions, one
// watch replica.
func TestFleetWorkloads(t *testing.T) {
	docs := load(t)
	pods := fleetWorkloads(t, docs)
	sas := map[string]string{}
	for kind, pod := range pods {
		spec := pod["spec"].(object)
		sa := str(spec, "serviceAccountName")
		if sa == "" || sa == "default" || find(docs, "ServiceAccount", sa) == nil {
			t.Errorf("%s: serviceAccountName %q is not a ServiceAccount of deploy/", kind, sa)
		}
		if other, dup := sas[sa]; dup {
			t.Errorf("%s and %s share ServiceAccount %s", kind, other, sa)
		}
		sas[sa] = kind
		if at(find(docs, "ServiceAccount", sa), "automountServiceAccountToken") != false || at(spec, "automountServiceAccountToken") != false {
			t.Errorf("%s: a service account token is mounted", kind)
		}
		if at(spec, "securityContext", "runAsNonRoot") != true || str(spec, "securityContext", "seccompProfile", "type") != "RuntimeDefault" {
			t.Errorf("%s: pod security context %v", kind, spec["securityContext"])
		}
		if uid, _ := at(spec, "securityContext", "runAsUser").(int); uid == 0 {
			t.Errorf("%s: runs as root", kind)
		}
		cs := spec["containers"].([]any)
		if len(cs) != 1 {
			t.Fatalf("%s: %d containers", kind, len(cs))
		}
		c := cs[0].(object)
		for _, f := range []struct {
			key  string
			want any
		}{{"runAsNonRoot", true}, {"allowPrivilegeEscalation", false}, {"readOnlyRootFilesystem", true}, {"privileged", false}} {
			if at(c, "securityContext", f.key) != f.want {
				t.Errorf("%s: container securityContext.%s is %v, want %v", kind, f.key, at(c, "securityContext", f.key), f.want)
			}
		}
		if drop, _ := at(c, "securityContext", "capabilities", "drop").([]any); !slices.Contains(drop, any("ALL")) {
			t.Errorf("%s: capabilities.drop %v lacks ALL", kind, drop)
		}
		for _, k := range []string{"requests", "limits"} {
			for _, r := range []string{"cpu", "memory"} {
				if at(c, "resources", k, r) == nil {
					t.Errorf("%s: resources.%s.%s is not set", kind, k, r)
				}
			}
		}
		args, _ := c["args"].([]any)
		if len(args) == 0 {
			t.Fatalf("%s: no args", kind)
		}
		command := args[0].(string)
		known := flagsOf(t, command)
		env := map[string]bool{}
		for _, e := range c["env"].([]any) {
			env[str(e, "name")] = true
		}
		for _, a := range args[1:] {
			s := a.(string)
			name, _, _ := strings.Cut(strings.TrimPrefix(s, "--"), "=")
			if !strings.HasPrefix(s, "--") || !slices.Contains(known, name) {
				t.Errorf("%s: %q is not a flag of mcpdrift %s", kind, s, command)
			}
			for _, m := range regexp.MustCompile(`\$\(([A-Z_]+)\)`).FindAllStringSubmatch(s, -1) {
				if !env[m[1]] {
					t.Errorf("%s: %s refers to $(%s), which the container's env does not define (it would stay literal)", kind, s, m[1])
				}
			}
			if v, ok := strings.CutPrefix(s, "--store="); ok {
				u, err := url.Parse(v)
				if err != nil {
					t.Errorf("%s: --store is not a URL: %v", kind, err)
				} else if _, pw := u.User.Password(); pw || u.Query().Has("password") {
					t.Errorf("%s: the store URL in the args carries a password", kind)
				}
			}
		}
		if command == "scan" && !envFromSecret(c, "PGPASSWORD") {
			t.Errorf("%s: PGPASSWORD does not come from a Secret", kind)
		}
		// The lock: in the fleet mount, from the ConfigMap, read-only, no subPath.
		mounts := map[string]object{}
		for _, m := range c["volumeMounts"].([]any) {
			mounts[str(m, "name")] = m.(object)
		}
		m := mounts["fleet"]
		if m == nil || m["readOnly"] != true || m["subPath"] != nil || !strings.HasPrefix(flagValue(args, "lock"), str(m, "mountPath")+"/") {
			t.Errorf("%s: --lock=%s is not in a read-only fleet mount without subPath (%v)", kind, flagValue(args, "lock"), m)
		}
		for _, v := range spec["volumes"].([]any) {
			if str(v, "name") == "fleet" && find(docs, "ConfigMap", str(v, "configMap", "name")) == nil {
				t.Errorf("%s: the fleet volume's ConfigMap %q is not in deploy/", kind, str(v, "configMap", "name"))
			}
		}
	}

	// Jobs: pods never restarted in place; verdict exit codes end them.
	for _, j := range []struct {
		kind, action string
		spec         object
	}{
		{"CronJob", "FailJob", at(find(docs, "CronJob", "mcpdrift-scan"), "spec", "jobTemplate", "spec").(object)},
		{"Job", "FailIndex", at(find(docs, "Job", "mcpdrift-scan-shards"), "spec").(object)},
	} {
		if str(j.spec, "template", "spec", "restartPolicy") != "Never" {
			t.Errorf("%s: restartPolicy is not Never", j.kind)
		}
		r := at(j.spec, "podFailurePolicy", "rules", "0")
		codes, _ := at(r, "onExitCodes", "values").([]any)
		if str(r, "action") != j.action || !slices.Equal(codes, []any{1, 2, 3}) {
			t.Errorf("%s: podFailurePolicy %v: exit 1, 2 and 3 must %s", j.kind, j.spec["podFailurePolicy"], j.action)
		}
	}
	job := find(docs, "Job", "mcpdrift-scan-shards")
	args := at(job, "spec", "template", "spec", "containers", "0", "args").([]any)
	_, n, _ := strings.Cut(flagValue(args, "shard"), "/")
	if str(job, "spec", "completionMode") != "Indexed" || n != strconv.Itoa(at(job, "spec", "completions").(int)) || !strings.HasPrefix(flagValue(args, "shard"), "$(JOB_COMPLETION_INDEX)/") {
		t.Errorf("the Indexed Job's --shard=%s does not match its %v completions", flagValue(args, "shard"), at(job, "spec", "completions"))
	}
	if at(find(docs, "Deployment", "mcpdrift-watch"), "spec", "replicas") != 1 {
		t.Error("the watch Deployment must run one replica (two would report every change twice)")
	}
}

func envFromSecret(c object, name string) bool {
	env, _ := c["env"].([]any)
	for _, e := range env {
		if str(e, "name") == name {
			return str(e, "valueFrom", "secretKeyRef", "name") != ""
		}
	}
	return false
}

// The example lock of the mcpdrift-fleet ConfigMap is a lock the commands
// read: it parses (schema, every digest recomputed), and its servers are
// reached at the gateway's upstream.
func TestFleetLock(t *testing.T) {
	docs := load(t)
	cm := find(docs, "ConfigMap", "mcpdrift-fleet")
	if cm == nil {
		t.Fatal("no ConfigMap mcpdrift-fleet")
	}
	l, err := lock.Parse([]byte(str(cm, "data", "mcpdrift.lock")), "mcpdrift-fleet/mcpdrift.lock")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Servers) == 0 {
		t.Fatal("the example lock has no server")
	}
	up := flagValue(at(find(docs, "Deployment", "mcpdrift-proxy"), "spec", "template", "spec", "containers", "0", "args").([]any), "upstream-url")
	if l.Servers[0].Source.URL != up {
		t.Errorf("the example lock reaches %q, the gateway's upstream is %q", l.Servers[0].Source.URL, up)
	}
}
