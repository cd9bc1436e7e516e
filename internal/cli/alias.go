package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Old spellings of a flag keep working for one release: an alias flag
// sets the same value as the flag it names, is hidden from help, and
// says on stderr, when used, which name to use instead (warnAliases; not
// pflag's deprecation message, which cobra prints to the command's output,
// stdout, where it would corrupt a report). Its environment variable
// (MCPDRIFT_<OLD>) and its key in mcpdrift.yaml set the new flag too, with
// the same warning (settings.go).

// aliasAnnotation names, on an alias flag, the flag it is an old name of.
const aliasAnnotation = "mcpdrift_alias_of"

// deprecatedAlias registers old as an old spelling of cmd's flag name.
func deprecatedAlias(cmd *cobra.Command, old, name string) {
	f := cmd.Flags()
	nf := f.Lookup(name)
	if nf == nil {
		panic("deprecatedAlias: no flag --" + name)
	}
	f.Var(nf.Value, old, nf.Usage)
	a := f.Lookup(old)
	a.NoOptDefVal = nf.NoOptDefVal
	a.Annotations = map[string][]string{aliasAnnotation: {name}}
	a.Hidden = true
}

// warnAliases says, for each old spelling given on the command line,
// which name to use instead.
func (e *env) warnAliases(cmd *cobra.Command) {
	for _, a := range AliasFlags(cmd) {
		if a.Changed {
			fmt.Fprintf(e.stderr, "mcpdrift: warning: --%s is deprecated: %s\n", a.Name, aliasMessage(AliasOf(a)))
		}
	}
}

// aliasMessage is what a deprecation warning says of the name to use.
func aliasMessage(name string) string {
	return "use --" + name + " instead (the old name goes in the next release)"
}

// AliasOf is the flag an alias flag is an old spelling of ("" for a flag
// that is not one).
func AliasOf(f *pflag.Flag) string {
	if v := f.Annotations[aliasAnnotation]; len(v) == 1 {
		return v[0]
	}
	return ""
}

// AliasFlags are cmd's alias flags, in order.
func AliasFlags(cmd *cobra.Command) []*pflag.Flag {
	var out []*pflag.Flag
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if AliasOf(f) != "" {
			out = append(out, f)
		}
	})
	return out
}
