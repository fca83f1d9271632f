package cli

import (
	"context"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/store"
	"github.com/spf13/cobra"
)

// completeValues teaches shell completion the values flags and arguments
// take: suites, output formats, catalog disks and VM sizes, run ids.
// Storage classes come from the cluster (the k8s commands register them).
func completeValues(root *cobra.Command) {
	fixed := func(vals ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
			return withPrefix(vals, prefix), cobra.ShellCompDirectiveNoFileComp
		}
	}
	byFlag := map[string]cobra.CompletionFunc{"suite": fixed(runner.SuiteNames()...), "expect": completeDisks, "vm": completeVMs, "emulated": completeEmulated}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		f := c.Flags()
		for name, complete := range byFlag {
			if f.Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, complete)
			}
		}
		if fl := f.Lookup("output"); fl != nil && fl.Shorthand == "o" {
			if reg, ok := registryOf(fl); ok && reg.Names() != nil {
				_ = c.RegisterFlagCompletionFunc("output", fixed(reg.Names()...))
			}
		}
		switch c.CommandPath() {
		case "iolens limits":
			c.ValidArgsFunction = completeDisks
		case "iolens history show", "iolens history rm", "iolens history export":
			c.ValidArgsFunction = completeRunIDs
		case "iolens emulate rm":
			c.ValidArgsFunction = completeEmulated
		case "iolens emulate status", "iolens emulate exec", "iolens emulate events":
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveDefault // the command's own arguments
				}
				return completeEmulated(cmd, args, prefix)
			}
		case "iolens compare":
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
				ids, _ := completeRunIDs(cmd, args, prefix)
				return ids, cobra.ShellCompDirectiveDefault // files too
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func withPrefix(vals []string, prefix string) []string {
	var out []string
	for _, v := range vals {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// completeDisks offers providers, then the catalog's families and tiers.
func completeDisks(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	c, err := limits.Default()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return withPrefix(c.DiskNames(), prefix), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

func completeVMs(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	c, err := limits.Default()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return withPrefix(c.VMNames(""), prefix), cobra.ShellCompDirectiveNoFileComp
}

// completeEmulated lists the emulated disks (their state is root's, but
// their names are readable by anyone).
func completeEmulated(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	disks, _ := emulate.List(emulate.DefaultDir())
	var names []string
	for _, d := range disks {
		names = append(names, d.Name)
	}
	return withPrefix(names, prefix), cobra.ShellCompDirectiveNoFileComp
}

// completeRunIDs lists the history's runs, newest first (read-only, and
// quick: completion must never wait on a busy database).
func completeRunIDs(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	path, _ := cmd.Flags().GetString("db")
	ids, _ := store.RecentRunIDs(ctx, path, 200)
	return withPrefix(ids, prefix), cobra.ShellCompDirectiveNoFileComp
}
