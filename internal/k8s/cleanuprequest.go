package k8s

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/hint"
)

// CleanupRequest is what 'iolens k8s cleanup' asks for: the objects of
// run RunID, or with All of every run, in one namespace or with
// AllNamespaces in every one, which for every run needs Yes; all gone
// within Timeout.
type CleanupRequest struct {
	RunID                   string
	All, AllNamespaces, Yes bool
	Timeout                 time.Duration
}

// Check refuses a malformed request; every error is a *RequestError.
func (q CleanupRequest) Check() error {
	if (q.RunID == "") == !q.All {
		return badRequest("give either --run ID or --all")
	}
	if q.RunID != "" {
		if err := CheckRunID("--run", q.RunID); err != nil {
			return &RequestError{Err: err}
		}
	}
	if q.Timeout <= 0 {
		return badRequest("--timeout %s: must be positive", q.Timeout)
	}
	return nil
}

// Run deletes what q asks for in ns, under a context of its own that
// ctx's end does not cancel (a Ctrl-C still cleans up), and writes on out
// the PVs kept by their reclaim policy and "nothing left" when nothing
// is; progress gets each step. Every run across every namespace without
// Yes deletes nothing: it lists on out what it would delete, and is a
// *RequestError.
func (q CleanupRequest) Run(ctx context.Context, c *Client, ns string, out io.Writer, progress func(string)) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.Timeout)
	defer cancel()
	if q.AllNamespaces {
		ns = ""
	}
	if q.RunID == "" && q.AllNamespaces && !q.Yes {
		// Every namespace is a wide net: show the catch first.
		l, err := FindLeftovers(ctx, c.CS, "", "")
		if err != nil {
			return err
		}
		if l.Objects() == 0 {
			fmt.Fprintln(out, "nothing left")
			return nil
		}
		l.WriteText(out)
		return badRequest("--all -A would delete the %d objects above in namespaces %s: add --yes",
			l.Objects(), strings.Join(l.Namespaces(), ", "))
	}
	left, err := Cleanup(ctx, c, ns, q.RunID, progress)
	for _, pv := range left.Retained {
		fmt.Fprintf(out, "PV %s kept by its Retain reclaim policy (delete with 'kubectl delete pv %s')\n", pv, pv)
	}
	if err != nil {
		return &hint.Error{Err: fmt.Errorf("cleanup: %w", err), Advice: "run it again; objects stuck in Terminating usually wait for a finalizer (a pod still using the PVC, or a CSI driver)"}
	}
	if n := left.Objects(); n > 0 {
		return fmt.Errorf("cleanup: %d objects still there: %v %v %v %v", n, left.Jobs, left.Pods, left.PVCs, left.ConfigMaps)
	}
	fmt.Fprintln(out, "nothing left")
	return nil
}
