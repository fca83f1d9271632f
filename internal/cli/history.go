package cli

import "github.com/spf13/cobra"

// Placeholder until the command lands; replace this file.
func newHistoryCommand(IOStreams) *cobra.Command { return &cobra.Command{Use: "history", Hidden: true} }
func newCompareCommand(IOStreams) *cobra.Command { return &cobra.Command{Use: "compare", Hidden: true} }
func newExportCommand(IOStreams) *cobra.Command  { return &cobra.Command{Use: "export", Hidden: true} }
