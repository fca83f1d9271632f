package cli

import "github.com/spf13/cobra"

func newRunCommand(IOStreams) *cobra.Command    { return &cobra.Command{Use: "run"} }
func newSuitesCommand(IOStreams) *cobra.Command { return &cobra.Command{Use: "suites"} }
func newReportCommand(IOStreams) *cobra.Command { return &cobra.Command{Use: "report"} }
