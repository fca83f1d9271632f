package etcdmetrics

import (
	"fmt"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// fioLimit is etcd's guidance for a fio test of its disk: WAL fdatasync
// p99 under 10 ms.
const fioLimit = 10 * time.Millisecond

// FioVerdict is the etcd verdict line of the first successful fdatasync
// result among rs ('iolens k8s node-check'), "" when there is none.
func FioVerdict(rs []result.Result) string {
	for _, r := range rs {
		if r.Sync == nil || r.Status != "ok" {
			continue
		}
		p99 := time.Duration(r.Sync.Lat.P99Ns)
		verdict := "OK for etcd"
		if p99 >= fioLimit {
			verdict = "TOO SLOW for etcd"
		}
		return fmt.Sprintf("etcd verdict: %s: fdatasync p99 %s (limit %d ms), p99.9 %s, %.0f syncs/s on %s",
			verdict, units.Measure(float64(p99), "ns"), fioLimit.Milliseconds(), units.Measure(r.Sync.Lat.P999Ns, "ns"), r.Sync.IOPS, r.Target.Path)
	}
	return ""
}
