package k8s

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// cleanupStack undoes what a target created, newest first.
type cleanupStack []cleanupStep

type cleanupStep struct {
	name string
	fn   func(context.Context) error
}

func (s *cleanupStack) push(name string, fn func(context.Context) error) {
	*s = append(*s, cleanupStep{name, fn})
}

func (s cleanupStack) names() string {
	var n []string
	for i := len(s) - 1; i >= 0; i-- {
		n = append(n, s[i].name)
	}
	return strings.Join(n, ", ")
}

// run runs every step even when one fails, and reports every failure.
func (s cleanupStack) run(ctx context.Context) error {
	var errs []error
	for i := len(s) - 1; i >= 0; i-- {
		if err := s[i].fn(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s[i].name, err))
		}
	}
	return errors.Join(errs...)
}

var background = metav1.DeletePropagationBackground

// deleteJob deletes the Job and its pods and waits until they are gone: the
// PVC is only released once no pod uses it.
func (st *target) deleteJob(ctx context.Context, name string) error {
	c := st.r.Client
	return deleteJobAndPods(ctx, c, st.r.Config.Namespace, name, targetSelector(st.r.Config.RunID, st.t.ID))
}

// podDeleteOptions deletes a pod gracefully, or at once when its node is
// gone or not ready: no kubelet would ever confirm a graceful deletion,
// and the pod, and so its volume, would stay. A kubelet that comes back
// stops the pod's containers itself.
func podDeleteOptions(ctx context.Context, cs kubernetes.Interface, p *corev1.Pod) metav1.DeleteOptions {
	if p.Spec.NodeName == "" {
		return metav1.DeleteOptions{}
	}
	if lost := nodeLost(ctx, cs, p.Spec.NodeName); lost != nil {
		zero := int64(0)
		return metav1.DeleteOptions{GracePeriodSeconds: &zero}
	}
	return metav1.DeleteOptions{}
}

func deleteJobAndPods(ctx context.Context, c *Client, ns, name, podSelector string) error {
	cs := c.CS
	err := cs.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting: %w", err)
	}
	// The garbage collector deletes the pods too, but not at once; deleting
	// them here makes the PVC free sooner and does not depend on it.
	var errs []error
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: podSelector})
	if err != nil {
		errs = append(errs, fmt.Errorf("listing its pods: %w", err))
	} else {
		for _, p := range pods.Items {
			if err := cs.CoreV1().Pods(ns).Delete(ctx, p.Name, podDeleteOptions(ctx, cs, &p)); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting pod %s: %w", p.Name, err))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return waitGone(ctx, c, "job "+name, func(ctx context.Context) (bool, error) {
		_, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil || !apierrors.IsNotFound(err) {
			return false, ignoreNotFound(err)
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: podSelector})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 0, nil
	})
}

// deleteClaim deletes the PVC, waits until it is gone, then waits for its
// PV: a Delete policy removes it, a Retain policy keeps it and it is
// reported by name.
func (st *target) deleteClaim(ctx context.Context, name string) error {
	retained, pending, err := deleteClaim(ctx, st.r.Client, st.r.Config.Namespace, name, !st.nodeLost)
	st.out.Retained = append(st.out.Retained, retained...)
	if pending != "" {
		st.out.PendingPV = pending
		st.r.event(Event{Target: st.t, Phase: PhaseInfo, Message: fmt.Sprintf("PV %s is left to its provisioner, which may need node %s back to delete it", pending, st.out.Node)})
	}
	return err
}

// deleteClaim deletes a claim and waits until it is gone, then, with
// waitPV, until its PV is deleted or released (Retain, returned as
// retained). Without waitPV it returns the PV's name as pending.
func deleteClaim(ctx context.Context, c *Client, ns, name string, waitPV bool) (retained []string, pending string, err error) {
	cs := c.CS
	pvName := ""
	if pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
		pvName = pvc.Spec.VolumeName
	} else if !apierrors.IsNotFound(err) {
		return nil, "", fmt.Errorf("reading: %w", err)
	}
	if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return nil, "", fmt.Errorf("deleting: %w", err)
	}
	if err := waitGone(ctx, c, "PVC "+name, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	}); err != nil {
		return nil, "", err
	}
	if pvName == "" {
		return nil, "", nil
	}
	if !waitPV {
		return nil, pvName, nil
	}
	err = waitGone(ctx, c, "PV "+pvName, func(ctx context.Context) (bool, error) {
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case apierrors.IsForbidden(err):
			return true, nil // cannot see PVs: nothing more to wait for
		case err != nil:
			return false, err
		case pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain:
			retained = []string{pvName}
			return true, nil
		}
		return false, nil
	})
	return retained, "", err
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// waitGone polls done until it reports true, ctx ends, or it fails.
func waitGone(ctx context.Context, c *Client, what string, done func(context.Context) (bool, error)) error {
	tick := time.NewTicker(c.poll())
	defer tick.Stop()
	var last error
	for {
		ok, err := done(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%s still there: %w (last error: %v)", what, ctx.Err(), last)
			}
			return fmt.Errorf("%s still there: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// Leftovers are the objects of earlier runs that are still there.
type Leftovers struct {
	Jobs, Pods, PVCs, ConfigMaps []string // namespace/name
	// Retained are PVs of deleted iolens PVCs kept by a Retain policy.
	Retained []string
}

// Empty reports whether nothing is left.
func (l Leftovers) Empty() bool {
	return l.Objects()+len(l.Retained) == 0
}

// Objects counts what Cleanup deletes (retained PVs are never deleted).
func (l Leftovers) Objects() int {
	return len(l.Jobs) + len(l.Pods) + len(l.PVCs) + len(l.ConfigMaps)
}

// Namespaces lists the namespaces the leftovers are in, sorted.
func (l Leftovers) Namespaces() []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]string{l.Jobs, l.Pods, l.PVCs, l.ConfigMaps} {
		for _, o := range list {
			ns, _, _ := strings.Cut(o, "/")
			if !seen[ns] {
				seen[ns] = true
				out = append(out, ns)
			}
		}
	}
	sort.Strings(out)
	return out
}

// FindLeftovers lists what runs left behind in ns (all namespaces if
// empty), for one run or all (runID empty). Only objects that carry both
// the ownership label and a run id are iolens's.
func FindLeftovers(ctx context.Context, cs kubernetes.Interface, ns, runID string) (Leftovers, error) {
	var l Leftovers
	opts := metav1.ListOptions{LabelSelector: selector(runID)}
	jobs, err := cs.BatchV1().Jobs(ns).List(ctx, opts)
	if err != nil {
		return l, fmt.Errorf("listing jobs: %w", err)
	}
	for _, j := range jobs.Items {
		l.Jobs = append(l.Jobs, j.Namespace+"/"+j.Name)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, opts)
	if err != nil {
		return l, fmt.Errorf("listing pods: %w", err)
	}
	for _, p := range pods.Items {
		l.Pods = append(l.Pods, p.Namespace+"/"+p.Name)
	}
	pvcs, err := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, opts)
	if err != nil {
		return l, fmt.Errorf("listing PVCs: %w", err)
	}
	for _, p := range pvcs.Items {
		l.PVCs = append(l.PVCs, p.Namespace+"/"+p.Name)
	}
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, opts)
	if err != nil {
		return l, fmt.Errorf("listing ConfigMaps: %w", err)
	}
	for _, c := range cms.Items {
		l.ConfigMaps = append(l.ConfigMaps, c.Namespace+"/"+c.Name)
	}
	l.Retained = retainedPVs(ctx, cs, ns)
	return l, nil
}

// retainedPVs finds released PVs whose claim was an iolens PVC. PVs carry
// no labels of ours, so the claim's name prefix is the link.
func retainedPVs(ctx context.Context, cs kubernetes.Interface, ns string) []string {
	pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, pv := range pvs.Items {
		ref := pv.Spec.ClaimRef
		if ref == nil || !strings.HasPrefix(ref.Name, "iolens-t") || (ns != "" && ref.Namespace != ns) {
			continue
		}
		if pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain && pv.Status.Phase == corev1.VolumeReleased {
			out = append(out, pv.Name)
		}
	}
	return out
}

// Cleanup deletes what FindLeftovers finds, Jobs and pods before PVCs,
// and waits until it is gone. It returns what is still left (retained PVs
// at least) and every error met.
func Cleanup(ctx context.Context, c *Client, ns, runID string, progress func(string)) (Leftovers, error) {
	if progress == nil {
		progress = func(string) {}
	}
	l, err := FindLeftovers(ctx, c.CS, ns, runID)
	if err != nil {
		return l, err
	}
	var errs []error
	for _, j := range l.Jobs {
		jns, name, _ := strings.Cut(j, "/")
		progress("deleting job " + j)
		if err := deleteJobAndPods(ctx, c, jns, name, "job-name="+name); err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", j, err))
		}
	}
	for _, p := range l.Pods {
		pns, name, _ := strings.Cut(p, "/")
		progress("deleting pod " + p)
		opts := metav1.DeleteOptions{}
		if p, err := c.CS.CoreV1().Pods(pns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			opts = podDeleteOptions(ctx, c.CS, p)
		}
		err := c.CS.CoreV1().Pods(pns).Delete(ctx, name, opts)
		if err == nil || apierrors.IsNotFound(err) {
			err = waitGone(ctx, c, "pod "+p, func(ctx context.Context) (bool, error) {
				_, err := c.CS.CoreV1().Pods(pns).Get(ctx, name, metav1.GetOptions{})
				return apierrors.IsNotFound(err), ignoreNotFound(err)
			})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", p, err))
		}
	}
	for _, p := range l.PVCs {
		pns, name, _ := strings.Cut(p, "/")
		progress("deleting PVC " + p)
		if _, _, err := deleteClaim(ctx, c, pns, name, true); err != nil {
			errs = append(errs, fmt.Errorf("PVC %s: %w", p, err))
		}
	}
	for _, m := range l.ConfigMaps {
		mns, name, _ := strings.Cut(m, "/")
		progress("deleting ConfigMap " + m)
		if err := c.CS.CoreV1().ConfigMaps(mns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("ConfigMap %s: %w", m, err))
		}
	}
	left, lerr := FindLeftovers(ctx, c.CS, ns, runID)
	if lerr != nil {
		errs = append(errs, lerr)
	}
	return left, errors.Join(errs...)
}
