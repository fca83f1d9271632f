package cli

import "github.com/spf13/cobra"

// Placeholder until the command lands; replace this file.
func newK8sCommand(IOStreams) *cobra.Command { return &cobra.Command{Use: "k8s", Hidden: true} }
