package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/spf13/cobra"
)

var severityRank = map[string]int{"none": 0, analysis.SevInfo: 1, analysis.SevWarn: 2, analysis.SevFail: 3}

func newAnalyzeCommand(streams IOStreams) *cobra.Command {
	var output, failOn string
	var files outputFiles
	var expect expectOptions
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
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := severityRank[failOn]; !ok {
				return &UsageError{Err: fmt.Errorf("--fail-on %q", failOn), Help: "valid values: none, info, warn, fail"}
			}
			render := findingsText
			if output != "text" && output != "" {
				r, err := report.RendererFor(output)
				if err != nil {
					return &UsageError{Err: err, Help: err.(*report.UnknownFormatError).Hint()}
				}
				render = r
			}
			if err := files.resolve(output, streams.ErrOut, false); err != nil {
				return err
			}
			diag, err := expect.diagnoser(cmd)
			if err != nil {
				return err
			}
			rs, err := report.ReadFiles(args, streams.In)
			if err != nil {
				return err
			}
			analysis.Annotate(rs)
			for i := range rs {
				if diag != nil {
					diag(&rs[i])
				}
			}
			if err := files.writeHTML(func(w io.Writer) error { return report.HTML(w, rs) }); err != nil {
				return err
			}
			if err := files.writeCopy(rs); err != nil {
				return err
			}
			if files.stdout() {
				if err := render(reportOut(streams.Out, output), rs); err != nil {
					return err
				}
			}
			if n := countAtLeast(rs, failOn); n > 0 {
				return fmt.Errorf("%d findings at severity %s or worse: %w", n, failOn, ErrFindings)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "format: "+strings.Join(report.Formats, ", ")+" (all but text carry the results with their findings)")
	files.addFlags(cmd.Flags(), "also write the re-analysed results to this NDJSON file")
	cmd.Flags().StringVar(&failOn, "fail-on", "none", "exit with status 4 when a finding has this severity or worse: none, info, warn, fail")
	expect.addFlags(cmd)
	return cmd
}

func countAtLeast(rs []result.Result, sev string) int {
	lim := severityRank[sev]
	if lim == 0 {
		return 0
	}
	n := 0
	for _, r := range rs {
		for _, f := range r.Findings {
			if severityRank[f.Severity] >= lim {
				n++
			}
		}
	}
	return n
}

// findingsText prints, per result, a one-line summary and its findings,
// then the statistics of repeated tests.
func findingsText(w io.Writer, rs []result.Result) error {
	if len(rs) == 0 {
		_, err := fmt.Fprintln(w, "no results")
		return err
	}
	repeats := false
	for _, r := range rs {
		repeats = repeats || r.Repeat > 1
	}
	for i, r := range rs {
		if i == 0 || r.RunID != rs[i-1].RunID || r.Target.Path != rs[i-1].Target.Path {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "run %s  suite %s  target %s %s  device %s\n", r.RunID, r.Suite, r.Target.Kind, r.Target.Path, orNone(r.Target.Device))
		}
		name := r.Test.Name
		if repeats {
			name = fmt.Sprintf("%s #%d", name, r.Repeat)
		}
		fmt.Fprintf(w, "\n%s  %s\n", name, resultLine(&r))
		if len(r.Findings) == 0 && r.Status == "ok" {
			fmt.Fprintln(w, "  no findings")
		}
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  [%s] %s\n", f.Severity, f.Summary)
		}
	}
	return report.RepeatsText(w, rs)
}

func resultLine(r *result.Result) string {
	if r.Status != "ok" {
		return "FAILED: " + r.Error
	}
	var parts []string
	for _, x := range []struct {
		name string
		d    *result.DirResult
	}{{"read", r.Read}, {"write", r.Write}, {"sync", r.Sync}} {
		if x.d == nil {
			continue
		}
		s := fmt.Sprintf("%s %.0f IOPS", x.name, x.d.IOPS)
		if x.name != "sync" {
			s += fmt.Sprintf(" %.1f MB/s", x.d.BWBytes/1e6)
		}
		if x.d.Lat.P99Ns > 0 {
			s += fmt.Sprintf(" p99 %.3g ms", x.d.Lat.P99Ns/1e6)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
