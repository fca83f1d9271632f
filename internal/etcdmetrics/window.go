package etcdmetrics

import (
	"errors"
	"time"
)

// maxWindowSnaps bounds what a Window holds, whatever its span and the
// scrape interval: past it the oldest scrapes go and the window shortens.
const maxWindowSnaps = 4096

// Window keeps one member's recent scrapes, for the WAL fsync p99 over a
// sliding window: the observations between the newest scrape and the
// newest one at least Span older.
type Window struct {
	Span  time.Duration
	snaps []*Snapshot
}

// WindowView is the window's state after a scrape.
type WindowView struct {
	// Ready is false until two scrapes of the same process are held.
	Ready bool
	// Restarted: the member restarted (or another answered) since the
	// last scrape, and the window starts again.
	Restarted bool
	// WindowS is the time the judged observations span; shorter than the
	// window's span while it fills.
	WindowS float64
	WAL     Judgement
}

// Add takes the next scrape of the member and judges the window.
func (w *Window) Add(s *Snapshot) WindowView {
	if len(w.snaps) > 0 && !sameProcess(w.snaps[len(w.snaps)-1], s) {
		w.snaps = append(w.snaps[:0], s)
		return WindowView{Restarted: true}
	}
	w.snaps = append(w.snaps, s)
	if len(w.snaps) > maxWindowSnaps {
		w.snaps = append(w.snaps[:0], w.snaps[len(w.snaps)-maxWindowSnaps:]...)
	}
	if len(w.snaps) < 2 {
		return WindowView{}
	}
	base := 0
	cut := s.Time.Add(-w.Span)
	for i := len(w.snaps) - 2; i >= 0; i-- {
		if !w.snaps[i].Time.After(cut) {
			base = i
			break
		}
	}
	if base > 0 {
		w.snaps = append(w.snaps[:0], w.snaps[base:]...)
	}
	b := w.snaps[0]
	d, err := s.WALFsync.Sub(b.WALFsync)
	if err != nil { // checked by sameProcess; kept for safety
		w.snaps = append(w.snaps[:0], s)
		return WindowView{Restarted: true}
	}
	return WindowView{Ready: true, WindowS: s.Time.Sub(b.Time).Seconds(), WAL: Judge(d, WALFsyncLimit())}
}

// sameProcess is false when b cannot follow a: another member, a new
// start time, or counters that went down.
func sameProcess(a, b *Snapshot) bool {
	if a.MemberID != "" && b.MemberID != "" && a.MemberID != b.MemberID {
		return false
	}
	if !a.StartTime.IsZero() && !b.StartTime.IsZero() && (b.StartTime.Sub(a.StartTime) > time.Second || a.StartTime.Sub(b.StartTime) > time.Second) {
		return false
	}
	_, err := b.WALFsync.Sub(a.WALFsync)
	return !errors.Is(err, ErrReset) && !errors.Is(err, ErrLayout)
}
