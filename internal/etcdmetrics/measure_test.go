package etcdmetrics

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// fakePage writes an etcd-like page: etcd's 14 buckets with the given
// per-bucket counts (not cumulative), the member's id and start time.
func fakePage(start float64, id string, wal, commit []float64) string {
	var b strings.Builder
	for _, m := range []struct {
		name   string
		counts []float64
	}{{WALFsyncMetric, wal}, {BackendCommitMetric, commit}} {
		fmt.Fprintf(&b, "# TYPE %s histogram\n", m.name)
		h := etcdHist(m.counts...)
		for _, bk := range h.Buckets {
			fmt.Fprintf(&b, "%s_bucket{le=%q} %v\n", m.name, formatLe(bk.UpperBound), bk.Count)
		}
		fmt.Fprintf(&b, "%s_sum %v\n%s_count %v\n", m.name, h.Sum, m.name, h.Total())
	}
	fmt.Fprintf(&b, "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %v\n", start)
	fmt.Fprintf(&b, "# TYPE etcd_server_id gauge\netcd_server_id{server_id=%q} 1\n", id)
	b.WriteString("# TYPE etcd_server_version gauge\netcd_server_version{server_version=\"3.4.23\"} 1\n")
	b.WriteString("# TYPE etcd_server_is_leader gauge\netcd_server_is_leader 0\n")
	return b.String()
}

// pages serves the given pages in turn, the last one from then on.
func pages(t *testing.T, ps ...string) string {
	t.Helper()
	var mu sync.Mutex
	i := 0
	return serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		p := ps[min(i, len(ps)-1)]
		i++
		mu.Unlock()
		text(p)(w, r)
	}).URL
}

func measure(t *testing.T, interval time.Duration, urls ...string) *Report {
	t.Helper()
	rep, err := Measure(context.Background(), client(t, ClientOptions{Timeout: 2 * time.Second}), Options{Endpoints: urls, Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

var t0 = float64(time.Now().Add(-time.Hour).Unix())

// Slow history (200 fsyncs over 16 ms since start), then 1000 fast ones.
var (
	slow    = []float64{800, 0, 0, 0, 0, 200}
	slowFst = []float64{1800, 0, 0, 0, 0, 200}
	quiet   = []float64{10}
)

func TestMeasureOnce(t *testing.T) {
	rep := measure(t, 0, pages(t, fakePage(t0, "a1", slow, quiet)))
	m := rep.Members[0]
	if rep.Verdict != VerdictFail || m.Verdict != VerdictFail || m.Over != OverSinceStart {
		t.Fatalf("verdict %s / %s over %s: %s", rep.Verdict, m.Verdict, m.Over, rep.Reason)
	}
	if m.WindowS == nil || math.Abs(*m.WindowS-3600) > 60 || m.MemberID != "a1" || m.Version != "3.4.23" || m.Leader == nil || *m.Leader {
		t.Errorf("member %+v", m)
	}
	if m.WALFsync.Count != 1000 || m.BackendCommit.Verdict != VerdictPass {
		t.Errorf("WAL %+v, commit %+v", m.WALFsync, m.BackendCommit)
	}
	if len(rep.Notes) != 2 || !strings.Contains(rep.Notes[0], "1, 2, 4, 8, 16") {
		t.Errorf("notes %q", rep.Notes)
	}
}

// Between two scrapes only the new observations count: the history's
// slow fsyncs fail the single scrape, the 1000 fast ones in between pass.
func TestMeasureInterval(t *testing.T) {
	rep := measure(t, 50*time.Millisecond, pages(t, fakePage(t0, "a1", slow, quiet), fakePage(t0, "a1", slowFst, quiet)))
	m := rep.Members[0]
	if m.Verdict != VerdictPass || m.Over != OverInterval || m.Restarted {
		t.Fatalf("%s over %s: %s", m.Verdict, m.Over, m.Reason)
	}
	if m.WALFsync.Verdict != VerdictPass || m.WALFsync.Count != 1000 || m.BackendCommit.Verdict != VerdictNoData {
		t.Errorf("WAL %s %v, commit %s", m.WALFsync.Verdict, m.WALFsync.Count, m.BackendCommit.Verdict)
	}
	if m.WindowS == nil || *m.WindowS < 0.05 || *m.WindowS > 5 {
		t.Errorf("window %v", m.WindowS)
	}
}

func TestMeasureRestart(t *testing.T) {
	tests := []struct {
		name       string
		second     string
		walVerdict string
	}{
		// Fewer fsyncs than before: the counters started again.
		{"counts down", fakePage(t0+3000, "a1", []float64{0, 0, 0, 0, 0, 50}, quiet), VerdictFail},
		// More, but a new start time: a restart too (the history since
		// the restart, 20 s, is judged).
		{"new start time", fakePage(float64(time.Now().Add(-20*time.Second).Unix()), "a1", []float64{5000}, quiet), VerdictPass},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := measure(t, 20*time.Millisecond, pages(t, fakePage(t0, "a1", slow, quiet), tc.second)).Members[0]
			if !m.Restarted || m.Over != OverSinceRestart || m.WALFsync.Verdict != tc.walVerdict {
				t.Fatalf("restarted %v over %s WAL %s: %s", m.Restarted, m.Over, m.WALFsync.Verdict, m.Reason)
			}
			found := false
			for _, f := range m.Findings {
				found = found || f.Code == result.CodeEtcdRestart && strings.Contains(f.Summary, "restarted between the scrapes")
			}
			if !found {
				t.Errorf("no restart finding in %+v", m.Findings)
			}
		})
	}
	// Another member behind the same address (a load balancer).
	m := measure(t, 20*time.Millisecond, pages(t, fakePage(t0, "a1", slow, quiet), fakePage(t0, "b2", slowFst, quiet))).Members[0]
	if m.Verdict != VerdictError || !strings.Contains(m.Error, "member a1 answered the first scrape and member b2 the second") || !strings.Contains(m.Hint, "load balancer") {
		t.Errorf("%s: %s (%s)", m.Verdict, m.Error, m.Hint)
	}
}

// Three members: one passes, one fails, one cannot be reached. The
// cluster fails; the unreachable one says why.
func TestMeasureCluster(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	gone := "http://" + l.Addr().String()
	l.Close()
	good := pages(t, fakePage(t0, "a1", []float64{1000}, quiet))
	bad := pages(t, fakePage(t0, "b2", slow, quiet))
	rep := measure(t, 0, good, bad, gone)
	got := []string{rep.Members[0].Verdict, rep.Members[1].Verdict, rep.Members[2].Verdict}
	if got[0] != VerdictPass || got[1] != VerdictFail || got[2] != VerdictError || rep.Verdict != VerdictFail {
		t.Fatalf("verdicts %v, cluster %s", got, rep.Verdict)
	}
	if !strings.HasPrefix(rep.Reason, bad+": WAL fsync") {
		t.Errorf("reason %q", rep.Reason)
	}
	if rep.Members[2].Hint == "" || !strings.Contains(rep.Members[2].Error, "connection refused") {
		t.Errorf("unreachable member %+v", rep.Members[2])
	}
	// Without the failing member, the unreachable one makes it an error.
	if rep := measure(t, 0, good, gone); rep.Verdict != VerdictError {
		t.Errorf("pass + unreachable: %s", rep.Verdict)
	}
	// The JSON has a verdict per member and overall, and encodes.
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Verdict string
		Members []struct {
			Verdict  string
			WALFsync *struct {
				Verdict string
				P99Ns   *float64 `json:"p99_ns"`
			} `json:"wal_fsync"`
		}
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Verdict != VerdictFail || back.Members[1].Verdict != VerdictFail || back.Members[1].WALFsync.P99Ns == nil || back.Members[2].WALFsync != nil {
		t.Errorf("JSON %s", b)
	}
}

// Ctrl-C while waiting for the second scrape ends at once.
func TestMeasureCancelled(t *testing.T) {
	u := pages(t, fakePage(t0, "a1", slow, quiet))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := Measure(ctx, client(t, ClientOptions{}), Options{Endpoints: []string{u}, Interval: time.Minute})
	if err != context.Canceled || time.Since(start) > 5*time.Second {
		t.Errorf("%v after %v", err, time.Since(start))
	}
}

func TestWriteText(t *testing.T) {
	rep := measure(t, 0, pages(t, fakePage(t0, "a1", []float64{900, 50, 25, 10, 15}, quiet)))
	var b strings.Builder
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"1 member, one scrape", "member a1", "WAL fsync", "1000 fsyncs", "(8-16 ms)", "UNDECIDED",
		"the histogram cannot tell", "verdict: UNDECIDED", "histogram_quantile"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// Other buckets on the second scrape: a different etcd (an upgrade is a
// restart and is judged since it; the same process cannot change them).
func TestMeasureBucketsChange(t *testing.T) {
	first := fakePage(t0, "a1", slow, quiet)
	other := strings.ReplaceAll(fakePage(t0, "a1", slowFst, quiet), `le="0.001"`, `le="0.0005"`)
	m := measure(t, 20*time.Millisecond, pages(t, first, other)).Members[0]
	if m.Verdict != VerdictError || !strings.Contains(m.Error, "buckets changed") {
		t.Errorf("same process, other buckets: %s %q", m.Verdict, m.Error)
	}
	upgraded := strings.ReplaceAll(fakePage(t0+3000, "a1", []float64{100}, quiet), `le="0.001"`, `le="0.0005"`)
	m = measure(t, 20*time.Millisecond, pages(t, first, upgraded)).Members[0]
	if !m.Restarted || m.Verdict != VerdictPass {
		t.Errorf("upgraded: restarted %v, %s %q", m.Restarted, m.Verdict, m.Reason)
	}
}
