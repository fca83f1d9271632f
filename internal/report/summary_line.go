package report

import (
	"fmt"
	"strings"

	"github.com/iolens/iolens/internal/result"
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
			parts = append(parts, fmt.Sprintf("fdatasync p99 %.2f ms", x.d.Lat.P99Ns/1e6))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.0f IOPS %.1f MB/s p99 %.2f ms", x.n, x.d.IOPS, x.d.BWBytes/1e6, x.d.Lat.P99Ns/1e6))
	}
	return strings.Join(parts, ", ")
}
