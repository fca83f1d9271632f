package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/result"
)

// Diagnose builds the disk model of one run's results, as every report
// opens with it: the catalog disks that fit the measured ceilings, and the
// disk the results were compared with (the expect labels --expect, a
// storage class or cloud metadata put on them).
func Diagnose(rs []result.Result, unknown []string) diagnosis.Diagnosis {
	// The limits of every test and the curves, read off the model of
	// each whole run (results analysed as they came were each read
	// against the results before them).
	analysis.Revise(rs)
	o := diagnosis.Options{Unknown: unknown}
	if c, err := limits.Default(); err == nil {
		o.Match = func(iops, bw float64) []diagnosis.Match {
			var out []diagnosis.Match
			for _, f := range c.Fits(iops, bw, 5) {
				out = append(out, diagnosis.Match{Disk: f.Disk, VM: f.VM, IOPS: f.IOPS, BWBytes: f.BWBytes, Distance: f.Distance})
			}
			return out
		}
	}
	for _, r := range rs {
		if l := r.Target.Labels; l["expect"] != "" {
			src := l["expect_source"]
			if src == "" {
				src = "--expect"
			}
			o.Expected = &diagnosis.Expected{Disk: l["expect"], VM: l["expect_vm"], Source: src}
			break
		}
	}
	return diagnosis.Build(rs, o)
}

// sevRank orders severities, worst first.
func sevRank(s string) int {
	switch s {
	case "fail":
		return 0
	case "warn":
		return 1
	}
	return 2
}

// findingLine is one finding as the reports list it. F is the finding
// itself (nil for the folded steady-state line).
type findingLine struct {
	Severity, Test, Summary string
	F                       *result.Finding
}

// findingLines lists the findings of rs worst first (stable within a
// severity). Steady-state findings, which say little one by one, fold
// into one line.
func findingLines(rs []result.Result) []findingLine {
	var out []findingLine
	var steady, notSteady, notJudged []string
	for ri := range rs {
		r := &rs[ri]
		for fi := range r.Findings {
			f := &r.Findings[fi]
			if f.Kind == result.KindLimit && f.Evidence["model_base_lat_ns"] > 0 && hasModel(rs) {
				continue // on a curve: its model's line says it, with the other depths
			}
			if f.Kind == result.KindSteady {
				switch f.Code {
				case result.CodeSteady:
					steady = append(steady, r.Test.Name)
				case result.CodeNotSteady:
					notSteady = append(notSteady, r.Test.Name)
				default:
					notJudged = append(notJudged, r.Test.Name)
				}
				continue
			}
			out = append(out, findingLine{f.Severity, r.Test.Name, f.Summary, f})
		}
	}
	if n := len(steady) + len(notSteady) + len(notJudged); n > 0 {
		var parts []string
		if len(steady) > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d tests steady", len(steady), n))
		}
		if len(notSteady) > 0 {
			parts = append(parts, "never steady: "+strings.Join(uniq(notSteady), ", "))
		}
		if len(notJudged) > 0 {
			parts = append(parts, "not judged (series too short): "+strings.Join(uniq(notJudged), ", "))
		}
		out = append(out, findingLine{"info", "steady state", strings.Join(parts, "; ") + " (SNIA PTS criteria)", nil})
	}
	sort.SliceStable(out, func(i, j int) bool { return sevRank(out[i].Severity) < sevRank(out[j].Severity) })
	return out
}

// hasModel says the results carry the disk model's curves.
func hasModel(rs []result.Result) bool {
	for i := range rs {
		for _, f := range rs[i].Findings {
			if f.Kind == result.KindModel {
				return true
			}
		}
	}
	return false
}

func uniq(s []string) []string {
	var out []string
	for _, x := range s {
		out = appendOnce(out, x)
	}
	return out
}

// DiagnosisHTML is the HTML report of a diagnosis: the results' page,
// with what the plan had no time to establish.
func DiagnosisHTML(w io.Writer, rs []result.Result, unknown []string) error {
	p := ResultsPage(rs)
	p.Unknown = unknown
	return WriteHTML(w, p)
}

// WriteDiagnosis writes diagnose's report d of rs in format: text, json
// (d with the results), md (or markdown) or html.
func WriteDiagnosis(w io.Writer, format string, d diagnosis.Diagnosis, rs []result.Result, unknown []string) error {
	switch format {
	case "json":
		d.Results = rs
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	case "md", "markdown":
		return Markdown(w, rs)
	case "html":
		return DiagnosisHTML(w, rs, unknown)
	}
	return Text(w, rs)
}
