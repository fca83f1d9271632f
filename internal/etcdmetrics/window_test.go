package etcdmetrics

import (
	"testing"
	"time"
)

func snapAt(t0 time.Time, s float64, start time.Time, wal Histogram) *Snapshot {
	return &Snapshot{Time: t0.Add(time.Duration(s * float64(time.Second))), StartTime: start, MemberID: "a1", WALFsync: wal, BackendCommit: etcdHist()}
}

func TestWindow(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	start := t0.Add(-time.Hour)
	w := Window{Span: 10 * time.Second}
	// Every second 100 fast fsyncs; from t=20 s on, 5 of them over 16 ms.
	fast, slowN := 0.0, 0.0
	var last WindowView
	for s := 0; s <= 40; s++ {
		if s > 0 {
			if s > 20 {
				fast += 95
				slowN += 5
			} else {
				fast += 100
			}
		}
		last = w.Add(snapAt(t0, float64(s), start, etcdHist(fast, 0, 0, 0, 0, slowN)))
		switch {
		case s == 0 && last.Ready:
			t.Fatal("ready after one scrape")
		case s == 5 && (last.WindowS != 5 || last.WAL.Count != 500 || last.WAL.Verdict != VerdictPass):
			t.Errorf("t=5: filling window %v s, %v fsyncs, %s", last.WindowS, last.WAL.Count, last.WAL.Verdict)
		case s == 15 && (last.WindowS != 10 || last.WAL.Count != 1000 || last.WAL.Verdict != VerdictPass):
			t.Errorf("t=15: window %v s, %v fsyncs, %s", last.WindowS, last.WAL.Count, last.WAL.Verdict)
		case s == 22 && (last.WAL.Count != 1000 || last.WAL.Verdict != VerdictPass):
			// (12, 22]: 990 fast and 10 slow, exactly 1%: the p99 (rank
			// 990) is the last fast one.
			t.Errorf("t=22: %v fsyncs, %s (%s), want pass", last.WAL.Count, last.WAL.Verdict, last.WAL.Reason)
		case s == 23 && last.WAL.Verdict != VerdictFail:
			t.Errorf("t=23: %s (%s), want fail: 1.5%% over 16 ms", last.WAL.Verdict, last.WAL.Reason)
		case s == 30 && last.WAL.Verdict != VerdictFail:
			t.Errorf("t=30: %s (%s), want fail: 5%% over 16 ms", last.WAL.Verdict, last.WAL.Reason)
		}
	}
	if len(w.snaps) > 12 {
		t.Errorf("holds %d scrapes for a 10 s window at 1 s", len(w.snaps))
	}
	// A restart: counts go down. The window starts again.
	if v := w.Add(snapAt(t0, 41, t0.Add(40*time.Second), etcdHist(10))); !v.Restarted || v.Ready {
		t.Errorf("after a restart: %+v", v)
	}
	if v := w.Add(snapAt(t0, 42, t0.Add(40*time.Second), etcdHist(110))); !v.Ready || v.WAL.Count != 100 || v.WindowS != 1 {
		t.Errorf("after the restart: %+v", v)
	}
	// Another member answering is a restart of the window too.
	other := snapAt(t0, 43, t0.Add(40*time.Second), etcdHist(200))
	other.MemberID = "b2"
	if v := w.Add(other); !v.Restarted {
		t.Errorf("another member: %+v", v)
	}
}

func TestWindowBounded(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	w := Window{Span: 24 * time.Hour}
	for i := range maxWindowSnaps + 100 {
		w.Add(snapAt(t0, float64(i)/10, time.Time{}, etcdHist(float64(i))))
	}
	if len(w.snaps) != maxWindowSnaps {
		t.Errorf("%d scrapes held", len(w.snaps))
	}
}
