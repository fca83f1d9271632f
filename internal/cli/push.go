package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/metrics"
	"github.com/iolens/iolens/internal/result"
)

// checkPushURL refuses a --push URL that cannot be a Pushgateway before
// anything runs, rather than after a long benchmark.
func checkPushURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.RawQuery != "" {
		return &UsageError{Err: fmt.Errorf("--push %q: want the Pushgateway's http(s)://host:port", s), Help: "e.g. --push http://pushgateway.monitoring:9091"}
	}
	return nil
}

// pushGroups are a k8s run's push groups: one per storage class (the
// grouping label storage_class), the series told apart by node and PVC
// size. A run id is no part of them: the next run of a class replaces
// the class's figures.
func pushGroups(rs []result.Result) []metrics.PushGroup {
	return metrics.GroupBy(rs, "storage_class", "k8s.storage-class", map[string]string{"node": "k8s.node", "size": "k8s.size-requested"})
}

// pushK8sResults pushes results to the Pushgateway at url (nothing when
// url is empty). It runs even after Ctrl-C, with its own timeout, as the
// results it pushes are kept anyway.
func pushK8sResults(ctx context.Context, errOut io.Writer, url string, rs []result.Result) error {
	if url == "" || len(rs) == 0 {
		return nil
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	groups := pushGroups(rs)
	if err := metrics.Push(pctx, url, buildOf(), groups); err != nil {
		var pe *metrics.PushError
		if errors.As(err, &pe) {
			return &hint.Error{Err: err, Advice: pe.Hint()}
		}
		return err
	}
	fmt.Fprintf(errOut, "pushed %d results to %s (job %s, %d storage classes)\n", len(rs), url, metrics.PushJob, len(groups))
	return nil
}
