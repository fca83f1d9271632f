package result

import (
	"slices"
	"strings"

	"github.com/iolens/iolens/internal/units"
)

// The states of a run, as every listing shows them.
const (
	// RunComplete: every test the run started ended with figures.
	RunComplete = "complete"
	// RunInterrupted: the run was stopped (Ctrl-C, SIGTERM) before it
	// ended; what it kept is partial.
	RunInterrupted = "interrupted"
	// RunPartial: the run ended, but some of its tests failed.
	RunPartial = "partial"
	// RunFailed: no test of the run ended with figures.
	RunFailed = "failed"
)

// RunStatus is what became of a run, read off its results: one of the
// Run* states and, except for a complete run, why.
type RunStatus struct {
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

func (s RunStatus) String() string {
	if s.Reason == "" {
		return s.State
	}
	return s.State + ": " + s.Reason
}

// Interrupted says the result carries the mark of a run stopped part way.
func (r *Result) Interrupted() bool { return slices.Contains(r.Notes, NoteInterrupted) }

// StatusOf is the status of a run from its counts: its results, those
// that failed and those marked interrupted (Result.Interrupted). The
// history keeps these counts, so a listing needs no record.
func StatusOf(tests, failed, interrupted int) RunStatus {
	switch {
	case interrupted > 0:
		why := "stopped part way; " + units.Nouns(int64(tests), "test", "tests") + " kept"
		if failed > 0 {
			why += ", " + units.Commas(int64(failed)) + " of them failed"
		}
		return RunStatus{State: RunInterrupted, Reason: why}
	case tests == 0:
		return RunStatus{State: RunFailed, Reason: "no results"}
	case failed >= tests:
		return RunStatus{State: RunFailed, Reason: "all " + units.Nouns(int64(tests), "test", "tests") + " failed"}
	case failed > 0:
		return RunStatus{State: RunPartial, Reason: units.Commas(int64(failed)) + " of " + units.Nouns(int64(tests), "test", "tests") + " failed"}
	}
	return RunStatus{State: RunComplete}
}

// StatusOfResults is StatusOf counted over rs (the results of one run).
func StatusOfResults(rs []Result) RunStatus {
	failed, interrupted := 0, 0
	for i := range rs {
		if rs[i].Status != "ok" {
			failed++
		}
		if rs[i].Interrupted() {
			interrupted++
		}
	}
	return StatusOf(len(rs), failed, interrupted)
}

// PlainFio says whether r was read from plain fio output (fio's own JSON
// or text, not an iolens record): such results carry no run of their own,
// and the files read together are read as one sweep.
func (r *Result) PlainFio() bool {
	return r.Suite == "fio" && strings.HasPrefix(r.RunID, "fio:")
}

// Subset runs fn on the results of rs that keep selects, as one slice
// in their order, and puts them back in place. It says whether keep
// selected any (fn is not called on none).
func Subset(rs []Result, keep func(*Result) bool, fn func([]Result)) bool {
	var at []int
	for i := range rs {
		if keep(&rs[i]) {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return false
	}
	sub := make([]Result, len(at))
	for k, i := range at {
		sub[k] = rs[i]
	}
	fn(sub)
	for k, i := range at {
		rs[i] = sub[k]
	}
	return true
}
