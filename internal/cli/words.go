package cli

import (
	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/cobra"
)

// newWordsTopic is 'iolens help words': a help topic (no command to
// run) saying what the reports' words mean, from report.Glossary, which
// the HTML pages give as hover titles too.
func newWordsTopic(IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "words",
		Short: "What the reports' words mean: QD, iodepth, knee, plateau, p99, ±, p-value",
		Long:  report.GlossaryText(),
	}
}
