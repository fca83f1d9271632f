package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagGroup is a heading of a command's help and the flags under it.
type flagGroup struct {
	Title string
	Names []string
}

// groupFlags makes cmd's help list its flags under headings, the basics
// first: the flags of no group go under the first heading, and each
// group's in the order given. A flag named in no group and not defined
// is a mistake in the command's wiring, caught by its tests.
func groupFlags(cmd *cobra.Command, groups ...flagGroup) {
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		w := c.OutOrStderr()
		fmt.Fprintf(w, "Usage:\n  %s\n", c.UseLine())
		if c.Example != "" {
			fmt.Fprintf(w, "\nExamples:\n%s\n", c.Example)
		}
		sets := make([]*pflag.FlagSet, len(groups))
		in := map[string]int{}
		for i, g := range groups {
			sets[i] = pflag.NewFlagSet(g.Title, pflag.ContinueOnError)
			for _, n := range g.Names {
				in[n] = i
			}
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			sets[in[f.Name]].AddFlag(f) // 0 when in no group: the basics
		})
		for i, g := range groups {
			if u := sets[i].FlagUsages(); strings.TrimSpace(u) != "" {
				fmt.Fprintf(w, "\n%s:\n%s", g.Title, u)
			}
		}
		if c.HasAvailableInheritedFlags() {
			fmt.Fprintf(w, "\nGlobal Flags:\n%s", c.InheritedFlags().FlagUsages())
		}
		return nil
	})
}

// The headings of diagnose's and run's help: what to measure first, then
// what to write, then the flags that only matter on a cloud disk.
var (
	outputFlags = flagGroup{"Output and history", []string{"output", "html", "out", "db", "no-save", "label", "quiet", "verbose", "metrics-addr"}}
	cloudFlags  = flagGroup{"Comparing with a cloud disk (its published limits)", []string{"expect", "vm", "no-metadata"}}
	vendorFlags = flagGroup{"Azure and IBM Cloud only", []string{"cache", "attached"}}
)
