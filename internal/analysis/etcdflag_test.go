package analysis

import (
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// Issue 39.7: fio's fdatasync counter bug is evidence as a flag, never a
// "fio_sync_total_ios=0" that a page shows beside thousands of syncs.
func TestEtcdCounterBugIsAFlag(t *testing.T) {
	r := result.Result{Status: "ok", Test: result.TestSpec{RW: "write", BlockSize: 2300, Fdatasync: 1, IOEngine: "sync"},
		Sync: &result.DirResult{Lat: result.Latency{N: 10029, P99Ns: 5.9e6, MeanNs: 3.6e5}}, Fio: &result.FioInfo{SyncTotalIOsZero: true}}
	f, ok := EtcdVerdict(&r)
	if !ok {
		t.Fatal("no etcd verdict")
	}
	if _, there := f.Evidence["fio_sync_total_ios"]; there || f.Evidence["fio_sync_counter_bug"] != 1 || f.Evidence["syncs"] != 10029 {
		t.Errorf("evidence %v", f.Evidence)
	}
}
