package cli

import "github.com/spf13/cobra"

// Placeholder until the command lands; replace this file.
func newLimitsCommand(IOStreams) *cobra.Command  { return &cobra.Command{Use: "limits", Hidden: true} }
func newCatalogCommand(IOStreams) *cobra.Command { return &cobra.Command{Use: "catalog", Hidden: true} }
