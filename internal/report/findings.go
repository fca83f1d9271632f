package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// perTestText is analyze's text of out: each run and target's header,
// its diagnosis (built once, before any report), then every test's
// figures and findings, then the statistics of repeated tests.
func perTestText(w io.Writer, out diagnosis.Outcome) error {
	rs := out.Results
	if len(rs) == 0 {
		_, err := fmt.Fprintln(w, "no results")
		return err
	}
	groups := groupByTarget(rs)
	for gi, g := range groups {
		if gi > 0 {
			fmt.Fprintln(w)
		}
		writeHeader(w, g[0])
		if !isWatch(g) {
			d := diagnosisOf(&out, g)
			writeVerdict(w, &d)
		}
		for i := range g {
			writeTestFindings(w, &g[i], hasRepeats(rs))
		}
		if err := writeRepeatsText(w, g); err != nil {
			return err
		}
	}
	return nil
}

// writeTestFindings writes a test's figures on one line and its findings
// under it.
func writeTestFindings(w io.Writer, r *result.Result, repeats bool) {
	name := r.Test.Name
	if repeats {
		name = fmt.Sprintf("%s #%d", name, r.Repeat)
	}
	fmt.Fprintf(w, "\n%s  %s\n", name, findingsResultLine(r))
	if len(r.Findings) == 0 && r.Status == "ok" {
		fmt.Fprintln(w, "  no findings")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "  [%s] %s\n", f.Severity, f.Summary)
	}
}

func findingsResultLine(r *result.Result) string {
	if r.Status != "ok" {
		return "FAILED: " + r.Error
	}
	if r.Suite == "watch" {
		return strings.Join(watchVerdict(r), "; ")
	}
	var parts []string
	for name, d := range r.Dirs() {
		s := name + " " + units.IOPS(d.IOPS)
		if name != "sync" {
			s += " " + units.MBps(d.BWBytes)
		}
		if d.Lat.P99Ns > 0 {
			s += " p99 " + units.Latency(d.Lat.P99Ns)
		}
		parts = append(parts, s)
	}
	if r.Fio != nil && len(r.Fio.Hosts) > 1 {
		parts = append(parts, fmt.Sprintf("summed over %d hosts (%s)", len(r.Fio.Hosts), strings.Join(r.Fio.Hosts, ", ")))
	} else if r.Fio != nil && r.Fio.Jobs > 1 {
		parts = append(parts, fmt.Sprintf("summed over %d jobs", r.Fio.Jobs))
	}
	return strings.Join(parts, ", ")
}
