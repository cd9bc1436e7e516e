// Package layering holds the tests that keep the house in shape: no
// package a Go program imports to run mcpdrift's workflows depends on the
// command line (cobra, pflag, internal/cli), no command builder is over 80
// lines, and no function over 120.
package layering
