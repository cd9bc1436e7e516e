package mkimage

import (
	"archive/tar"
	"crypto/x509"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// The image test: .ci/run requires it (MCPDRIFT_REQUIRE_IMAGE_TEST=1) and
// passes the snapshot's binaries (MCPDRIFT_IMAGE_BINARIES,
// "linux/amd64=PATH,linux/arm64=PATH") and the CA certificates
// (MCPDRIFT_CA_CERTIFICATES, scripts/fetch-ca-certificates.sh's
// directory); elsewhere it builds the binaries and fetches the
// certificates itself, and skips when it cannot.
const repoRoot = "../../.."

const testVersion = "0.0.0-imagetest"

func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("MCPDRIFT_REQUIRE_IMAGE_TEST") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

func binaries(t *testing.T) map[string]string {
	t.Helper()
	if v := os.Getenv("MCPDRIFT_IMAGE_BINARIES"); v != "" {
		out := map[string]string{}
		for _, kv := range strings.Split(v, ",") {
			p, path, _ := strings.Cut(kv, "=")
			out[p] = path
		}
		return out
	}
	dir := t.TempDir()
	out := map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		bin := filepath.Join(dir, "mcpdrift-"+arch)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X github.com/mcpdrift/mcpdrift/internal/cli.Version="+testVersion, "-o", bin, "./cmd/mcpdrift")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		if b, err := cmd.CombinedOutput(); err != nil {
			skipOrFail(t, "go build ./cmd/mcpdrift for linux/"+arch+": "+err.Error()+": "+string(b))
		}
		out["linux/"+arch] = bin
	}
	return out
}

func caDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("MCPDRIFT_CA_CERTIFICATES"); d != "" {
		return d
	}
	d := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(repoRoot, "scripts/fetch-ca-certificates.sh"), d)
	if b, err := cmd.CombinedOutput(); err != nil {
		skipOrFail(t, "scripts/fetch-ca-certificates.sh: "+err.Error()+": "+string(b))
	}
	return d
}

func build(t *testing.T, dir string, bins map[string]string, ca string) *Result {
	t.Helper()
	src, _ := os.ReadFile(filepath.Join(ca, "source"))
	res, err := Build(dir, Options{
		Binaries: bins, CACerts: filepath.Join(ca, "ca-certificates.crt"), CACopyright: filepath.Join(ca, "copyright"),
		CASource: string(src), Created: time.Unix(1767225600, 0), Version: testVersion,
		Revision: "0123456789abcdef0123456789abcdef01234567", Source: "https://github.com/mcpdrift/mcpdrift",
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestImage builds the image twice from the same inputs (the same
// digest) and checks it (verifyLayout).
func TestImage(t *testing.T) {
	bins, ca := binaries(t), caDir(t)
	dir1, dir2 := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	r1, r2 := build(t, dir1, bins, ca), build(t, dir2, bins, ca)
	if r1.Digest != r2.Digest {
		t.Errorf("two builds of the same inputs: %s and %s", r1.Digest, r2.Digest)
	}
	want := testVersion
	if os.Getenv("MCPDRIFT_IMAGE_BINARIES") != "" {
		want = os.Getenv("MCPDRIFT_IMAGE_VERSION")
	}
	verifyLayout(t, dir1, r1.Digest.String(), testVersion, want)
}

// TestReleaseLayout checks the layout scripts/build-image.sh wrote from
// the snapshot (.ci/run sets MCPDRIFT_IMAGE_LAYOUT and
// MCPDRIFT_IMAGE_VERSION, and requires it).
func TestReleaseLayout(t *testing.T) {
	dir := os.Getenv("MCPDRIFT_IMAGE_LAYOUT")
	if dir == "" {
		skipOrFail(t, "no MCPDRIFT_IMAGE_LAYOUT: scripts/build-image.sh writes one from a snapshot (scripts/release-snapshot.sh)")
	}
	digest, err := os.ReadFile(dir + ".digest")
	if err != nil {
		t.Fatal(err)
	}
	v := os.Getenv("MCPDRIFT_IMAGE_VERSION")
	verifyLayout(t, dir, strings.TrimSpace(string(digest)), v, v)
}

// verifyLayout validates an OCI layout (every blob's digest and size,
// each layer's contents), checks its index (one image index named
// refName, two platforms), each image's config (non-root, entrypoint,
// one layer on scratch), unpacks the linux/amd64 image and runs mcpdrift
// version from it: in a chroot of the unpacked root as user 65532 when
// this test runs as root (a binary that needed anything from outside the
// image would fail there), else directly. It must say version.
func verifyLayout(t *testing.T, dir, digest, refName, version string) {
	t.Helper()
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Manifests) != 1 || tm.Manifests[0].Digest.String() != digest || tm.Manifests[0].MediaType != types.OCIImageIndex ||
		tm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != refName {
		t.Fatalf("index.json = %+v, want one OCI index %s named %s", tm.Manifests, digest, refName)
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(idx); err != nil {
		t.Fatalf("the layout does not validate: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.Annotations["org.opencontainers.image.version"] != refName || im.Annotations["org.opencontainers.image.base.name"] != "scratch" {
		t.Errorf("index annotations %v", im.Annotations)
	}
	var plats []string
	images := map[string]v1.Image{}
	for _, d := range im.Manifests {
		if d.Platform == nil || d.MediaType != types.OCIManifestSchema1 {
			t.Fatalf("manifest %+v: want an OCI image manifest with a platform", d)
		}
		p := d.Platform.OS + "/" + d.Platform.Architecture
		plats = append(plats, p)
		if images[p], err = idx.Image(d.Digest); err != nil {
			t.Fatal(err)
		}
		checkConfig(t, p, images[p], d.Platform)
	}
	if strings.Join(plats, ",") != "linux/amd64,linux/arm64" {
		t.Fatalf("platforms %v, want linux/amd64 and linux/arm64", plats)
	}
	checkArm64(t, images["linux/arm64"])
	root := unpack(t, images["linux/amd64"])
	checkRootfs(t, root)
	runVersion(t, root, version)
}

func checkConfig(t *testing.T, p string, img v1.Image, plat *v1.Platform) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != User || len(c.Entrypoint) != 1 || c.Entrypoint[0] != BinaryPath || c.WorkingDir != Home {
		t.Errorf("%s: user %q, entrypoint %q, workdir %q", p, c.User, c.Entrypoint, c.WorkingDir)
	}
	if cf.OS != plat.OS || cf.Architecture != plat.Architecture || cf.Variant != plat.Variant {
		t.Errorf("%s: config says %s/%s/%s", p, cf.OS, cf.Architecture, cf.Variant)
	}
	if cf.Created.IsZero() || cf.Created.After(time.Now()) {
		t.Errorf("%s: created %v", p, cf.Created)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%s: %d layers (%v), want one on scratch", p, len(layers), err)
	}
	if mt, _ := layers[0].MediaType(); mt != types.OCILayer {
		t.Errorf("%s: layer media type %s", p, mt)
	}
}

// checkArm64: the arm64 image holds an AArch64 binary.
func checkArm64(t *testing.T, img v1.Image) {
	t.Helper()
	r := mutate.Extract(img)
	defer r.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("no %s in the arm64 image: %v", BinaryPath, err)
		}
		if "/"+h.Name != BinaryPath {
			continue
		}
		tmp := filepath.Join(t.TempDir(), "mcpdrift")
		f, _ := os.Create(tmp)
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		f.Close()
		e, err := elf.Open(tmp)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if e.Machine != elf.EM_AARCH64 {
			t.Errorf("arm64 image's binary is for %v", e.Machine)
		}
		return
	}
}

// unpack writes the image's file system to a directory, owners included
// when this test runs as root.
func unpack(t *testing.T, img v1.Image) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "rootfs")
	r := mutate.Extract(img)
	defer r.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("entry %q leaves the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, os.FileMode(h.Mode)&os.ModePerm); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode)&os.ModePerm)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		default:
			t.Fatalf("entry %q of type %c", h.Name, h.Typeflag)
		}
		if os.Geteuid() == 0 {
			if err := os.Lchown(p, h.Uid, h.Gid); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(p, os.FileMode(h.Mode)&(os.ModePerm|os.ModeSticky)|modeSticky(h.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func modeSticky(m int64) os.FileMode {
	if m&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

func checkRootfs(t *testing.T, root string) {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(root, CertPath))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) || strings.Count(string(pem), "BEGIN CERTIFICATE") < 100 {
		t.Errorf("%s: %d certificates", CertPath, strings.Count(string(pem), "BEGIN CERTIFICATE"))
	}
	passwd, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if !strings.Contains(string(passwd), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot 65532: %q", passwd)
	}
	st, err := os.Stat(filepath.Join(root, BinaryPath))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("%s: %v %v", BinaryPath, st, err)
	}
	f, err := elf.Open(filepath.Join(root, BinaryPath))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s asks for a dynamic loader: not a static binary", BinaryPath)
		}
	}
}

// runVersion runs mcpdrift version --format json from the unpacked image.
func runVersion(t *testing.T, root, want string) {
	t.Helper()
	env := []string{"PATH=/usr/local/bin", "SSL_CERT_FILE=" + CertPath, "HOME=" + Home}
	var cmd *exec.Cmd
	chroot, err := exec.LookPath("chroot")
	how := "chroot as 65532"
	if os.Geteuid() == 0 && err == nil && runtime.GOOS == "linux" {
		cmd = exec.Command(chroot, "--userspec="+User, root, BinaryPath, "version", "--format", "json")
	} else {
		how = "directly (not root: no chroot)"
		cmd = exec.Command(filepath.Join(root, BinaryPath), "version", "--format", "json")
	}
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("mcpdrift version (%s): %v: %s", how, err, ee.Stderr)
		}
		t.Fatalf("mcpdrift version (%s): %v", how, err)
	}
	var v struct{ Version, Platform, Go string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("mcpdrift version --format json: %v: %s", err, out)
	}
	if (want != "" && v.Version != want) || v.Platform != "linux/amd64" || v.Go == "" {
		t.Errorf("mcpdrift version from the image (%s): %s; want version %q on linux/amd64", how, out, want)
	}
	t.Logf("mcpdrift version from the image (%s): %s", how, strings.TrimSpace(string(out)))
}
