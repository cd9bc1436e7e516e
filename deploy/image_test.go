package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pinnedImage is how every workload names mcpdrift's image: the release's
// tag and the digest of its image index.
var pinnedImage = regexp.MustCompile(`^ghcr\.io/mcpdrift/mcpdrift:v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?@sha256:[0-9a-f]{64}$`)

// images returns each container's image of every workload, by where.
func images(docs []doc) map[string]string {
	out := map[string]string{}
	for _, d := range docs {
		spec := at(d.obj, "spec", "template", "spec")
		if str(d.obj, "kind") == "CronJob" {
			spec = at(d.obj, "spec", "jobTemplate", "spec", "template", "spec")
		}
		for _, key := range []string{"initContainers", "containers"} {
			cs, _ := at(spec, key).([]any)
			for _, c := range cs {
				out[d.file+": "+str(d.obj, "kind")+" "+str(d.obj, "metadata", "name")+" "+str(c, "name")] = str(c, "image")
			}
		}
	}
	return out
}

// TestImagesPinned: every workload runs the one image, named by a
// release's tag and its digest (scripts/deploy-image.sh writes both).
func TestImagesPinned(t *testing.T) {
	imgs := images(load(t))
	if len(imgs) < 4 {
		t.Fatalf("%d containers found, want the gateway, both scans and the watch", len(imgs))
	}
	var first string
	for where, img := range imgs {
		if !pinnedImage.MatchString(img) {
			t.Errorf("%s: image %q is not ghcr.io/mcpdrift/mcpdrift:TAG@sha256:DIGEST", where, img)
		}
		if first == "" {
			first = img
		} else if img != first {
			t.Errorf("%s: image %q, another workload runs %q", where, img, first)
		}
	}
}

// TestDeployImageScript: scripts/deploy-image.sh names a release's image
// in a copy of the manifests, which still validate (strict YAML, each
// kind's strict schema) and differ from the originals only there; a bad
// tag or digest is refused and writes nothing.
func TestDeployImageScript(t *testing.T) {
	const (
		tag    = "v1.4.2"
		digest = "sha256:8b6c8dd2584b826317ab79abca6edef6547932bcfb781b04d9ee5e2fd2f29643"
	)
	out := filepath.Join(t.TempDir(), "kubernetes")
	run := func(args ...string) (string, error) {
		cmd := exec.Command("bash", append([]string{"../scripts/deploy-image.sh"}, args...)...)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	if msg, err := run(tag, digest, out); err != nil {
		t.Fatalf("deploy-image.sh: %v: %s", err, msg)
	}
	docs := loadDir(t, out)
	validateDocs(t, docs)
	imgs := images(docs)
	for where, img := range imgs {
		if img != "ghcr.io/mcpdrift/mcpdrift:"+tag+"@"+digest {
			t.Errorf("%s: image %q after deploy-image.sh", where, img)
		}
	}
	orig, _ := filepath.Glob("kubernetes/*.yaml")
	for _, f := range orig {
		a, _ := os.ReadFile(f)
		b, err := os.ReadFile(filepath.Join(out, filepath.Base(f)))
		if err != nil {
			t.Fatal(err)
		}
		al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
		if len(al) != len(bl) {
			t.Errorf("%s: %d lines, %d after", f, len(al), len(bl))
			continue
		}
		for i := range al {
			if al[i] != bl[i] && !strings.HasPrefix(strings.TrimSpace(al[i]), "image: ") {
				t.Errorf("%s:%d changed: %q -> %q", f, i+1, al[i], bl[i])
			}
		}
	}
	for _, bad := range [][]string{{"1.4.2", digest}, {tag, "sha256:abc"}, {tag, "md5:" + strings.Repeat("0", 64)}, {"v1.4.2\nimage: x", digest}} {
		dir := filepath.Join(t.TempDir(), "k")
		if msg, err := run(bad[0], bad[1], dir); err == nil {
			t.Errorf("deploy-image.sh %q %q: accepted: %s", bad[0], bad[1], msg)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("deploy-image.sh %q %q: refused but wrote %s", bad[0], bad[1], dir)
		}
	}
}
