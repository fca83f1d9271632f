package etcdmetrics

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/termtext"
	"github.com/iolens/iolens/internal/units"
)

// WriteText prints the report for a person: per member the two checks
// with their count, mean, p99 estimate and bucket, and the verdicts.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	n := len(r.Members)
	plural := "s"
	if n == 1 {
		plural = ""
	}
	if r.IntervalS > 0 {
		fmt.Fprintf(&b, "iolens etcd: %d member%s, between two scrapes %s apart\n", n, plural, time.Duration(r.IntervalS*float64(time.Second)))
	} else {
		fmt.Fprintf(&b, "iolens etcd: %d member%s, one scrape (since each member started)\n", n, plural)
	}
	for _, m := range r.Members {
		b.WriteString("\n")
		// What a member's page or server said is kept to one line.
		b.WriteString(termtext.Line(m.Endpoint))
		if m.Error != "" {
			fmt.Fprintf(&b, "  ERROR: %s\n", termtext.Line(m.Error))
			if m.Hint != "" {
				fmt.Fprintf(&b, "  hint: %s\n", termtext.Line(m.Hint))
			}
			continue
		}
		if m.Version != "" {
			b.WriteString("  etcd " + termtext.Line(m.Version))
		}
		if m.MemberID != "" {
			b.WriteString("  member " + termtext.Line(m.MemberID))
		}
		if m.Leader != nil && *m.Leader {
			b.WriteString("  leader")
		}
		b.WriteString("  " + m.overLine() + "\n")
		for _, j := range []*Judgement{m.WALFsync, m.BackendCommit} {
			if j == nil {
				continue
			}
			b.WriteString(j.line())
		}
		for _, f := range m.Findings {
			if f.Code == result.CodeEtcdRestart {
				fmt.Fprintf(&b, "  note: %s\n", termtext.Line(strings.TrimPrefix(f.Summary, m.Endpoint+": ")))
			}
		}
	}
	fmt.Fprintf(&b, "\nverdict: %s", strings.ToUpper(r.Verdict))
	if r.Reason != "" {
		fmt.Fprintf(&b, "  %s", r.Reason)
	}
	b.WriteString("\n")
	for _, note := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (m Member) overLine() string {
	switch {
	case m.Over == OverInterval && m.WindowS != nil:
		return fmt.Sprintf("over %s", units.FormatSeconds(*m.WindowS))
	case m.Over == OverSinceRestart && m.WindowS != nil:
		return fmt.Sprintf("since its restart %s ago", units.FormatSeconds(*m.WindowS))
	case m.Over == OverSinceRestart:
		return "since its restart"
	case m.WindowS != nil:
		return fmt.Sprintf("since it started %s ago", units.FormatSeconds(*m.WindowS))
	}
	return "since it started"
}

// line is one check: "  WAL fsync  1234 fsyncs  mean 2.1 ms  p99 ≈ 3.2 ms (2-4 ms)  limit 10 ms  pass",
// and the reason under it unless it passed.
func (j Judgement) line() string {
	l := j.limit
	head := fmt.Sprintf("  %-15s %9s %-7s", l.Name, units.Whole(j.Count), l.Unit)
	if j.Count == 0 {
		return head + fmt.Sprintf("  limit %s  %s\n", units.Ms(l.LimitS, 4), strings.ToUpper(j.Verdict))
	}
	p99 := "p99 ≈ " + units.Ms(j.est.Value, 3) + " (" + bucketText(j.est) + ")"
	if math.IsInf(j.est.Upper, 1) {
		p99 = "p99 > " + units.Ms(j.est.Lower, 4)
	}
	s := head + fmt.Sprintf("  mean %-9s  %-30s  limit %-6s  %s\n", units.Ms(deref(j.MeanNs)/1e9, 3), p99, units.Ms(l.LimitS, 4), strings.ToUpper(j.Verdict))
	if j.Verdict != VerdictPass {
		s += "    " + j.detail + "\n"
	}
	return s
}
