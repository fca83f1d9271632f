package etcdmetrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Schema names the version of the JSON report.
const Schema = "iolens.etcd/v1"

// What a member's figures cover.
const (
	OverSinceStart   = "since-start"   // one scrape: everything since the process started
	OverInterval     = "interval"      // between two scrapes
	OverSinceRestart = "since-restart" // the member restarted between the scrapes
)

// Report is the judgement of every member, and of the cluster.
type Report struct {
	Schema string    `json:"schema"`
	Time   time.Time `json:"time"`
	// IntervalS is the time asked for between two scrapes; 0 for one
	// scrape, whose figures cover each member's whole life.
	IntervalS float64 `json:"interval_s"`
	// Verdict is the worst member's (see Worse), Reason why.
	Verdict string   `json:"verdict"`
	Reason  string   `json:"reason"`
	Members []Member `json:"members"`
	Notes   []string `json:"notes"`
}

// Unreadable counts the members that could not be read.
func (r *Report) Unreadable() int {
	n := 0
	for _, m := range r.Members {
		if m.Verdict == VerdictError {
			n++
		}
	}
	return n
}

// Member is one endpoint's figures and verdict.
type Member struct {
	Endpoint  string     `json:"endpoint"`
	URL       string     `json:"url"`
	Version   string     `json:"etcd_version,omitempty"`
	MemberID  string     `json:"member_id,omitempty"`
	Leader    *bool      `json:"leader,omitempty"`
	StartTime *time.Time `json:"start_time,omitempty"`
	// Over says what the figures cover (OverSinceStart...), WindowS for
	// how long; null when unknown (no process_start_time_seconds).
	Over      string   `json:"over"`
	WindowS   *float64 `json:"window_s"`
	Restarted bool     `json:"restarted"`
	// Verdict is the worse of the two checks', or "error".
	Verdict       string           `json:"verdict"`
	Reason        string           `json:"reason"`
	WALFsync      *Judgement       `json:"wal_fsync"`
	BackendCommit *Judgement       `json:"backend_commit"`
	Findings      []result.Finding `json:"findings"`
	Error         string           `json:"error,omitempty"`
	Hint          string           `json:"hint,omitempty"`

	snap *Snapshot
}

// Options says what to measure.
type Options struct {
	Endpoints []string
	// Interval between two scrapes; 0 scrapes once.
	Interval time.Duration
	// Progress, if set, hears what is happening (the CLI prints it).
	Progress func(msg string)
}

// Measure scrapes every endpoint (concurrently), once or twice Interval
// apart, and judges each member. A member that cannot be scraped gets
// the verdict "error" with the reason and a hint; the others are judged
// all the same. The error return is only for ctx ending.
func Measure(ctx context.Context, c *Client, o Options) (*Report, error) {
	rep := &Report{Schema: Schema, IntervalS: o.Interval.Seconds(), Members: make([]Member, len(o.Endpoints)), Notes: []string{}}
	progress := o.Progress
	if progress == nil {
		progress = func(string) {}
	}
	for i, e := range o.Endpoints {
		rep.Members[i] = Member{Endpoint: e, Findings: []result.Finding{}}
		rep.Members[i].URL, _ = MetricsURL(e, c.hasTLS)
	}
	first := scrapeAll(ctx, c, o.Endpoints)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if o.Interval <= 0 {
		for i := range rep.Members {
			m := &rep.Members[i]
			if first[i].err != nil {
				m.fail(first[i].err)
				continue
			}
			m.sinceStart(first[i].s)
		}
		rep.finish(time.Now())
		return rep, nil
	}
	ok := 0
	for _, r := range first {
		if r.err == nil {
			ok++
		}
	}
	progress(fmt.Sprintf("scraped %d of %d members; scraping again in %s", ok, len(o.Endpoints), o.Interval))
	var second []scraped
	if ok > 0 {
		t := time.NewTimer(o.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		second = scrapeAll(ctx, c, o.Endpoints)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	for i := range rep.Members {
		m := &rep.Members[i]
		switch {
		case first[i].err != nil:
			m.fail(first[i].err)
		case second[i].err != nil:
			m.fail(second[i].err)
		default:
			m.between(first[i].s, second[i].s)
		}
	}
	rep.finish(time.Now())
	return rep, nil
}

type scraped struct {
	s   *Snapshot
	err error
}

func scrapeAll(ctx context.Context, c *Client, endpoints []string) []scraped {
	out := make([]scraped, len(endpoints))
	var wg sync.WaitGroup
	for i, e := range endpoints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].s, out[i].err = c.Scrape(ctx, e)
		}()
	}
	wg.Wait()
	return out
}

func (m *Member) fail(err error) {
	m.Verdict = VerdictError
	m.Error = err.Error()
	m.Hint = hint.Of(err)
	m.Reason = m.Error
	m.Findings = append(m.Findings, result.Finding{Kind: result.KindEtcd, Code: result.CodeEtcdScrape, Severity: Severity(VerdictError),
		Summary: fmt.Sprintf("%s: cannot read etcd's metrics: %s", m.Endpoint, m.Error)})
}

func (m *Member) describe(s *Snapshot) {
	m.snap = s
	m.Version, m.MemberID, m.Leader = s.Version, s.MemberID, s.Leader
	if !s.StartTime.IsZero() {
		st := s.StartTime
		m.StartTime = &st
	}
}

func (m *Member) sinceStart(s *Snapshot) {
	m.describe(s)
	m.Over = OverSinceStart
	if m.StartTime != nil {
		w := math.Max(0, s.Time.Sub(*m.StartTime).Seconds())
		m.WindowS = &w
	}
	m.judge(s.WALFsync, s.BackendCommit)
}

// between judges the observations made between two scrapes. A counter
// that went down, or a new process start time, means the member
// restarted in between: then the second scrape alone holds what happened
// since, as Prometheus's rate() reads a reset.
func (m *Member) between(a, b *Snapshot) {
	m.describe(b)
	if a.MemberID != "" && b.MemberID != "" && a.MemberID != b.MemberID {
		m.fail(&hint.Error{Err: fmt.Errorf("member %s answered the first scrape and member %s the second", a.MemberID, b.MemberID),
			Advice: "the endpoint reaches several members (a load balancer or VIP): give each member's own address"})
		return
	}
	m.Over = OverInterval
	w := b.Time.Sub(a.Time).Seconds()
	m.WindowS = &w
	restarted := !a.StartTime.IsZero() && !b.StartTime.IsZero() && math.Abs(b.StartTime.Sub(a.StartTime).Seconds()) > 1
	var wal, commit Histogram
	if !restarted {
		var err1, err2 error
		wal, err1 = b.WALFsync.Sub(a.WALFsync)
		commit, err2 = b.BackendCommit.Sub(a.BackendCommit)
		for _, err := range []error{err1, err2} {
			switch {
			case errors.Is(err, ErrReset):
				restarted = true
			case errors.Is(err, ErrLayout):
				m.fail(&hint.Error{Err: fmt.Errorf("%w, though the process did not restart (another etcd behind the same address?)", err),
					Advice: "give each member's own address"})
				return
			}
		}
	}
	if restarted {
		m.Restarted = true
		m.Over = OverSinceRestart
		wal, commit = b.WALFsync, b.BackendCommit
		since := "at an unknown time"
		if !b.StartTime.IsZero() {
			ws := math.Max(0, b.Time.Sub(b.StartTime).Seconds())
			m.WindowS = &ws
			since = fmt.Sprintf("at %s, %.0f s before the second scrape", b.StartTime.Format(time.RFC3339), ws)
		} else {
			m.WindowS = nil
		}
		m.Findings = append(m.Findings, result.Finding{Kind: result.KindEtcd, Code: result.CodeEtcdRestart, Severity: Severity(VerdictPass),
			Summary: fmt.Sprintf("%s: etcd restarted between the scrapes (%s): the figures cover only the time since the restart", m.Endpoint, since)})
	}
	m.judge(wal, commit)
}

func (m *Member) judge(wal, commit Histogram) {
	w, c := Judge(wal, WALFsyncLimit()), Judge(commit, BackendCommitLimit())
	m.WALFsync, m.BackendCommit = &w, &c
	// A check with nothing to judge does not hide the other's verdict:
	// an idle backend beside a busy WAL is the WAL's verdict.
	worst := w
	if w.Verdict == VerdictNoData || c.Verdict != VerdictNoData && verdictRank[c.Verdict] > verdictRank[w.Verdict] {
		worst = c
	}
	m.Verdict = worst.Verdict
	m.Reason = worst.limit.Name + " " + worst.Reason
	if m.Verdict == VerdictNoData {
		m.Reason = "no WAL fsyncs and no backend commits " + m.overText() + ": etcd wrote nothing (an idle cluster); measure under load or over a longer --interval"
	}
	m.Findings = append(m.Findings, w.Finding(m.Endpoint+": "), c.Finding(m.Endpoint+": "))
}

func (m *Member) overText() string {
	switch m.Over {
	case OverInterval:
		return fmt.Sprintf("in the %.0f s between the scrapes", deref(m.WindowS))
	case OverSinceRestart:
		return "since the restart"
	}
	return "since etcd started"
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// finish sets the cluster's verdict and the notes.
func (r *Report) finish(now time.Time) {
	r.Time = now.UTC()
	r.Verdict = VerdictPass
	var worst *Member
	for i := range r.Members {
		m := &r.Members[i]
		if worst == nil || verdictRank[m.Verdict] > verdictRank[worst.Verdict] {
			worst = m
		}
		r.Verdict = Worse(r.Verdict, m.Verdict)
	}
	switch {
	case worst == nil:
		r.Verdict, r.Reason = VerdictNoData, "no endpoints"
	case r.Verdict == VerdictPass && len(r.Members) > 1:
		r.Reason = fmt.Sprintf("all %d members pass", len(r.Members))
	case worst.Verdict == VerdictError:
		r.Reason = worst.Reason // the error names the URL
	default:
		r.Reason = worst.Endpoint + ": " + worst.Reason
	}
	for _, m := range r.Members {
		if m.snap != nil {
			r.Notes = append(r.Notes, bucketNote(m.snap.WALFsync))
			break
		}
	}
	if r.IntervalS == 0 {
		r.Notes = append(r.Notes, "one scrape: the figures cover each member's whole life since it started, "+
			"startup and past incidents included; --interval 30s judges only what happens between two scrapes")
	}
}

// bucketNote says how coarse the buckets are and how the p99 is read.
func bucketNote(h Histogram) string {
	var bs []string
	for _, b := range h.Buckets {
		if !math.IsInf(b.UpperBound, 1) {
			bs = append(bs, strings.TrimSuffix(units.Ms(b.UpperBound, 4), " ms"))
		}
	}
	return fmt.Sprintf("etcd's histograms have coarse buckets (%s ms): the p99 is read as Prometheus's histogram_quantile reads it, "+
		"linearly inside the bucket it falls in, and the true p99 lies somewhere in that bucket; when the bucket straddles the limit "+
		"the verdict is undecided. 'iolens run DIR --suite etcd' on the same disk measures fdatasync percentiles exactly", strings.Join(bs, ", "))
}
