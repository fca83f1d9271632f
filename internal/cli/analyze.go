package cli

import (
	"fmt"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
	"github.com/spf13/cobra"
)

func newAnalyzeCommand(streams IOStreams) *cobra.Command {
	var failOn string
	var r replayOptions
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
				return prom.run(cmd, streams, r.output, failOn, &r.files, &r.expect)
			}
			// The text opens with each run's diagnosis, then lists every
			// test's figures and findings.
			rs, err := r.run(cmd, streams, args, false, true, report.Input{PerTest: true})
			if err != nil {
				return err
			}
			return failOnFindings(rs, failOn)
		},
	}
	outputFlag(cmd.Flags(), &r.output, report.Results, "format (all but text carry the results with their findings): ")
	alsoFormats(cmd.Flags(), report.Histories, "with --prometheus")
	r.files.addFlags(cmd.Flags(), "also write the re-analysed results to this NDJSON file")
	cmd.Flags().StringVar(&failOn, "fail-on", "none", "exit with status 4 when a finding has this severity or worse (a test that failed counts as fail): none, info, warn, fail")
	r.expect.addFlags(cmd)
	prom.add(cmd)
	return cmd
}

// failOnFindings is --fail-on: ErrFindings when a result has a finding
// this severe.
func failOnFindings(rs []result.Result, failOn string) error {
	if n := analysis.CountAtLeast(rs, failOn); n > 0 {
		return fmt.Errorf("%s at severity %s or worse (a failed test counts as fail): %w", units.Nouns(int64(n), "finding", "findings"), failOn, ErrFindings)
	}
	return nil
}
