// Package layering holds the test that keeps the library a library: no
// package a Go program imports to run mcpdrift's workflows depends on the
// command line (cobra, pflag, internal/cli).
package layering
