package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// A watch log holds no benchmark: what the devices did under the real
// workload, and what the watch found. Its report says that, device by
// device, in place of a disk model no test measured.

// deviceLoad is one device's load over a watch session.
type deviceLoad struct {
	name                     string
	samples                  int
	seconds                  float64
	rIOPS, wIOPS, rBW, wBW   stat
	rAwait, wAwait, util, qd stat
}

// stat is the mean and peak of a series.
type stat struct{ sum, peak float64 }

func (s *stat) add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	s.sum += v
	s.peak = math.Max(s.peak, v)
}

func (s stat) mean(n int) float64 {
	if n == 0 {
		return 0
	}
	return s.sum / float64(n)
}

func watchLoads(r *result.Result) []deviceLoad {
	var out []deviceLoad
	for _, ds := range r.Devices {
		l := deviceLoad{name: ds.Device, samples: len(ds.Samples)}
		for _, s := range ds.Samples {
			l.rIOPS.add(s.ReadIOPS)
			l.wIOPS.add(s.WriteIOPS)
			l.rBW.add(s.ReadBWBytes)
			l.wBW.add(s.WriteBWBytes)
			l.rAwait.add(s.ReadAwaitMs)
			l.wAwait.add(s.WriteAwaitMs)
			l.util.add(s.UtilPct)
			l.qd.add(s.QueueSize)
		}
		if n := len(ds.Samples); n > 0 {
			l.seconds = ds.Samples[n-1].T - ds.Samples[0].T + r.Interval()
		}
		out = append(out, l)
	}
	return out
}

// watchVerdict is a watch session's answer: each device's load, and
// what the watch found.
func watchVerdict(r *result.Result) []string {
	var out []string
	for _, l := range watchLoads(r) {
		n := l.samples
		out = append(out, fmt.Sprintf("%s over %.0f s (%d samples): read %s IOPS mean (peak %s), %s MB/s (peak %s); write %s IOPS mean (peak %s), %s MB/s (peak %s); util %.0f%% mean (peak %.0f%%), queue %.1f mean",
			l.name, l.seconds, n, units.Whole(l.rIOPS.mean(n)), units.Whole(l.rIOPS.peak), units.MB(l.rBW.mean(n)), units.MB(l.rBW.peak),
			units.Whole(l.wIOPS.mean(n)), units.Whole(l.wIOPS.peak), units.MB(l.wBW.mean(n)), units.MB(l.wBW.peak), l.util.mean(n), l.util.peak, l.qd.mean(n)))
	}
	if len(out) == 0 {
		out = append(out, "no device samples")
	}
	count := map[string]int{}
	for _, f := range r.Findings {
		count[f.Severity]++
	}
	switch {
	case len(r.Findings) == 0:
		out = append(out, "the watch found nothing to report")
	default:
		var parts []string
		for _, s := range []string{"fail", "warn", "info"} {
			if count[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
			}
		}
		out = append(out, "the watch found: "+strings.Join(parts, ", ")+" (below)")
	}
	return out
}

// watchText writes the report of watch sessions (results of suite
// "watch").
func watchText(w io.Writer, g []result.Result) error {
	for i := range g {
		r := &g[i]
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Watch session %d: %s to %s\n", r.Index, r.Start.Format("2006-01-02 15:04:05"), r.End.Format("15:04:05"))
		for _, l := range watchVerdict(r) {
			fmt.Fprintf(w, "  %s\n", l)
		}
		// What the watch found, once per story; a watch measured no
		// curve, so the diagnosis is empty.
		if fl := stories([]result.Result{*r}, &diagnosis.Diagnosis{}); len(fl) > 0 {
			fmt.Fprintln(w, "\nFindings (worst first)")
			for _, f := range fl {
				fmt.Fprintf(w, "  %s%s\n", sevTag(f.Severity), f.Summary)
			}
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "device\tdir\tIOPS mean\tpeak\tMB/s mean\tpeak\tawait ms\tutil %\t")
		for _, l := range watchLoads(r) {
			n := l.samples
			fmt.Fprintf(tw, "%s\tread\t%s\t%s\t%s\t%s\t%.2f\t%.0f\t\n", l.name, units.Whole(l.rIOPS.mean(n)), units.Whole(l.rIOPS.peak), units.MB(l.rBW.mean(n)), units.MB(l.rBW.peak), l.rAwait.mean(n), l.util.mean(n))
			fmt.Fprintf(tw, "%s\twrite\t%s\t%s\t%s\t%s\t%.2f\t\t\n", l.name, units.Whole(l.wIOPS.mean(n)), units.Whole(l.wIOPS.peak), units.MB(l.wBW.mean(n)), units.MB(l.wBW.peak), l.wAwait.mean(n))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, "what the devices did under the workload watched (iostat's view, each sample an interval); MB/s = 10^6 bytes/s")
	}
	writeNotes(w, g)
	return nil
}

// isWatch reports whether a group of results is a watch log's.
func isWatch(g []result.Result) bool { return len(g) > 0 && g[0].Suite == "watch" }
