package watch

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/etcdmetrics"
	"github.com/iolens/iolens/internal/result"
)

// Etcd has watch scrape etcd members' /metrics every interval and follow
// each one's WAL fsync p99 over a sliding window.
type Etcd struct {
	Client    *etcdmetrics.Client
	Endpoints []string
	// Window is the sliding window's span (default 1 minute).
	Window time.Duration
}

// DefaultEtcdWindow: long enough for a p99 of a few hundred fsyncs on a
// lightly written cluster, short enough to see an episode end.
const DefaultEtcdWindow = time.Minute

// etcdWatch is the state of the members watched.
type etcdWatch struct {
	cfg     Etcd
	members []*etcdMember
}

type etcdMember struct {
	endpoint, name string
	window         etcdmetrics.Window
	// state is the verdict of the episode in progress (fail or
	// undecided), "" when none; since is when it began.
	state   string
	since   float64
	failing bool // the last scrape failed
}

func newEtcdWatch(cfg Etcd) *etcdWatch {
	if cfg.Window <= 0 {
		cfg.Window = DefaultEtcdWindow
	}
	e := &etcdWatch{cfg: cfg}
	for _, ep := range cfg.Endpoints {
		e.members = append(e.members, &etcdMember{endpoint: ep, name: etcdName(ep), window: etcdmetrics.Window{Span: cfg.Window}})
	}
	return e
}

// etcdName is how findings name a member: "etcd 10.0.0.1:2379".
func etcdName(ep string) string {
	if u, err := url.Parse(ep); err == nil && u.Host != "" {
		return "etcd " + u.Host
	}
	return "etcd " + strings.TrimSpace(ep)
}

// step scrapes every member (concurrently) and returns the rows of the
// sample record and the findings: an episode of the p99 over the limit
// (or undecided) starts and ends, a member restarts, a scrape fails.
func (e *etcdWatch) step(ctx context.Context, t float64) ([]result.WatchEtcd, []finding) {
	snaps := make([]*etcdmetrics.Snapshot, len(e.members))
	errs := make([]error, len(e.members))
	var wg sync.WaitGroup
	for i, m := range e.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snaps[i], errs[i] = e.cfg.Client.Scrape(ctx, m.endpoint)
		}()
	}
	wg.Wait()
	var rows []result.WatchEtcd
	var fs []finding
	for i, m := range e.members {
		row, f := m.step(t, snaps[i], errs[i])
		rows = append(rows, row)
		fs = append(fs, f...)
	}
	return rows, fs
}

func (m *etcdMember) step(t float64, s *etcdmetrics.Snapshot, err error) (result.WatchEtcd, []finding) {
	lim := etcdmetrics.WALFsyncLimit()
	row := result.WatchEtcd{Endpoint: m.endpoint, LimitNs: lim.LimitS * 1e9, Verdict: etcdmetrics.VerdictNoData}
	var out []finding
	if err != nil {
		row.Verdict, row.Error = etcdmetrics.VerdictError, err.Error()
		if !m.failing {
			m.failing = true
			f := finding{Device: m.name, Finding: result.Finding{Kind: result.KindEtcd, Code: result.CodeEtcdScrape, Severity: analysis.SevWarn,
				Summary: "cannot read etcd's metrics: " + err.Error()}}
			f.StartS = &t
			out = append(out, f)
		}
		return row, out
	}
	m.failing = false
	v := m.window.Add(s)
	if v.Restarted {
		f := finding{Device: m.name, Finding: result.Finding{Kind: result.KindEtcd, Code: result.CodeEtcdRestart, Severity: analysis.SevInfo,
			Summary: "etcd restarted (or another member answered): the WAL fsync window starts again"}}
		f.StartS = &t
		out = append(out, f)
	}
	if !v.Ready {
		return row, append(out, m.transition(t, "", "")...)
	}
	j := v.WAL
	row.WindowS, row.Fsyncs, row.Verdict = v.WindowS, j.Count, j.Verdict
	row.P99Ns, row.P99LowerNs, row.P99UpperNs = j.P99Ns, j.P99LowerNs, j.P99UpperNs
	state := ""
	if j.Verdict == etcdmetrics.VerdictFail || j.Verdict == etcdmetrics.VerdictUndecided {
		state = j.Verdict
	}
	if state != m.state {
		out = append(out, m.transition(t, state, fmt.Sprintf("WAL fsync over the last %.0f s: %s", v.WindowS, j.Reason))...)
	}
	return row, out
}

// transition ends the episode in progress and starts the next, if any.
func (m *etcdMember) transition(t float64, state, reason string) []finding {
	if state == m.state {
		return nil
	}
	var out []finding
	if m.state != "" {
		d := t - m.since
		end := "WAL fsync p99 back under the limit"
		if state != "" {
			end = "WAL fsync p99 no longer " + m.state
		} else if reason == "" {
			end = "WAL fsync p99 no longer known (a restart or a failed scrape)"
		}
		out = append(out, m.finding("end", m.state, m.since, d, fmt.Sprintf("%s after %.0f s", end, d)))
	}
	if state != "" {
		out = append(out, m.finding("start", state, t, 0, reason))
	}
	m.state, m.since = state, t
	return out
}

func (m *etcdMember) finding(phase, verdict string, start, dur float64, summary string) finding {
	code := result.CodeEtcdFail
	if verdict == etcdmetrics.VerdictUndecided {
		code = result.CodeEtcdUndecided
	}
	f := finding{Device: m.name, Phase: phase, Finding: result.Finding{Kind: result.KindEtcd, Code: code, Severity: etcdmetrics.Severity(verdict),
		Dir: "sync", Summary: summary}}
	f.StartS = &start
	if phase == "end" {
		f.DurationS = &dur
	}
	return f
}

// withEtcd adds the members' rows to the interval's sample record and
// their findings after it.
func (w *Watcher) withEtcd(ctx context.Context, now time.Time, recs []result.WatchRecord) []result.WatchRecord {
	if w.etcd == nil || len(recs) == 0 || ctx.Err() != nil {
		return recs
	}
	t := now.Sub(w.start).Seconds()
	rows, fs := w.etcd.step(ctx, t)
	if ctx.Err() != nil {
		return recs // watching ended during the scrape: not the member's fault
	}
	recs[0].Etcd = rows
	for i := range fs {
		f := fs[i]
		recs = append(recs, result.WatchRecord{Schema: result.WatchSchema, Type: result.WatchTypeFinding, Time: now, T: t, Host: w.cfg.Host, Finding: &f})
	}
	return recs
}
