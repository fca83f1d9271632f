package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// FindingsText prints, per result, a one-line summary and its findings,
// then the statistics of repeated tests.
func FindingsText(w io.Writer, rs []result.Result) error {
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
			fmt.Fprintf(w, "run %s  suite %s  target %s %s  device %s\n", r.RunID, r.Suite, r.Target.Kind, r.Target.Path, units.OrDash(r.Target.Device))
		}
		name := r.Test.Name
		if repeats {
			name = fmt.Sprintf("%s #%d", name, r.Repeat)
		}
		fmt.Fprintf(w, "\n%s  %s\n", name, findingsResultLine(&r))
		if len(r.Findings) == 0 && r.Status == "ok" {
			fmt.Fprintln(w, "  no findings")
		}
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  [%s] %s\n", f.Severity, f.Summary)
		}
	}
	return RepeatsText(w, rs)
}

func findingsResultLine(r *result.Result) string {
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
