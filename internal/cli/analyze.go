package cli

import (
	"fmt"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/cobra"
)

func newAnalyzeCommand(streams IOStreams) *cobra.Command {
	var output, failOn string
	var files outputFiles
	var expect expectOptions
	var prom promOptions
	cmd := &cobra.Command{
		Use:   "analyze FILE...",
		Short: "Re-analyse saved results or plain fio output: findings, steady state, repeat statistics",
		Long: `Analyse saved results again (iolens NDJSON or JSON, or fio's own JSON/json+
output from anywhere) and print what they show: steady state, stalls,
cliffs, writeback tails and page-cache inflation, QD sweep regimes, the
etcd fdatasync verdict, and statistics over repeated runs. Findings that
were saved with the results are replaced by the fresh analysis. Stalls,
cliffs and writeback need the 1 s series iolens records; plain fio output
has none, so those checks say there is not enough data. With --expect,
each result is also compared with what that disk should deliver.`,
		Example: `  iolens analyze results.ndjson
  iolens analyze -o md results.ndjson > findings.md
  iolens analyze -o ndjson results.ndjson > reanalysed.ndjson
  fio --output-format=json+ etcd.fio > etcd.json && iolens analyze etcd.json --fail-on fail
  iolens analyze results.ndjson --expect azure:P15 --vm Standard_DS2_v2
  iolens analyze results.ndjson --out reanalysed.ndjson --html findings.html`,
		Args: prom.checkArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := analysis.SeverityRank(failOn); !ok {
				return &UsageError{Err: fmt.Errorf("--fail-on %q", failOn), Help: "valid values: none, info, warn, fail"}
			}
			if prom.URL != "" {
				return prom.run(cmd, streams, output, failOn, &files, &expect)
			}
			format, err := report.Results.Lookup(output)
			if err != nil {
				return &UsageError{Err: err, Help: hint.Of(err)}
			}
			if err := files.resolve(output, streams.ErrOut, false, reads{inputs: args}); err != nil {
				return err
			}
			diag, err := expect.diagnoser(cmd)
			if err != nil {
				return err
			}
			rs, err := report.ReadFilesContext(cmd.Context(), args, streams.In, warnSkipped(streams.ErrOut))
			if err != nil {
				return err
			}
			analysis.Annotate(rs)
			for i := range rs {
				if diag != nil {
					diag(&rs[i])
				}
			}
			// The text opens with each run's diagnosis, then lists every
			// test's figures and findings.
			in := report.Input{Outcome: diagnosis.Replay(rs), PerTest: true}
			if err := files.writeHTML(report.Results, in); err != nil {
				return err
			}
			if err := files.writeCopy(in.Results); err != nil {
				return err
			}
			if files.stdout() {
				if err := writeReport(streams.Out, format, in); err != nil {
					return err
				}
			}
			return failOnFindings(in.Results, failOn)
		},
	}
	outputFlag(cmd.Flags(), &output, report.Results, "format (all but text carry the results with their findings): ")
	alsoFormats(cmd.Flags(), report.Histories, "with --prometheus")
	files.addFlags(cmd.Flags(), "also write the re-analysed results to this NDJSON file")
	cmd.Flags().StringVar(&failOn, "fail-on", "none", "exit with status 4 when a finding has this severity or worse: none, info, warn, fail")
	expect.addFlags(cmd)
	prom.add(cmd)
	return cmd
}
