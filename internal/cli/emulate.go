package cli

import "github.com/spf13/cobra"

// Placeholder until the command lands; replace this file.
func newEmulateCommand(IOStreams) *cobra.Command { return &cobra.Command{Use: "emulate", Hidden: true} }
