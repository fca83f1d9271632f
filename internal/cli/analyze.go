package cli

import "github.com/spf13/cobra"

// Placeholder until the command lands; replace this file.
func newAnalyzeCommand(IOStreams) *cobra.Command { return &cobra.Command{Use: "analyze", Hidden: true} }
