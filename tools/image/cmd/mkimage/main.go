// Command mkimage writes mcpdrift's container image as an OCI image
// layout (tools/image/mkimage); scripts/build-image.sh runs it:
//
//	go -C tools/image run ./cmd/mkimage -out DIR \
//	    -bin linux/amd64=PATH -bin linux/arm64=PATH -ca CADIR \
//	    -created UNIX_SECONDS -version V -revision SHA -source URL
//
// It prints the image index's digest (what the registry names the image
// by once the layout is pushed).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/tools/image/mkimage"
)

type binFlags map[string]string

func (b binFlags) String() string { return fmt.Sprint(map[string]string(b)) }
func (b binFlags) Set(v string) error {
	p, path, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want OS/ARCH=PATH")
	}
	b[p] = path
	return nil
}

func main() {
	bins := binFlags{}
	out := flag.String("out", "", "the OCI image layout's directory (new or empty)")
	ca := flag.String("ca", "", "scripts/fetch-ca-certificates.sh's directory")
	created := flag.String("created", os.Getenv("SOURCE_DATE_EPOCH"), "every timestamp, in Unix seconds (default $SOURCE_DATE_EPOCH)")
	version := flag.String("version", "", "the release's version")
	revision := flag.String("revision", "", "the commit")
	source := flag.String("source", "https://github.com/mcpdrift/mcpdrift", "the source repository")
	digestFile := flag.String("digest-file", "", "also write the index's digest to this file")
	flag.Var(bins, "bin", "OS/ARCH=PATH of a static mcpdrift binary (repeat)")
	flag.Parse()
	if *out == "" || *ca == "" || *created == "" || len(bins) == 0 {
		fmt.Fprintln(os.Stderr, "mkimage: -out, -ca, -created (or SOURCE_DATE_EPOCH) and -bin are required")
		os.Exit(2)
	}
	secs, err := strconv.ParseInt(*created, 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkimage: -created: Unix seconds:", err)
		os.Exit(2)
	}
	source2, _ := os.ReadFile(filepath.Join(*ca, "source"))
	res, err := mkimage.Build(*out, mkimage.Options{
		Binaries:    bins,
		CACerts:     filepath.Join(*ca, "ca-certificates.crt"),
		CACopyright: filepath.Join(*ca, "copyright"),
		CASource:    string(source2),
		Created:     time.Unix(secs, 0),
		Version:     *version,
		Revision:    *revision,
		Source:      *source,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
	if *digestFile != "" {
		if err := os.WriteFile(*digestFile, []byte(res.Digest.String()+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mkimage:", err)
			os.Exit(1)
		}
	}
	fmt.Println(res.Digest.String())
}
