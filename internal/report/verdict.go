package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

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

// Stories lists the findings of rs (whose diagnosis is d) once per
// story, worst first, as every report shows them.
func Stories(rs []result.Result, d *diagnosis.Diagnosis) []compare.Story {
	var out []compare.Story
	for _, fl := range stories(rs, d) {
		out = append(out, compare.Story{Severity: fl.Severity, Subject: fl.Test, Summary: fl.Summary})
	}
	return out
}

// stories lists what rs found once per story, worst first: one line per
// curve of the disk model (from d), one per stall story (a test's
// stalls), the etcd verdict once, and every other finding once however
// many tests or repeats drew it. Limit findings the model's curves
// already say (or the fsync story says) fold into those lines; the
// per-test list is Verbose's.
func stories(rs []result.Result, d *diagnosis.Diagnosis) []findingLine {
	var out []findingLine
	curveOf := map[string]int{} // dir and size class -> line
	for i := range d.Curves {
		c := &d.Curves[i]
		if _, ok := curveOf[curveFold(c.Dir, c.Large())]; !ok || !c.Random {
			curveOf[curveFold(c.Dir, c.Large())] = len(out)
		}
		out = append(out, findingLine{Severity: "info", Test: curveName(c), Summary: curveWords(c)})
	}
	type key struct{ kind, code, dir, summary string }
	merged := map[key]int{}
	stalls := map[string][]*result.Finding{}
	var stallOrder []string
	var etcd *result.Finding
	var etcdTest string
	etcdTests := 0
	also := map[int][]string{}
	again := map[int]int{}
	// Tests above the expected disk's sustained ceiling by its burst
	// credits: one story, however many tests ran at the burst.
	var atBurst []string
	var burstCeil *result.Finding
	for ri := range rs {
		r := &rs[ri]
		synced := false
		for _, f := range r.Findings {
			synced = synced || f.Kind == result.KindEtcd
		}
		for fi := range r.Findings {
			f := &r.Findings[fi]
			switch {
			case f.Kind == result.KindSteady || f.Kind == result.KindModel:
				continue // folded below; the curves come from d
			case f.Kind == result.KindQD && len(d.Curves) > 0:
				continue // the disk model's curves say the sweep
			case f.Kind == result.KindLimit && (synced || f.Evidence["model_base_lat_ns"] > 0 && len(d.Curves) > 0):
				continue // the fsync story or its curve's line says it
			case f.Kind == result.KindLimit:
				// A test of a curve's direction and block size class off
				// the curve (the layout, the burst check): the curve's
				// line says the story; --verbose has the test's own.
				if i, ok := curveOf[curveFold(f.Dir, r.Test.BlockSize >= 64<<10)]; ok {
					also[i] = appendOnce(also[i], r.Test.Name)
					continue
				}
			case f.Kind == result.KindStall:
				if _, seen := stalls[r.Test.Name]; !seen {
					stallOrder = append(stallOrder, r.Test.Name)
				}
				stalls[r.Test.Name] = append(stalls[r.Test.Name], f)
				continue
			case f.Kind == result.KindCeiling && f.Code == result.CodeAboveCeiling && f.Evidence["burst_iops"] > 0:
				atBurst = appendOnce(atBurst, r.Test.Name)
				if burstCeil == nil {
					burstCeil = f
				}
				continue
			case f.Kind == result.KindEtcd:
				etcdTests++
				if etcd == nil || f.Evidence["syncs"] > etcd.Evidence["syncs"] {
					etcd, etcdTest = f, r.Test.Name
				}
				continue
			}
			k := key{f.Kind, f.Code, f.Dir, f.Summary}
			if i, ok := merged[k]; ok {
				if !strings.Contains(", "+out[i].Test+",", ", "+r.Test.Name+",") {
					out[i].Test += ", " + r.Test.Name
				}
				continue
			}
			// The same finding of a test's repeats, with figures of
			// their own: one line, the worst, and how many more.
			same := key{f.Kind, f.Code, f.Dir, "\x00" + r.Test.Name}
			if i, ok := merged[same]; ok {
				again[i]++
				if sevRank(f.Severity) < sevRank(out[i].Severity) {
					out[i].Severity, out[i].Summary, out[i].F = f.Severity, f.Summary, f
				}
				continue
			}
			merged[k], merged[same] = len(out), len(out)
			out = append(out, findingLine{f.Severity, r.Test.Name, f.Summary, f})
		}
	}
	for i, tests := range also {
		out[i].Summary += " (also " + strings.Join(tests, ", ") + ")"
	}
	for i, n := range again {
		out[i].Summary += fmt.Sprintf(" (and %d more repeats like it)", n)
	}
	if burstCeil != nil {
		tests := atBurst[0]
		if len(atBurst) > 1 {
			tests += fmt.Sprintf(" and %d more", len(atBurst)-1)
		}
		out = append(out, findingLine{"warn", tests, burstCeilingWords(d, len(atBurst)), burstCeil})
	}
	if etcd != nil {
		sum := etcd.Summary
		if etcdTests > 1 {
			sum += fmt.Sprintf(" (the largest of %d fsync tests)", etcdTests)
		}
		out = append(out, findingLine{etcd.Severity, etcdTest, sum, etcd})
	}
	for _, test := range stallOrder {
		fs := stalls[test]
		worst, longest := fs[0], fs[0]
		for _, f := range fs {
			if sevRank(f.Severity) < sevRank(worst.Severity) {
				worst = f
			}
			if f.DurationS != nil && (longest.DurationS == nil || *f.DurationS > *longest.DurationS) {
				longest = f
			}
		}
		sum := longest.Summary
		if len(fs) > 1 {
			sum = fmt.Sprintf("%d stalls; the longest: %s", len(fs), sum)
		}
		out = append(out, findingLine{worst.Severity, test, sum, longest})
	}
	out = append(out, steadyLine(rs)...)
	sort.SliceStable(out, func(i, j int) bool { return sevRank(out[i].Severity) < sevRank(out[j].Severity) })
	return out
}

// burstCeilingWords says in one line that n tests ran above the expected
// disk's sustained ceiling on its burst credits, and what measures the
// sustained figure.
func burstCeilingWords(d *diagnosis.Diagnosis, n int) string {
	disk := "the expected disk"
	if d.Expected != nil {
		disk = d.Expected.Disk
	}
	s := fmt.Sprintf("%s: %d tests ran above %s's sustained ceiling, within its burst ceiling: burst credits", limits.VerdictAbove, n, disk)
	if b := d.Disk.AtBurst; b != nil && d.Expected != nil && b.Disk == d.Expected.Disk {
		s = fmt.Sprintf("%s: %d tests ran above %s's sustained %s IOPS, %s MB/s, at its burst: credits", limits.VerdictAbove, n, disk,
			units.Figure(b.BaseIOPS), units.Figure(b.BaseBWBytes/1e6))
		if b.LastsS > 0 {
			s += fmt.Sprintf(" that last about %s at this rate from full", units.FormatSeconds(b.LastsS))
		}
	}
	return s + "; 'iolens diagnose --sustained' measures what it holds after them"
}

func curveFold(dir string, large bool) string {
	return fmt.Sprintf("%s/%v", dir, large)
}

// curveName names a curve as people say it: "read rand 4 KiB".
func curveName(c *diagnosis.Curve) string {
	pat := "seq"
	if c.Random {
		pat = "rand"
	}
	s := fmt.Sprintf("%s %s %s", c.Dir, pat, units.IOSize(c.IOSizeBytes))
	if c.Buffered {
		s += " buffered"
	}
	return s
}

// curveWords says a curve in one short line: its shape, its rate with
// how sure it is, where the knee is, and what binds it. The evidence
// and the depths are in its model finding (--verbose).
func curveWords(c *diagnosis.Curve) string {
	level, most, deep := c.LevelIOPS, 0.0, 0
	for _, p := range c.Points {
		most, deep = math.Max(most, p.IOPS), max(deep, p.QD)
	}
	if level <= 0 {
		level = most
	}
	pm := units.PlusMinus(c.RateLow, c.RateHigh, level)
	rate := units.Figure(level) + " IOPS" + pm
	other := units.Figure(level*float64(c.IOSizeBytes)/1e6) + " MB/s"
	if c.Large() {
		rate, other = units.Figure(level*float64(c.IOSizeBytes)/1e6)+" MB/s"+pm, units.Figure(level)+" IOPS"
	}
	base := units.Latency(c.BaseLatNs)
	switch c.State {
	case result.StatePlateau:
		from := ""
		if below, reached := c.KneeBracket(); reached != nil {
			from = fmt.Sprintf(" at QD%d", reached.QD)
			if below != nil {
				from += fmt.Sprintf(" (QD%d gets %.0f%%)", below.QD, 100*below.IOPS/level)
			}
		}
		return fmt.Sprintf("plateau reached: %s (%s)%s, base latency %s: %s", rate, other, from, base, limitName(c.Limit))
	case result.StateLatency:
		return fmt.Sprintf("no plateau by QD%d: %s per IO at every depth, %s at QD%d; a deeper queue gives more", deep, base, rate, deep)
	case result.StateApproaching:
		return fmt.Sprintf("no plateau by QD%d: %s, still rising; base latency %s", deep, rate, base)
	}
	return fmt.Sprintf("one depth (QD%d): %s (%s), latency %s: %s", deep, rate, other, base, limitName(c.Limit))
}

// steadyLine folds the steady-state findings, which say little one by
// one, into one line.
func steadyLine(rs []result.Result) []findingLine {
	var steady, notSteady, notJudged []string
	for _, r := range rs {
		for _, f := range r.Findings {
			if f.Kind != result.KindSteady {
				continue
			}
			switch f.Code {
			case result.CodeSteady:
				steady = append(steady, r.Test.Name)
			case result.CodeNotSteady:
				notSteady = append(notSteady, r.Test.Name)
			default:
				notJudged = append(notJudged, r.Test.Name)
			}
		}
	}
	n := len(steady) + len(notSteady) + len(notJudged)
	if n == 0 {
		return nil
	}
	parts := []string{fmt.Sprintf("%d of %d tests steady", len(steady), n)}
	if len(notSteady) > 0 {
		parts = append(parts, "never steady: "+strings.Join(uniq(notSteady), ", "))
	}
	if len(notJudged) > 0 {
		parts = append(parts, fmt.Sprintf("%d not judged (series too short)", len(uniq(notJudged))))
	}
	return []findingLine{{"info", "steady state", strings.Join(parts, "; ") + " (SNIA PTS criteria)", nil}}
}

func uniq(s []string) []string {
	var out []string
	for _, x := range s {
		out = appendOnce(out, x)
	}
	return out
}
