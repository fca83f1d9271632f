package report

import (
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// ResultSummary is a result on one line, as progress shows it when its
// test ends: each direction's IOPS, MB/s and p99, or why it failed.
func ResultSummary(r *result.Result) string {
	if r == nil {
		return ""
	}
	if r.Status != "ok" {
		return "FAILED: " + r.Error
	}
	var parts []string
	for _, x := range []struct {
		n string
		d *result.DirResult
	}{{"read", r.Read}, {"write", r.Write}, {"fdatasync", r.Sync}} {
		if x.d == nil {
			continue
		}
		if x.n == "fdatasync" {
			parts = append(parts, "fdatasync p99 "+units.Measure(x.d.Lat.P99Ns, "ns"))
			continue
		}
		parts = append(parts, x.n+" "+units.IOPS(x.d.IOPS)+" "+units.MBps(x.d.BWBytes)+" p99 "+units.Measure(x.d.Lat.P99Ns, "ns"))
	}
	return strings.Join(parts, ", ")
}
