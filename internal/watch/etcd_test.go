package watch

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/etcdmetrics"
	"github.com/iolens/iolens/internal/result"
)

// walSnap is a scrape whose WAL histogram has fast fsyncs (at most 1 ms)
// and slow ones (16-32 ms), on etcd's buckets.
func walSnap(at time.Time, start time.Time, fast, slow float64) *etcdmetrics.Snapshot {
	var h etcdmetrics.Histogram
	bound := 0.001
	for i := range 14 {
		c := fast
		if i >= 5 {
			c += slow
		}
		h.Buckets = append(h.Buckets, etcdmetrics.Bucket{UpperBound: bound, Count: c})
		bound *= 2
	}
	h.Buckets = append(h.Buckets, etcdmetrics.Bucket{UpperBound: math.Inf(1), Count: fast + slow})
	empty := etcdmetrics.Histogram{Buckets: []etcdmetrics.Bucket{{UpperBound: 0.001}, {UpperBound: math.Inf(1)}}}
	return &etcdmetrics.Snapshot{Time: at, StartTime: start, WALFsync: h, BackendCommit: empty}
}

// A member's WAL goes over the limit for a while and back: one episode,
// started and ended, with its duration; a failed scrape and a restart are
// said once each.
func TestEtcdMemberEpisodes(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	start := t0.Add(-time.Hour)
	m := &etcdMember{endpoint: "http://10.0.0.1:2379", name: etcdName("http://10.0.0.1:2379"), window: etcdmetrics.Window{Span: 5 * time.Second}}
	fast, slow := 0.0, 0.0
	var log []finding
	var rows []result.WatchEtcd
	for s := 0; s <= 40; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		var snap *etcdmetrics.Snapshot
		var err error
		switch {
		case s == 30:
			err = fmt.Errorf("connection refused")
		case s == 31:
			err = fmt.Errorf("connection refused") // said once
		case s >= 35:
			// restarted at t=34: counts start again
			fast += 100
			snap = walSnap(at, t0.Add(34*time.Second), fast-3500, 0)
		default:
			fast += 100
			if s > 10 && s <= 20 {
				fast -= 10
				slow += 10 // 10% slow: over the limit
			}
			snap = walSnap(at, start, fast, slow)
		}
		row, fs := m.step(float64(s), snap, err)
		rows = append(rows, row)
		log = append(log, fs...)
	}
	var got []string
	for _, f := range log {
		d := ""
		if f.DurationS != nil {
			d = fmt.Sprintf(" %.0fs", *f.DurationS)
		}
		got = append(got, fmt.Sprintf("%.0f %s %s%s", *f.StartS, f.Code, f.Phase, d))
		if f.Device != "etcd 10.0.0.1:2379" || f.Kind != result.KindEtcd {
			t.Errorf("finding %+v", f)
		}
	}
	// Slow fsyncs in the scrapes of t=11 to 20: the 5 s window fails
	// from t=11 until t=25, when the window (20, 25] no longer holds them.
	want := []string{"11 etcd-fail start", "11 etcd-fail end 14s", "30 etcd-scrape-failed ", "35 etcd-restarted "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("findings\n %q\nwant\n %q", got, want)
	}
	if r := rows[15]; r.Verdict != etcdmetrics.VerdictFail || r.Fsyncs != 500 || r.WindowS != 5 || r.P99LowerNs == nil || *r.P99LowerNs != 16e6 {
		t.Errorf("row at t=15: %+v", r)
	}
	if r := rows[30]; r.Verdict != etcdmetrics.VerdictError || !strings.Contains(r.Error, "refused") {
		t.Errorf("row at t=30: %+v", r)
	}
	if r := rows[35]; r.Verdict != etcdmetrics.VerdictNoData {
		t.Errorf("row after the restart: %+v", r)
	}
}

// The watcher's records carry the rows, scraped over HTTP.
func TestWithEtcd(t *testing.T) {
	page := "# TYPE etcd_disk_wal_fsync_duration_seconds histogram\n" +
		"etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 5\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 5\n" +
		"etcd_disk_wal_fsync_duration_seconds_sum 0.001\netcd_disk_wal_fsync_duration_seconds_count 5\n" +
		"# TYPE etcd_disk_backend_commit_duration_seconds histogram\n" +
		"etcd_disk_backend_commit_duration_seconds_bucket{le=\"0.001\"} 1\netcd_disk_backend_commit_duration_seconds_bucket{le=\"+Inf\"} 1\n" +
		"etcd_disk_backend_commit_duration_seconds_sum 0.0001\netcd_disk_backend_commit_duration_seconds_count 1\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, page) }))
	defer srv.Close()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	gone := "http://" + l.Addr().String()
	l.Close()
	c, err := etcdmetrics.NewClient(etcdmetrics.ClientOptions{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := &Watcher{etcd: newEtcdWatch(Etcd{Client: c, Endpoints: []string{srv.URL, gone}}), start: time.Now()}
	recs := w.withEtcd(context.Background(), time.Now(), []result.WatchRecord{{Type: result.WatchTypeSample}})
	if len(recs) != 2 || len(recs[0].Etcd) != 2 {
		t.Fatalf("records %+v", recs)
	}
	if e := recs[0].Etcd[0]; e.Verdict != etcdmetrics.VerdictNoData || e.Error != "" {
		t.Errorf("first scrape of a member: %+v", e)
	}
	if e := recs[0].Etcd[1]; e.Verdict != etcdmetrics.VerdictError || !strings.Contains(e.Error, "connection refused") {
		t.Errorf("unreachable member: %+v", e)
	}
	if f := recs[1].Finding; f == nil || f.Code != result.CodeEtcdScrape {
		t.Errorf("finding %+v", recs[1])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if recs := w.withEtcd(ctx, time.Now(), []result.WatchRecord{{Type: result.WatchTypeSample}}); len(recs) != 1 || recs[0].Etcd != nil {
		t.Errorf("after the end: %+v", recs)
	}
}
