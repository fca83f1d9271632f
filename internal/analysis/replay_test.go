package analysis

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// replayRun is a run of a suite with a QD sweep (a 5000 IOPS cap over a
// 0.2 ms device), a larger-block test after it and a repeated test whose
// repeats disagree, in the runner's order: every test, then again.
func replayRun() (result.Suite, int, []result.Result) {
	var suite result.Suite
	suite.Name = "replay"
	for _, qd := range []int{1, 2, 4, 8, 16, 32} {
		suite.Tests = append(suite.Tests, result.TestSpec{Name: fmt.Sprintf("randread-4k-qd%d", qd), RW: "randread", BlockSize: 4096,
			IODepth: qd, NumJobs: 1, Direct: true, Group: SweepPrefix + "randread-4k"})
	}
	suite.Tests = append(suite.Tests,
		result.TestSpec{Name: "seqread-1m", RW: "read", BlockSize: 1 << 20, IODepth: 8, NumJobs: 1, Direct: true},
		result.TestSpec{Name: "randwrite-4k-qd1", RW: "randwrite", BlockSize: 4096, IODepth: 1, NumJobs: 1, Direct: true})
	const repeats = 2
	var rs []result.Result
	for rep := 1; rep <= repeats; rep++ {
		for i, t := range suite.Tests {
			q := float64(t.IODepth)
			iops := min(q/0.0002, 5000)
			if t.BlockSize == 1<<20 {
				iops = 200
			}
			if t.Name == "randwrite-4k-qd1" && rep == 2 {
				iops *= 0.5 // repeats that disagree
			}
			d := &result.DirResult{IOPS: iops, BWBytes: iops * float64(t.BlockSize), RuntimeMs: 10000,
				Lat: result.Latency{N: uint64(iops * 10), MeanNs: q / iops * 1e9}}
			r := result.Result{RunID: "run-1", Suite: suite.Name, Status: "ok", Index: i + 1, Repeat: rep, Test: t,
				Target: result.Target{Kind: "dir", Path: "/mnt/disk"}}
			if t.RW == "randwrite" {
				r.Write = d
			} else {
				r.Read = d
			}
			rs = append(rs, r)
		}
	}
	return suite, repeats, rs
}

// 'iolens analyze' reads a saved run as the live run did: the results
// added one by one to a Session, then read again over the whole run at
// its end, give every result the same findings as Annotate's replay of
// the same results.
func TestAnnotateAgreesWithLiveRun(t *testing.T) {
	suite, repeats, rs := replayRun()
	live := make([]result.Result, len(rs))
	copy(live, rs)
	s := NewSession(suite, repeats)
	for i := range live {
		s.Add(&live[i])
	}
	Revise(live)

	replayed := make([]result.Result, len(rs))
	copy(replayed, rs)
	for i := range replayed {
		// What a saved file holds: the findings of some earlier analysis.
		replayed[i].Findings = []result.Finding{{Kind: result.KindStall, Code: "stale"}}
	}
	Annotate(replayed)

	kinds := map[string]int{}
	for i := range live {
		for _, f := range live[i].Findings {
			kinds[f.Kind]++
		}
		if !reflect.DeepEqual(live[i].Findings, replayed[i].Findings) {
			t.Errorf("%s #%d:\n live     %s\n analyze  %s", live[i].Test.Name, live[i].Repeat, findingList(live[i].Findings), findingList(replayed[i].Findings))
		}
	}
	// The run has what makes the orders matter: a sweep, unstable
	// repeats, limits and the model.
	for _, k := range []string{result.KindQD, result.KindUnstable, result.KindLimit, result.KindModel} {
		if kinds[k] == 0 {
			t.Errorf("the live run has no %s finding: %v", k, kinds)
		}
	}
}

func findingList(fs []result.Finding) string {
	var out string
	for _, f := range fs {
		out += fmt.Sprintf("[%s %s %s] ", f.Kind, f.Dir, f.Code)
	}
	return out
}
