package cli

import (
	"strings"

	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/cobra"
)

// newWordsTopic is 'iolens help words': a help topic (no command to
// run) saying what the reports' words mean, from report.Glossary, which
// the HTML pages give as hover titles too.
func newWordsTopic(IOStreams) *cobra.Command {
	var b strings.Builder
	b.WriteString("The words the reports use, and what they mean there:\n")
	for _, t := range report.Glossary {
		b.WriteString("\n  " + t.Word + "\n")
		for _, line := range wrap(t.Meaning, 72) {
			b.WriteString("      " + line + "\n")
		}
	}
	b.WriteString("\nThe HTML reports give each of these its meaning when the pointer rests on it.")
	return &cobra.Command{
		Use:   "words",
		Short: "What the reports' words mean: QD, iodepth, knee, plateau, p99, ±, p-value",
		Long:  b.String(),
	}
}

// wrap breaks s into lines of at most width characters at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
