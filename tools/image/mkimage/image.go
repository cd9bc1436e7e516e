// Package mkimage builds mcpdrift's container image without a daemon and
// without pulling a base image, as ko does, with go-containerregistry: for
// each platform one layer on scratch holding the static binary
// (/usr/local/bin/mcpdrift), Debian's CA certificates, /etc/passwd and
// /etc/group with the non-root user 65532 (nonroot), its home and /tmp;
// the platforms in one OCI image index, written as an OCI image layout
// whose index.json names that index. Every byte follows from the inputs
// and the time given (the commit's): the same inputs give the same
// digest.
package mkimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Fixed facts of the image.
const (
	BinaryPath = "/usr/local/bin/mcpdrift"
	CertPath   = "/etc/ssl/certs/ca-certificates.crt"
	UID        = 65532
	User       = "65532:65532"
	Home       = "/home/nonroot"
)

// Options are the inputs of an image.
type Options struct {
	// Binaries maps "os/arch" (linux/amd64, linux/arm64) to the static
	// mcpdrift binary built for it.
	Binaries map[string]string
	// CACerts is the PEM bundle (scripts/fetch-ca-certificates.sh), and
	// CACopyright and CASource its copyright file and where it came from.
	CACerts, CACopyright, CASource string
	// Created is every timestamp in the image (the commit's time).
	Created time.Time
	// Version, Revision and Source are the OCI annotations' and labels'
	// org.opencontainers.image.version, .revision and .source.
	Version, Revision, Source string
}

// Result says what was written.
type Result struct {
	// Digest is the image index's: what a registry that is pushed the
	// layout (crane push DIR REF) names it by.
	Digest v1.Hash
	// Manifests are each platform's image manifest digest.
	Manifests map[string]v1.Hash
}

// Build writes the OCI image layout to dir (which must not exist or be
// empty).
func Build(dir string, o Options) (*Result, error) {
	if len(o.Binaries) == 0 {
		return nil, fmt.Errorf("no binaries")
	}
	certs, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, err
	}
	var copyright []byte
	if o.CACopyright != "" {
		if copyright, err = os.ReadFile(o.CACopyright); err != nil {
			return nil, err
		}
	}
	platforms := make([]string, 0, len(o.Binaries))
	for p := range o.Binaries {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	res := &Result{Manifests: map[string]v1.Hash{}}
	for _, p := range platforms {
		plat, err := parsePlatform(p)
		if err != nil {
			return nil, err
		}
		bin, err := os.ReadFile(o.Binaries[p])
		if err != nil {
			return nil, err
		}
		img, err := image(plat, bin, certs, copyright, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if res.Manifests[p], err = img.Digest(); err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: plat},
		})
	}
	idx = mutate.Annotations(idx, annotations(o)).(v1.ImageIndex)
	if res.Digest, err = idx.Digest(); err != nil {
		return nil, err
	}
	lp, err := layout.Write(dir, mutate.IndexMediaType(empty.Index, types.OCIImageIndex))
	if err != nil {
		return nil, err
	}
	ref := map[string]string{"org.opencontainers.image.ref.name": o.Version}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(ref)); err != nil {
		return nil, err
	}
	return res, nil
}

func parsePlatform(p string) (*v1.Platform, error) {
	osName, arch, ok := strings.Cut(p, "/")
	if !ok || osName != "linux" || (arch != "amd64" && arch != "arm64") {
		return nil, fmt.Errorf("platform %q: linux/amd64 or linux/arm64", p)
	}
	plat := &v1.Platform{OS: osName, Architecture: arch}
	if arch == "arm64" {
		plat.Variant = "v8"
	}
	return plat, nil
}

func annotations(o Options) map[string]string {
	a := map[string]string{
		"org.opencontainers.image.created":     o.Created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.title":       "mcpdrift",
		"org.opencontainers.image.description": "Pin MCP server tool lists, gate CI on drift, and enforce the approved list at runtime",
		"org.opencontainers.image.base.name":   "scratch",
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.version":  o.Version,
		"org.opencontainers.image.revision": o.Revision,
		"org.opencontainers.image.source":   o.Source,
	} {
		if v != "" {
			a[k] = v
		}
	}
	return a
}

// image is one platform's image: one layer on scratch.
func image(plat *v1.Platform, bin, certs, copyright []byte, o Options) (v1.Image, error) {
	layerTar, err := rootfs(bin, certs, copyright, o)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: o.Created.UTC()}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   created,
			CreatedBy: "mcpdrift " + o.Version + ": static binary, Debian CA certificates (" + strings.TrimSpace(o.CASource) + "), user nonroot (65532)",
			Comment:   "tools/image/mkimage",
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = plat.OS, plat.Architecture, plat.Variant
	cf.Created = created
	cf.Author = "mcpdrift"
	cf.Config.User = User
	cf.Config.WorkingDir = Home
	cf.Config.Entrypoint = []string{BinaryPath}
	cf.Config.Env = []string{"PATH=/usr/local/bin", "SSL_CERT_FILE=" + CertPath, "HOME=" + Home}
	cf.Config.Labels = annotations(o)
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, annotations(o)).(v1.Image), nil
}

// rootfs is the layer's tar: directories first, each entry's time the
// commit's, owners root but for the user's home.
func rootfs(bin, certs, copyright []byte, o Options) ([]byte, error) {
	type entry struct {
		name     string
		mode     int64
		uid, gid int
		data     []byte
		dir      bool
	}
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group := "root:x:0:\nnonroot:x:65532:\n"
	entries := []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(CertPath, "/"), mode: 0o644, data: certs},
		{name: "home/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(Home, "/") + "/", mode: 0o700, uid: UID, gid: UID, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(BinaryPath, "/"), mode: 0o755, data: bin},
	}
	if copyright != nil {
		entries = append(entries,
			entry{name: "usr/share/", mode: 0o755, dir: true},
			entry{name: "usr/share/doc/", mode: 0o755, dir: true},
			entry{name: "usr/share/doc/ca-certificates/", mode: 0o755, dir: true},
			entry{name: "usr/share/doc/ca-certificates/copyright", mode: 0o644, data: copyright})
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := o.Created.UTC()
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: mtime, Format: tar.FormatUSTAR}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if e.uid == UID {
			h.Uname, h.Gname = "nonroot", "nonroot"
		} else {
			h.Uname, h.Gname = "root", "root"
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if !e.dir {
			if _, err := tw.Write(e.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
