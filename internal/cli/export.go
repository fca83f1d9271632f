package cli

import "github.com/spf13/cobra"

func newExportCommand(IOStreams) *cobra.Command { return &cobra.Command{Use: "export", Hidden: true} }
