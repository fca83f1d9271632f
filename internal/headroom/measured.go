package headroom

import (
	"context"
	"sort"
	"time"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
)

// MeasuredCaps gives a storage class's caps from its latest measurement
// in the history (iolens k8s diagnose or k8s run of the class): of the
// results of the class (results), one run and volume at a time, the
// latest first, the IOPS and MB/s ceilings whose diagnosis (diagnose)
// found held by a cap, the higher of reads and writes (each measured
// alone; a cloud cap counts both). A class whose runs found no cap
// gives none.
func MeasuredCaps(results func(ctx context.Context, class string) ([]result.Result, error), diagnose func([]result.Result) diagnosis.Diagnosis) func(context.Context, string) (*Cap, error) {
	return func(ctx context.Context, class string) (*Cap, error) {
		rs, err := results(ctx, class)
		if err != nil {
			return nil, err
		}
		groups := map[string][]result.Result{}
		last := map[string]time.Time{}
		for _, r := range rs {
			if r.Target.Labels["k8s.storage-class"] != class {
				continue
			}
			k := r.RunID + "\x00" + r.Target.Labels["k8s.pv"]
			groups[k] = append(groups[k], r)
			if r.End.After(last[k]) {
				last[k] = r.End
			}
		}
		keys := make([]string, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if !last[keys[i]].Equal(last[keys[j]]) {
				return last[keys[i]].After(last[keys[j]])
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			d := diagnose(groups[k])
			var iops, bw float64
			for _, dir := range []*diagnosis.Direction{d.Disk.Read, d.Disk.Write} {
				if dir == nil {
					continue
				}
				if dir.IOPSLimit == result.CodeIOPSCap {
					iops = max(iops, dir.IOPS)
				}
				if dir.BWLimit == result.CodeBandwidthCap {
					bw = max(bw, dir.BWBytes)
				}
			}
			if iops > 0 || bw > 0 {
				return &Cap{Name: "measured by run " + groups[k][0].RunID + " on " + last[k].UTC().Format("2006-01-02"),
					Source: SourceHistory, IOPS: iops, BWBytes: bw}, nil
			}
		}
		return nil, nil
	}
}
