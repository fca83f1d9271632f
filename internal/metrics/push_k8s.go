package metrics

import (
	"context"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// PushByStorageClass pushes a run's results to the Pushgateway at url, one
// group per storage class (the grouping label storage_class), the series
// told apart by node and PVC size. A run id is no part of them: the next
// run of a class replaces the class's figures. It goes on after ctx ends,
// with a minute of its own, as the results it pushes are kept anyway. It
// returns how many groups it pushed.
func PushByStorageClass(ctx context.Context, url string, b Build, rs []result.Result) (int, error) {
	if url == "" || len(rs) == 0 {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	groups := groupBy(rs, "storage_class", "k8s.storage-class", map[string]string{"node": "k8s.node", "size": "k8s.size-requested"})
	return len(groups), Push(ctx, url, b, groups)
}
