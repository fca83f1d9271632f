package k8s

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Phase is where a target is in its life.
type Phase string

// Phases, in the order a target normally goes through them. With a
// WaitForFirstConsumer class a pod is scheduled before its volume binds.
const (
	PhasePending      Phase = "pending"
	PhaseProvisioning Phase = "provisioning"
	PhaseBound        Phase = "bound"
	PhaseScheduled    Phase = "scheduled"
	PhaseRunning      Phase = "running"
	PhaseTest         Phase = "test"
	PhaseDone         Phase = "done"
	PhaseFailed       Phase = "failed"
	PhaseCleanup      Phase = "cleanup"
	PhaseCleaned      Phase = "cleaned"
	PhaseInfo         Phase = "info"
)

// Event reports the progress of one target.
type Event struct {
	Target Target
	Phase  Phase
	// Test of Tests is running (PhaseTest), named TestName.
	Test, Tests int
	TestName    string
	Message     string
	At          time.Time
}

// Outcome is what happened to one target.
type Outcome struct {
	Target  Target
	Results int
	// Err is nil when the target completed; it is a *TargetError
	// otherwise, joined with any cleanup error.
	Err               error
	PVC, Job, Pod, PV string
	Node              string
	Retained          []string
	// PendingPV is the target's PV when its node went away: the CLI did
	// not wait for its provisioner to delete it.
	PendingPV            string
	Kept                 bool
	Created, Done, Clean time.Time
}

// Summary is the outcome of a run.
type Summary struct {
	RunID    string
	Outcomes []Outcome
	// Retained lists PersistentVolumes left behind by a Retain reclaim
	// policy; they hold data and are never deleted by iolens.
	Retained []string
	Started  time.Time
	// FirstResult and LastResult are when the first and last results
	// arrived; CleanedUp when the last object was gone.
	FirstResult, LastResult, CleanedUp time.Time
	// Gates says how far apart the targets that were started together
	// began their first test.
	Gates []GateSkew
}

// Failed counts the targets that failed.
func (s Summary) Failed() int {
	n := 0
	for _, o := range s.Outcomes {
		if o.Err != nil {
			n++
		}
	}
	return n
}

// Runner runs targets on a cluster.
type Runner struct {
	Client *Client
	Config Config
	// Emit receives each result, with the target's metadata in
	// Target.Labels. Calls are serialized.
	Emit func(result.Result) error
	// Progress receives events; calls are serialized.
	Progress func(Event)

	mu      sync.Mutex
	classes map[string]*storagev1.StorageClass
	sum     Summary
	// gates holds each gated target's start barrier, by target id;
	// gateCM is the run's ConfigMap that carries the start times.
	gates  map[string]*gate
	gateCM string
}

// ErrRunFailed is wrapped by Run's error when targets failed.
var ErrRunFailed = errors.New("targets failed")

// Run benchmarks every target, in parallel or one group after another,
// and cleans up after each. Failed targets do not stop the others. The
// error joins every target's error and wraps ErrRunFailed, or ctx's error
// when the run was interrupted.
func (r *Runner) Run(ctx context.Context, targets []Target) (Summary, error) {
	r.sum = Summary{RunID: r.Config.RunID, Started: r.Client.now()}
	if r.Config.Timeouts == (Timeouts{}) {
		r.Config.Timeouts = DefaultTimeouts()
	}
	if err := r.preflight(ctx, targets); err != nil {
		return r.sum, err
	}
	groups := Groups(targets)
	gateCleanup := r.setupGates(ctx, targets)
	outcomes := make([][]Outcome, len(groups))
	runGroup := func(i int) {
		g := groups[i]
		outs := make([]Outcome, len(g))
		var wg sync.WaitGroup
		for j := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[j] = r.runTarget(ctx, g[j])
			}()
		}
		wg.Wait()
		outcomes[i] = outs
	}
	if r.Config.Parallel {
		var wg sync.WaitGroup
		for i := range groups {
			wg.Add(1)
			go func() { defer wg.Done(); runGroup(i) }()
		}
		wg.Wait()
	} else {
		for i := range groups {
			if ctx.Err() != nil {
				for _, t := range groups[i] {
					outcomes[i] = append(outcomes[i], Outcome{Target: t, Err: &TargetError{Target: t, Phase: "start", Err: ctx.Err()}})
				}
				continue
			}
			runGroup(i)
		}
	}
	var errs []error
	if gateCleanup != nil && !r.Config.Keep {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.Config.Timeouts.Cleanup)
		if err := gateCleanup(cctx); err != nil {
			errs = append(errs, &CleanupError{Target: targets[0], Err: err, RunID: r.Config.RunID, Namespace: r.Config.Namespace})
		}
		cancel()
	}
	seen := map[*gate]bool{}
	for _, t := range targets {
		if g := r.gates[t.ID]; g != nil && !seen[g] {
			seen[g] = true
			if sk, ok := g.skew(); ok {
				r.sum.Gates = append(r.sum.Gates, sk)
			}
		}
	}
	for _, outs := range outcomes {
		for _, o := range outs {
			r.sum.Outcomes = append(r.sum.Outcomes, o)
			r.sum.Retained = append(r.sum.Retained, o.Retained...)
			if o.Clean.After(r.sum.CleanedUp) {
				r.sum.CleanedUp = o.Clean
			}
			if o.Err != nil {
				errs = append(errs, o.Err)
			}
		}
	}
	if ctx.Err() != nil {
		// A target stopped by the interruption is no news; a cleanup that
		// failed, or a target that had failed before, is.
		var kept []error
		for _, err := range errs {
			if !errors.Is(err, context.Canceled) {
				kept = append(kept, err)
			}
		}
		return r.sum, &RunError{Total: len(targets), Interrupted: ctx.Err(), Errs: kept}
	}
	if len(errs) > 0 {
		return r.sum, &RunError{Total: len(targets), Errs: errs}
	}
	return r.sum, nil
}

// RunError is Run's error when targets failed or the run was interrupted.
// It wraps ErrRunFailed, or the context's error when interrupted, and each
// target's error.
type RunError struct {
	Total int
	// Interrupted is the context's error when the run was interrupted.
	Interrupted error
	// Errs are the targets' errors; for an interrupted run, only those
	// the interruption did not cause (failed cleanups, earlier failures).
	Errs []error
}

func (e *RunError) Error() string {
	var b strings.Builder
	if e.Interrupted != nil {
		fmt.Fprintf(&b, "run interrupted (%v)", e.Interrupted)
	} else {
		fmt.Fprintf(&b, "%d of %d targets failed", len(e.Errs), e.Total)
	}
	for _, err := range e.Errs {
		b.WriteString("\n" + err.Error())
	}
	return b.String()
}

func (e *RunError) Unwrap() []error {
	first := ErrRunFailed
	if e.Interrupted != nil {
		first = e.Interrupted
	}
	return append([]error{first}, e.Errs...)
}

// preflight checks that the storage classes exist before anything is
// created, so a typo fails at once and leaves nothing behind. Without the
// right to read classes the check is skipped and the PVC's events explain
// a failure instead.
func (r *Runner) preflight(ctx context.Context, targets []Target) error {
	r.classes = map[string]*storagev1.StorageClass{}
	if len(targets) > 0 {
		if msg := r.podSecurityNote(ctx, targets); msg != "" {
			r.event(Event{Target: targets[0], Phase: PhaseInfo, Message: msg})
		}
	}
	if r.Config.HostPath != "" {
		return nil
	}
	seen := map[string]bool{}
	for _, t := range targets {
		if seen[t.StorageClass] {
			continue
		}
		seen[t.StorageClass] = true
		sc, err := r.Client.CS.StorageV1().StorageClasses().Get(ctx, t.StorageClass, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			e := &ClassNotFoundError{Name: t.StorageClass}
			if list, lerr := r.Client.CS.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{}); lerr == nil {
				for _, c := range list.Items {
					e.Available = append(e.Available, c.Name)
				}
				sort.Strings(e.Available)
			}
			return e
		case apierrors.IsForbidden(err):
			r.event(Event{Target: t, Phase: PhaseInfo, Message: "cannot read storage class " + t.StorageClass + " (forbidden); skipping the check"})
		case err != nil:
			return fmt.Errorf("reading storage class %s: %w", t.StorageClass, err)
		default:
			r.classes[t.StorageClass] = sc
		}
	}
	if msg := zoneNote(ctx, r.Client.CS, targets, r.classes); msg != "" {
		r.event(Event{Target: targets[0], Phase: PhaseInfo, Message: msg})
	}
	return nil
}

// LabelEnforce is the namespace label of Pod Security admission.
const LabelEnforce = "pod-security.kubernetes.io/enforce"

// podSecurityNote says when the namespace does not fit the run: benchmark
// pods of a Filesystem volume pass the restricted level and belong in a
// namespace that enforces it; Block mode and node-check need root, which
// only a privileged namespace admits. Without the right to read the
// namespace it says nothing.
func (r *Runner) podSecurityNote(ctx context.Context, targets []Target) string {
	ns, err := r.Client.CS.CoreV1().Namespaces().Get(ctx, r.Config.Namespace, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	level := ns.Labels[LabelEnforce]
	root := r.Config.HostPath != "" || r.Config.isBlock()
	for _, t := range targets {
		root = root || r.Config.blockFor(t)
	}
	switch {
	case root && (level == "restricted" || level == "baseline"):
		return fmt.Sprintf("namespace %s enforces the %s Pod Security level, which refuses the root pods of Block mode and node-check: use a namespace labelled %s=privileged", ns.Name, level, LabelEnforce)
	case !root && level != "restricted":
		if level == "" {
			level = "no"
		}
		return fmt.Sprintf("namespace %s enforces %s Pod Security level; iolens's benchmark pods pass the restricted one: label it %s=restricted, or use the iolens namespace of deploy/rbac.yaml", ns.Name, level, LabelEnforce)
	}
	return ""
}

func (r *Runner) event(e Event) {
	if e.At.IsZero() {
		e.At = r.Client.now()
	}
	if r.Progress == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Progress(e)
}

func (r *Runner) emit(res result.Result) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.Client.now()
	if r.sum.FirstResult.IsZero() {
		r.sum.FirstResult = now
	}
	r.sum.LastResult = now
	if r.Emit == nil {
		return nil
	}
	return r.Emit(res)
}

// target is the state of one running target.
type target struct {
	r   *Runner
	t   Target
	out *Outcome
	// stack holds the cleanup steps, undone in reverse order.
	stack   cleanupStack
	claim   *corev1.PersistentVolumeClaim
	job     *batchv1.Job
	pod     *corev1.Pod
	phase   Phase
	meta    map[string]string
	lastSeq int
	// nodeLost is set when the target's node went away.
	nodeLost bool
}

func (r *Runner) runTarget(ctx context.Context, t Target) (o Outcome) {
	o = Outcome{Target: t, Created: r.Client.now()}
	st := &target{r: r, t: t, out: &o, phase: ""}
	defer func() {
		r.gateLeft(ctx, t)
		if o.Err != nil {
			r.event(Event{Target: t, Phase: PhaseFailed, Message: o.Err.Error()})
		}
		if r.Config.Keep {
			o.Kept = true
			if len(st.stack) > 0 {
				r.event(Event{Target: t, Phase: PhaseInfo, Message: fmt.Sprintf("--keep: leaving %s; remove with: iolens k8s cleanup -n %s --run %s", st.stack.names(), r.Config.Namespace, r.Config.RunID)})
			}
			return
		}
		// Cleanup ignores Ctrl-C but has its own deadline.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.Config.Timeouts.Cleanup)
		defer cancel()
		if len(st.stack) > 0 {
			r.event(Event{Target: t, Phase: PhaseCleanup, Message: "deleting " + st.stack.names()})
		}
		if cerr := st.stack.run(cctx); cerr != nil {
			o.Err = errors.Join(o.Err, &CleanupError{Target: t, Err: cerr, RunID: r.Config.RunID, Namespace: r.Config.Namespace})
			r.event(Event{Target: t, Phase: PhaseFailed, Message: "cleanup: " + cerr.Error()})
		} else if len(st.stack) > 0 {
			r.event(Event{Target: t, Phase: PhaseCleaned})
		}
		o.Clean = r.Client.now()
	}()
	if err := st.run(ctx); err != nil {
		o.Err = err
		return o
	}
	o.Done = r.Client.now()
	r.event(Event{Target: t, Phase: PhaseDone, Message: fmt.Sprintf("%d results", o.Results)})
	return o
}

func (st *target) fail(phase string, err error) *TargetError {
	return &TargetError{Target: st.t, Phase: phase, Err: err}
}

func (st *target) setPhase(p Phase, msg string) {
	if st.phase == p {
		return
	}
	st.phase = p
	st.r.event(Event{Target: st.t, Phase: p, Message: msg})
}

func (st *target) run(ctx context.Context) error {
	r := st.r
	cs := r.Client.CS
	ns := r.Config.Namespace
	claimName := ""
	if r.Config.HostPath == "" {
		pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, r.Config.pvcFor(st.t), metav1.CreateOptions{})
		if err != nil {
			te := st.fail("create PVC", err)
			te.Cause, te.hint = explainCreate(err, "PVC")
			return te
		}
		st.claim = pvc
		claimName = pvc.Name
		st.out.PVC = pvc.Name
		st.stack.push("PVC "+pvc.Name, func(ctx context.Context) error { return st.deleteClaim(ctx, pvc.Name) })
	}
	job, err := cs.BatchV1().Jobs(ns).Create(ctx, r.Config.jobFor(st.t, claimName, r.gateFor(st.t)), metav1.CreateOptions{})
	if err != nil {
		te := st.fail("create Job", err)
		te.Cause, te.hint = explainCreate(err, "Job")
		return te
	}
	st.job = job
	st.out.Job = job.Name
	st.stack.push("Job "+job.Name, func(ctx context.Context) error { return st.deleteJob(ctx, job.Name) })
	st.setPhase(PhasePending, "")

	if err := st.waitStarted(ctx); err != nil {
		return err
	}
	st.collectMeta(ctx)
	return st.stream(ctx)
}

// bindingMode of the target's class, "" when unknown.
func (st *target) bindingMode() storagev1.VolumeBindingMode {
	sc := st.r.classes[st.t.StorageClass]
	if sc == nil || sc.VolumeBindingMode == nil {
		return ""
	}
	return *sc.VolumeBindingMode
}

// waitStarted waits until the agent runs (or has already finished), with
// a separate deadline for binding, scheduling and starting.
func (st *target) waitStarted(ctx context.Context) error {
	r := st.r
	cs := r.Client.CS
	ns := r.Config.Namespace
	to := r.Config.Timeouts
	now := r.Client.now()
	wffc := st.bindingMode() == storagev1.VolumeBindingWaitForFirstConsumer
	immediate := st.bindingMode() == storagev1.VolumeBindingImmediate
	// Each clock starts when its phase can begin: a WaitForFirstConsumer
	// volume binds only after its pod is scheduled, and a pod with an
	// Immediate volume is scheduled only after the volume is bound.
	var bindFrom, schedFrom, startFrom time.Time
	if !wffc {
		bindFrom = now
	}
	if !immediate || st.claim == nil {
		schedFrom = now
	}
	bound := st.claim == nil
	// How often to look for events saying the pod is refused for good.
	refusedEvery := min(2*time.Second, 20*r.Client.poll())
	var lastRefusedCheck, lastNodeCheck time.Time
	tick := time.NewTicker(r.Client.poll())
	defer tick.Stop()
	for {
		now = r.Client.now()
		if st.claim != nil && !bound {
			pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, st.claim.Name, metav1.GetOptions{})
			switch {
			case err != nil && ctx.Err() != nil:
				return st.fail(string(PhasePending), ctx.Err())
			case err != nil:
				return st.fail("bind", fmt.Errorf("reading PVC %s: %w", st.claim.Name, err))
			case pvc.Status.Phase == corev1.ClaimBound:
				st.claim = pvc
				bound = true
				st.out.PV = pvc.Spec.VolumeName
				st.setPhase(PhaseBound, pvc.Spec.VolumeName)
				if schedFrom.IsZero() {
					schedFrom = now
				}
			case pvc.Status.Phase == corev1.ClaimLost:
				te := st.fail("bind", fmt.Errorf("PVC %s lost its volume", pvc.Name))
				te.Cause, te.hint = diagnoseClaim(ctx, cs, pvc, r.classes[st.t.StorageClass])
				return te
			default:
				st.claim = pvc
				if pvc.Annotations["volume.kubernetes.io/selected-node"] != "" || pvc.Annotations["volume.kubernetes.io/storage-provisioner"] != "" {
					if bindFrom.IsZero() {
						bindFrom = now
					}
					st.setPhase(PhaseProvisioning, pvc.Annotations["volume.kubernetes.io/storage-provisioner"])
				}
			}
			if !bound && !bindFrom.IsZero() && now.Sub(bindFrom) > to.Bind {
				te := st.fail("bind", fmt.Errorf("PVC %s not bound after %s: %w", st.claim.Name, to.Bind, ErrPhaseTimeout))
				te.Cause, te.hint = diagnoseClaim(ctx, cs, st.claim, r.classes[st.t.StorageClass])
				st.addPodCause(ctx, te)
				return te
			}
		}
		pod, err := st.findPod(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return st.fail(string(st.phase), ctx.Err())
			}
			return st.fail("schedule", err)
		}
		if pod != nil {
			st.pod = pod
			st.out.Pod = pod.Name
			if pod.Spec.NodeName != "" {
				if st.out.Node == "" {
					st.out.Node = pod.Spec.NodeName
					startFrom = now
					if bindFrom.IsZero() {
						bindFrom = now
					}
					st.setPhase(PhaseScheduled, pod.Spec.NodeName)
				}
			}
			if cause, hint, fatal := fatalWaiting(pod); fatal {
				te := st.fail("start", errors.New(cause))
				te.Cause, te.hint = cause, hint
				return te
			}
			switch pod.Status.Phase {
			case corev1.PodRunning, corev1.PodSucceeded:
				if bound {
					st.setPhase(PhaseRunning, "")
					return nil
				}
			case corev1.PodFailed:
				// The agent may have written its reason before failing:
				// once its container ran, the log is read anyway.
				if bound || containerRan(pod) {
					return nil
				}
				te := st.fail("start", fmt.Errorf("pod %s failed: %s", pod.Name, podReason(pod)))
				te.Cause, te.hint = diagnosePod(ctx, cs, pod)
				return te
			}
		} else if jf := jobFailed(ctx, cs, st.job); jf != "" {
			te := st.fail("schedule", fmt.Errorf("job %s failed: %s", st.job.Name, jf))
			return te
		} else if now.Sub(lastRefusedCheck) >= refusedEvery {
			lastRefusedCheck = now
			if cause, hint, ok := refusedPod(ctx, cs, st.job); ok {
				te := st.fail("schedule", fmt.Errorf("job %s cannot create its pod", st.job.Name))
				te.Cause, te.hint = cause, hint
				return te
			}
		}
		if pod != nil && pod.Spec.NodeName == "" && bound && st.t.Node != "" && volumeConflict(pod) {
			// The volume is bound elsewhere than the node the pod must run
			// on: neither will change, so waiting cannot help.
			te := st.fail("schedule", errors.New("the pod cannot run on its node: volume node affinity conflict"))
			te.Cause, te.hint = zoneConflict(ctx, cs, st.claim, r.classes[st.t.StorageClass], st.t.Node)
			return te
		}
		if (pod == nil || pod.Spec.NodeName == "") && !schedFrom.IsZero() && now.Sub(schedFrom) > to.Schedule {
			te := st.fail("schedule", fmt.Errorf("pod not scheduled after %s: %w", to.Schedule, ErrPhaseTimeout))
			if pod != nil {
				te.Cause, te.hint = diagnosePod(ctx, cs, pod)
				if volumeConflict(pod) {
					if c, h := zoneConflict(ctx, cs, st.claim, r.classes[st.t.StorageClass], st.t.Node); c != "" {
						te.Cause, te.hint = joinCause(te.Cause, c), h
					}
				}
			} else {
				te.Cause, te.hint = diagnoseJob(ctx, cs, st.job)
			}
			return te
		}
		if !startFrom.IsZero() && bound && now.Sub(startFrom) > to.Start {
			te := st.fail("start", fmt.Errorf("pod %s not running %s after it was scheduled: %w", pod.Name, to.Start, ErrPhaseTimeout))
			te.Cause, te.hint = diagnosePod(ctx, cs, pod)
			return te
		}
		if pod != nil && pod.Spec.NodeName != "" && now.Sub(lastNodeCheck) >= refusedEvery {
			// A pod waiting on a node that went away never starts.
			lastNodeCheck = now
			if lost := nodeLost(ctx, cs, pod.Spec.NodeName); lost != nil {
				return st.lost(lost(st.t))
			}
		}
		select {
		case <-ctx.Done():
			return st.fail(string(st.phase), ctx.Err())
		case <-tick.C:
		}
	}
}

// addPodCause adds the pod's scheduling trouble to a bind failure: with
// WaitForFirstConsumer the volume waits for a pod that cannot be placed.
func (st *target) addPodCause(ctx context.Context, te *TargetError) {
	if st.pod == nil || st.pod.Spec.NodeName != "" {
		return
	}
	if cause, hint := diagnosePod(ctx, st.r.Client.CS, st.pod); cause != "" {
		te.Cause = joinCause(te.Cause, cause)
		if te.hint == "" || st.bindingMode() == storagev1.VolumeBindingWaitForFirstConsumer {
			te.hint = hint
		}
	}
}

func (st *target) findPod(ctx context.Context) (*corev1.Pod, error) {
	pods, err := st.r.Client.CS.CoreV1().Pods(st.r.Config.Namespace).List(ctx, metav1.ListOptions{LabelSelector: targetSelector(st.r.Config.RunID, st.t.ID)})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	var newest *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if newest == nil || p.CreationTimestamp.After(newest.CreationTimestamp.Time) {
			newest = p
		}
	}
	return newest, nil
}

func jobFailed(ctx context.Context, cs kubernetes.Interface, job *batchv1.Job) string {
	j, err := cs.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return c.Reason + ": " + c.Message
		}
	}
	return ""
}

// collectMeta records where the target ended up, for every result.
func (st *target) collectMeta(ctx context.Context) {
	r := st.r
	cs := r.Client.CS
	var node *corev1.Node
	m := map[string]string{
		"k8s.namespace": r.Config.Namespace,
		"k8s.run-id":    r.Config.RunID,
		"k8s.target":    st.t.ID,
		"k8s.group":     st.t.Group,
	}
	if r.Config.Context != "" {
		m["k8s.context"] = r.Config.Context
	}
	if st.t.Slot > 0 {
		m["k8s.slot"] = strconv.Itoa(st.t.Slot)
	}
	if st.t.GroupSize > 1 {
		m[limits.LabelGroupSize] = strconv.Itoa(st.t.GroupSize)
	}
	if st.job != nil {
		m["k8s.job"] = st.job.Name
	}
	if st.pod != nil {
		m["k8s.pod"] = st.pod.Name
		m["k8s.node"] = st.pod.Spec.NodeName
		if n, err := cs.CoreV1().Nodes().Get(ctx, st.pod.Spec.NodeName, metav1.GetOptions{}); err == nil {
			node = n
			for _, k := range []string{"node.kubernetes.io/instance-type", "topology.kubernetes.io/zone", "topology.kubernetes.io/region"} {
				if v := node.Labels[k]; v != "" {
					m["k8s.node."+k] = v
				}
			}
		}
	}
	if r.Config.HostPath != "" {
		m["k8s.host-path"] = r.Config.HostPath
	}
	if st.claim != nil {
		pvc := st.claim
		m["k8s.pvc"] = pvc.Name
		m["k8s.storage-class"] = st.t.StorageClass
		m["k8s.size-requested"] = st.t.Size.String()
		if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
			m["k8s.size-actual"] = q.String()
		}
		if pvc.Spec.VolumeMode != nil {
			m["k8s.volume-mode"] = string(*pvc.Spec.VolumeMode)
		}
		if len(pvc.Spec.AccessModes) > 0 {
			m["k8s.access-mode"] = string(pvc.Spec.AccessModes[0])
		}
		if sc := r.classes[st.t.StorageClass]; sc != nil {
			m["k8s.provisioner"] = sc.Provisioner
			for k, v := range sc.Parameters {
				if importantParam(k) {
					m["k8s.sc."+k] = v
				}
			}
			if r.Config.Disk != nil {
				size := st.t.Size
				if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
					size = q
				}
				if spec, ok := r.Config.Disk(sc.Provisioner, sc.Parameters, size.Value()); ok {
					m["k8s.catalog-disk"] = spec
				}
			}
		}
		if pvc.Spec.VolumeName != "" {
			m["k8s.pv"] = pvc.Spec.VolumeName
			if pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{}); err == nil {
				switch {
				case pv.Spec.CSI != nil:
					m["k8s.csi-driver"] = pv.Spec.CSI.Driver
					m["k8s.csi-volume-handle"] = pv.Spec.CSI.VolumeHandle
				case pv.Spec.HostPath != nil:
					m["k8s.pv-path"] = pv.Spec.HostPath.Path
				case pv.Spec.Local != nil:
					m["k8s.pv-path"] = pv.Spec.Local.Path
				}
				if pv.Spec.PersistentVolumeReclaimPolicy != "" {
					m["k8s.reclaim-policy"] = string(pv.Spec.PersistentVolumeReclaimPolicy)
				}
				if _, ok := m["k8s.provisioner"]; !ok {
					m["k8s.provisioner"] = pv.Annotations["pv.kubernetes.io/provisioned-by"]
				}
			}
		}
	}
	if node != nil {
		st.nodeVolumes(ctx, node, m)
	}
	st.meta = m
}

// nodeVolumes records the other volumes attached to the node, as the
// catalog disks their classes provision ("?" where the catalog cannot map
// one): IBM splits a VSI's volume bandwidth over all of them, so a second
// volume halves the first's (seed 002).
func (st *target) nodeVolumes(ctx context.Context, node *corev1.Node, m map[string]string) {
	att := node.Status.VolumesAttached
	m["k8s.node.volumes-attached"] = strconv.Itoa(len(att))
	r := st.r
	if len(att) == 0 || r.Config.Disk == nil {
		return
	}
	cs := r.Client.CS
	own := m["k8s.csi-driver"] + "^" + m["k8s.csi-volume-handle"]
	pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	byHandle := map[string]*corev1.PersistentVolume{}
	for i := range pvs.Items {
		if pv := &pvs.Items[i]; pv.Spec.CSI != nil {
			byHandle[pv.Spec.CSI.Driver+"^"+pv.Spec.CSI.VolumeHandle] = pv
		}
	}
	classes := map[string]*storagev1.StorageClass{}
	var specs []string
	for _, a := range att {
		name := strings.TrimPrefix(string(a.Name), "kubernetes.io/csi/")
		if name == own {
			continue
		}
		spec := "?"
		if pv := byHandle[name]; pv != nil && pv.Spec.StorageClassName != "" {
			sc, seen := classes[pv.Spec.StorageClassName]
			if !seen {
				sc, _ = cs.StorageV1().StorageClasses().Get(ctx, pv.Spec.StorageClassName, metav1.GetOptions{})
				classes[pv.Spec.StorageClassName] = sc
			}
			size := pv.Spec.Capacity[corev1.ResourceStorage]
			if sc != nil {
				if s, ok := r.Config.Disk(sc.Provisioner, sc.Parameters, size.Value()); ok {
					spec = s
				}
			}
		}
		specs = append(specs, spec)
	}
	if v := strings.Join(specs, limits.AttachedSep); len(specs) > 0 && len(v) <= units.MaxLabelValue {
		m[limits.LabelAttachedDisks] = v
	}
}

// maxReconnects bounds how often a cut log stream is reopened.
const maxReconnects = 10

// kubeletLostWait is how long a kubelet may not answer before the stream
// counts as cut for good, while the API still calls its node ready: more
// than the node controller's default grace period.
const kubeletLostWait = 2 * time.Minute

// volumeConflict reports a pod the scheduler cannot place because of its
// volume's node affinity.
func volumeConflict(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "volume node affinity conflict") {
			return true
		}
	}
	return false
}

// kubeletUnreachable reports an error opening a log that says the API
// server could not reach the node's kubelet.
func kubeletUnreachable(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, s := range []string{"dial tcp", "connection refused", "no route to host", "i/o timeout", "connection reset"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// lost marks a target whose node went away: its pods are force-deleted
// (no kubelet will confirm a graceful deletion) and its volume is not
// waited for (its provisioner may need the node).
func (st *target) lost(err error) error {
	st.nodeLost = true
	return err
}

// stream reads the agent's records until its final one, reopening the log
// when the stream is cut while the pod still runs.
func (st *target) stream(ctx context.Context) error {
	r := st.r
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, r.Config.runTimeout())
	defer cancel()
	var lastOther []string
	damaged := 0
	// unreachable is when the node's kubelet stopped answering.
	var unreachable time.Time
	for attempt := 0; ; attempt++ {
		follow := true
		if st.podDone(ctx) {
			follow = false
		}
		done, fr, err := st.readOnce(ctx, follow)
		if fr != nil {
			damaged += fr.Damaged
			if len(fr.Other) > 0 {
				lastOther = fr.Other
			}
		}
		if done != nil {
			if done.Error != "" {
				te := st.fail("run", errors.New(done.Error))
				te.hint = done.Hint
				if te.hint == "" {
					te.Cause, te.hint = explainAgentError(done.Error)
				}
				te.Logs = lastOther
				return te
			}
			if damaged > 0 {
				r.event(Event{Target: st.t, Phase: PhaseInfo, Message: fmt.Sprintf("%d damaged log records skipped", damaged)})
			}
			return nil
		}
		if ctx.Err() != nil {
			if parent.Err() == nil {
				te := st.fail("run", fmt.Errorf("agent not done after %s: %w", r.Config.runTimeout(), ErrPhaseTimeout))
				te.Cause, te.hint = diagnosePod(parent, r.Client.CS, st.pod)
				te.Logs = lastOther
				return te
			}
			return st.fail("run", parent.Err())
		}
		// No final record: either the stream was cut, or the agent died.
		if !follow || st.podDone(ctx) {
			if follow {
				// Read the finished log once more from the start: the cut
				// may have hidden the last records.
				continue
			}
			pod := st.pod
			te := st.fail("run", fmt.Errorf("agent ended without its final record (%s)", describeEnd(err, fr)))
			te.Cause, te.hint = diagnosePod(ctx, r.Client.CS, pod)
			if lost := nodeLost(ctx, r.Client.CS, st.out.Node); lost != nil {
				return st.lost(lost(st.t))
			}
			te.Logs = lastOther
			return te
		}
		if lost := nodeLost(ctx, r.Client.CS, st.out.Node); lost != nil {
			return st.lost(lost(st.t))
		}
		if fr == nil && kubeletUnreachable(err) {
			// The kubelet does not answer at all, yet the node is still
			// called ready: the node controller needs its grace period
			// (about 40 s) to notice a dead kubelet. Wait for its verdict
			// rather than count this as a cut stream.
			now := r.Client.now()
			if unreachable.IsZero() {
				unreachable = now
				r.event(Event{Target: st.t, Phase: PhaseInfo, Message: fmt.Sprintf("cannot reach the kubelet of node %s (%v); waiting for it, or for the node to be marked not ready", st.out.Node, err)})
			}
			if now.Sub(unreachable) < kubeletLostWait {
				attempt--
				select {
				case <-ctx.Done():
				case <-time.After(min(10*r.Client.poll(), time.Second)):
				}
				continue
			}
		} else {
			unreachable = time.Time{}
		}
		if attempt >= maxReconnects {
			te := st.fail("run", fmt.Errorf("log stream cut %d times (%s): %w", attempt+1, describeEnd(err, fr), ErrStreamCut))
			te.hint = "the connection to the node's kubelet keeps dropping; check the API server and node network"
			te.Logs = lastOther
			return te
		}
		r.event(Event{Target: st.t, Phase: PhaseInfo, Message: fmt.Sprintf("log stream cut (%s); reconnecting", describeEnd(err, fr))})
		select {
		case <-ctx.Done():
		case <-time.After(min(time.Duration(attempt+1)*r.Client.poll(), 5*time.Second)):
		}
	}
}

func describeEnd(err error, fr *FrameReader) string {
	s := "end of stream"
	if err != nil && !errors.Is(err, io.EOF) {
		s = err.Error()
	}
	if fr != nil && fr.Partial {
		s += ", in the middle of a line"
	}
	return s
}

// podDone refreshes the pod and reports whether its container finished.
func (st *target) podDone(ctx context.Context) bool {
	if st.pod == nil {
		return false
	}
	p, err := st.r.Client.CS.CoreV1().Pods(st.r.Config.Namespace).Get(ctx, st.pod.Name, metav1.GetOptions{})
	if err != nil {
		return apierrors.IsNotFound(err)
	}
	st.pod = p
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// readOnce reads one log stream; it returns the final record if it saw it.
func (st *target) readOnce(ctx context.Context, follow bool) (*Record, *FrameReader, error) {
	rc, err := st.r.Client.openLogs(ctx, st.r.Config.Namespace, st.pod.Name, follow)
	if err != nil {
		return nil, nil, fmt.Errorf("opening log: %w", err)
	}
	defer rc.Close()
	fr := NewFrameReader(rc)
	for {
		rec, err := fr.Next()
		if err != nil {
			return nil, fr, err
		}
		if rec.Seq <= st.lastSeq {
			continue // seen before a reconnect
		}
		st.lastSeq = rec.Seq
		switch rec.Type {
		case RecordEvent:
			if rec.Ready {
				st.gateReady(ctx)
				continue
			}
			if g := st.r.gates[st.t.ID]; g != nil && rec.Test == 1 {
				g.start(st.t.ID, rec.At)
			}
			st.r.event(Event{Target: st.t, Phase: PhaseTest, Test: rec.Test, Tests: rec.Tests, TestName: rec.Name, Message: rec.Message})
		case RecordResult:
			res, err := result.Unmarshal(rec.Result)
			if err != nil {
				st.r.event(Event{Target: st.t, Phase: PhaseInfo, Message: "undecodable result skipped: " + err.Error()})
				continue
			}
			st.annotate(&res)
			if err := st.r.emit(res); err != nil {
				return nil, fr, fmt.Errorf("saving result: %w", err)
			}
			st.out.Results++
		case RecordDone:
			return &rec, fr, nil
		}
	}
}

// annotate adds the cluster side of the target to a result from the agent.
func (st *target) annotate(res *result.Result) {
	res.RunID = st.r.Config.RunID
	// Path names the volume as the cluster knows it, so reports keep the
	// targets of one run apart; the path inside the pod is the same for all.
	if st.r.Config.HostPath != "" {
		res.Target.Kind = "hostpath"
		res.Target.Path = st.out.Node + ":" + st.r.Config.HostPath
	} else {
		res.Target.Kind = "pvc"
		res.Target.Path = st.r.Config.Namespace + "/" + st.out.PVC
	}
	labels := map[string]string{}
	for k, v := range res.Target.Labels {
		labels[k] = v
	}
	for k, v := range st.meta {
		labels[k] = v
	}
	res.Target.Labels = labels
}

func containerRan(pod *corev1.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Terminated != nil || c.State.Running != nil {
			return true
		}
	}
	return false
}

// Status is the error a run ends with, from Run's err: nil when every
// target completed; for an interrupted run, how many results it kept
// (kept) and whether everything went well; err with partial, the
// caller's sentinel, beside it when some targets completed and others
// failed.
func (s Summary) Status(ctx context.Context, err error, kept int, partial error) error {
	var cnf *ClassNotFoundError
	var re *RunError
	switch {
	case err == nil, errors.As(err, &cnf):
		return err
	case ctx.Err() != nil && errors.As(err, &re) && len(re.Errs) > 0:
		return fmt.Errorf("interrupted: %d results kept; not everything went well: %w", kept, err)
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted: %d results kept; every object of run %s was deleted", kept, s.RunID)
	case s.Failed() < len(s.Outcomes):
		return partialError{err, partial}
	}
	return err
}

// partialError is a run some of whose targets failed.
type partialError struct{ err, partial error }

func (e partialError) Error() string   { return e.err.Error() }
func (e partialError) Unwrap() []error { return []error{e.err, e.partial} }
