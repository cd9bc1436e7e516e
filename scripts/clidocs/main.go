// Command clidocs writes what is generated from mcpdrift's command tree:
// the CLI reference (docs/cli), the man pages (docs/man) and the schema of
// mcpdrift.yaml (schemas/config.v1.schema.json). Run it from the
// repository after changing a command or a flag:
//
//	go run ./scripts/clidocs          # write them
//	go run ./scripts/clidocs -check   # exit 1 naming each stale file
//
// internal/clidocs's test fails when a committed file is stale, and the
// release (.goreleaser.yaml) runs -check before it builds.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpdrift/mcpdrift/internal/cli"
	"github.com/mcpdrift/mcpdrift/internal/clidocs"
)

func main() {
	check := flag.Bool("check", false, "compare with the files on disk; write nothing")
	flag.Parse()
	files, err := clidocs.Generate(cli.CommandTree())
	if err != nil {
		fmt.Fprintln(os.Stderr, "clidocs:", err)
		os.Exit(2)
	}
	stale := clidocs.Stale(".", files)
	if *check {
		for _, s := range stale {
			fmt.Fprintln(os.Stderr, "clidocs: stale:", s)
		}
		if len(stale) > 0 {
			fmt.Fprintln(os.Stderr, "clidocs: run go run ./scripts/clidocs and commit the result")
			os.Exit(1)
		}
		return
	}
	for _, dir := range []string{clidocs.CLIDir, clidocs.ManDir} {
		old, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, p := range old {
			if _, ok := files[filepath.ToSlash(p)]; !ok {
				if err := os.Remove(p); err != nil {
					fmt.Fprintln(os.Stderr, "clidocs:", err)
					os.Exit(2)
				}
			}
		}
	}
	for _, name := range clidocs.Names(files) {
		if cur, err := os.ReadFile(name); err == nil && bytes.Equal(cur, files[name]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "clidocs:", err)
			os.Exit(2)
		}
		if err := os.WriteFile(name, files[name], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "clidocs:", err)
			os.Exit(2)
		}
		fmt.Println("wrote", name)
	}
}
