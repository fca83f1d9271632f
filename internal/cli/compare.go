package cli

import "github.com/spf13/cobra"

func newCompareCommand(IOStreams) *cobra.Command { return &cobra.Command{Use: "compare", Hidden: true} }
