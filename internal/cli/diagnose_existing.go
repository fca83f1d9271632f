package cli

import (
	"fmt"
	"io"

	"github.com/iolens/iolens/internal/coldread"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/termtext"
	"github.com/iolens/iolens/internal/units"
	"github.com/spf13/cobra"
)

// runExisting is 'diagnose --existing DIR': existing data sampled with
// direct reads, nothing written (no test file, no history).
func (o *diagnoseOptions) runExisting(cmd *cobra.Command, streams IOStreams, dir string) error {
	if dir == "" {
		return &UsageError{Err: fmt.Errorf("--existing needs DIR, the directory that holds the data"), Help: "e.g. iolens diagnose --existing /var/lib/data --max-read 256MiB"}
	}
	for _, f := range []string{"device", "create", "destructive", "emulated", "size", "out", "html", "label", "expect", "budget", "precision", "sustained"} {
		if cmd.Flags().Changed(f) {
			return &UsageError{Err: fmt.Errorf("--%s does not apply with --existing: it reads the data there and writes nothing", f),
				Help: "--existing takes --max-read and -o text|json"}
		}
	}
	format, err := report.Listings.Lookup(o.output)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("-o %s: --existing writes text or json", o.output), Help: "use -o text or -o json"}
	}
	if !o.quiet {
		fmt.Fprintf(termtext.NewWriter(streams.ErrOut), "iolens diagnose --existing %s: reading at most %s with direct reads, writing nothing\n", dir, units.HumanBytes(float64(o.maxRead)))
	}
	r, err := coldread.Sample(cmd.Context(), dir, coldread.Options{MaxBytes: int64(o.maxRead)})
	if err != nil {
		return err
	}
	return writeReport(streams.Out, format, report.Input{Listing: report.Listing{Value: r, Forms: map[string]func(io.Writer) error{"text": r.WriteText}}})
}
