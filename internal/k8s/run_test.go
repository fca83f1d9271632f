package k8s

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

const ns = "bench"

// fakeCluster plays the controllers and kubelet around a fake clientset:
// it binds PVCs, starts a pod for each Job and serves the pod's log.
type fakeCluster struct {
	t  *testing.T
	cs *fake.Clientset

	neverBind  bool
	podFails   *corev1.ContainerStateTerminated
	reclaim    corev1.PersistentVolumeReclaimPolicy
	bindReason string // event on a PVC that does not bind
	// refusePods, if set, is the FailedCreate message the job controller
	// reports instead of creating a pod.
	refusePods string
	// pvAffinity is the node affinity of the PVs the fake provisioner
	// makes; unschedulable, if set, is the scheduler's message for pods it
	// leaves Pending.
	pvAffinity    *corev1.VolumeNodeAffinity
	unschedulable string
	// logs serves a pod's log; call counts from 0 per pod.
	logs func(ctx context.Context, pod string, call int) (io.ReadCloser, error)

	mu     sync.Mutex
	calls  map[string]int
	writes []string
	seq    int64
}

func newFakeCluster(t *testing.T, classes ...string) *fakeCluster {
	fc := &fakeCluster{t: t, calls: map[string]int{}, reclaim: corev1.PersistentVolumeReclaimDelete}
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	var objs []runtime.Object
	for _, c := range classes {
		objs = append(objs, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: c},
			Provisioner: "example.com/" + c, VolumeBindingMode: &wffc, Parameters: map[string]string{"skuName": "Premium_LRS", "other": "x"}})
	}
	objs = append(objs, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{
		"topology.kubernetes.io/zone": "z1", "node.kubernetes.io/instance-type": "m5.large"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}})
	fc.cs = fake.NewSimpleClientset(objs...)
	// The fake tracker does not generate names.
	fc.cs.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.CreateAction).GetObject()
		m, err := meta.Accessor(obj)
		if err == nil && m.GetName() == "" && m.GetGenerateName() != "" {
			m.SetName(fmt.Sprintf("%s%d", m.GetGenerateName(), atomic.AddInt64(&fc.seq, 1)))
		}
		// Objects the fake controllers make (pods, PVs, events) are not
		// iolens's writes.
		if res := a.GetResource().Resource; err == nil && (res == "persistentvolumeclaims" || res == "jobs" || res == "configmaps") {
			fc.record("create " + res + " " + m.GetName())
		}
		return false, nil, nil
	})
	fc.cs.PrependReactor("delete", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		// PVs and nodes are deleted by the fake controllers and tests.
		if res := a.GetResource().Resource; res != "persistentvolumes" && res != "nodes" {
			fc.record("delete " + res + " " + a.(k8stesting.DeleteAction).GetName())
		}
		return false, nil, nil
	})
	return fc
}

func (fc *fakeCluster) record(s string) {
	fc.mu.Lock()
	fc.writes = append(fc.writes, s)
	fc.mu.Unlock()
}

// control runs the fake controllers until ctx ends.
func (fc *fakeCluster) control(ctx context.Context) {
	cs := fc.cs
	bg := context.Background()
	orphaned := map[string]time.Time{}
	for ctx.Err() == nil {
		pvcs, _ := cs.CoreV1().PersistentVolumeClaims(ns).List(bg, metav1.ListOptions{})
		for _, p := range pvcs.Items {
			if p.Status.Phase == corev1.ClaimBound {
				continue
			}
			if fc.neverBind {
				if fc.bindReason != "" {
					_, _ = cs.CoreV1().Events(ns).Create(bg, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: p.Name + ".ev"},
						InvolvedObject: corev1.ObjectReference{Kind: "PersistentVolumeClaim", Name: p.Name, Namespace: ns},
						Reason:         fc.bindReason, Message: "waiting for a volume to be created by external provisioner", Type: corev1.EventTypeNormal}, metav1.CreateOptions{})
				}
				continue
			}
			pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + p.Name},
				Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: fc.reclaim, NodeAffinity: fc.pvAffinity,
					ClaimRef:               &corev1.ObjectReference{Namespace: ns, Name: p.Name},
					PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "example.com", VolumeHandle: "vol-" + p.Name}}}}
			_, _ = cs.CoreV1().PersistentVolumes().Create(bg, pv, metav1.CreateOptions{})
			p.Spec.VolumeName = pv.Name
			p.Status.Phase = corev1.ClaimBound
			p.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
			_, _ = cs.CoreV1().PersistentVolumeClaims(ns).Update(bg, &p, metav1.UpdateOptions{})
		}
		// The PV controller: a deleted claim's PV goes away, or is
		// released under Retain.
		pvs, _ := cs.CoreV1().PersistentVolumes().List(bg, metav1.ListOptions{})
		for _, pv := range pvs.Items {
			if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(bg, pv.Spec.ClaimRef.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				if pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete {
					_ = cs.CoreV1().PersistentVolumes().Delete(bg, pv.Name, metav1.DeleteOptions{})
				} else if pv.Status.Phase != corev1.VolumeReleased {
					pv.Status.Phase = corev1.VolumeReleased
					_, _ = cs.CoreV1().PersistentVolumes().Update(bg, &pv, metav1.UpdateOptions{})
				}
			}
		}
		jobs, _ := cs.BatchV1().Jobs(ns).List(bg, metav1.ListOptions{})
		for _, j := range jobs.Items {
			name := j.Name + "-pod"
			if _, err := cs.CoreV1().Pods(ns).Get(bg, name, metav1.GetOptions{}); err == nil {
				continue
			}
			if fc.refusePods != "" {
				_, _ = cs.CoreV1().Events(ns).Create(bg, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: j.Name + ".ev"},
					InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: j.Name, Namespace: ns},
					Reason:         "FailedCreate", Message: fc.refusePods, Type: corev1.EventTypeWarning}, metav1.CreateOptions{})
				continue
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: j.Spec.Template.Labels, CreationTimestamp: metav1.Now()},
				Spec: j.Spec.Template.Spec}
			pod.Spec.NodeName = "node-1"
			if fc.unschedulable != "" {
				pod.Spec.NodeName = ""
				pod.Status.Phase = corev1.PodPending
				pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
					Reason: "Unschedulable", Message: fc.unschedulable}}
				_, _ = cs.CoreV1().Pods(ns).Create(bg, pod, metav1.CreateOptions{})
				continue
			}
			if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
				// Pinned to a node (--nodes, --all-nodes).
				pod.Spec.NodeName = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0]
			}
			pod.Status.Phase = corev1.PodRunning
			if fc.podFails != nil {
				pod.Status.Phase = corev1.PodFailed
				pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: containerTag, State: corev1.ContainerState{Terminated: fc.podFails}}}
			}
			// The Job controller does not make pods for a Job that is
			// being deleted; the list above may be stale by now.
			if _, err := cs.BatchV1().Jobs(ns).Get(bg, j.Name, metav1.GetOptions{}); err != nil {
				continue
			}
			_, _ = cs.CoreV1().Pods(ns).Create(bg, pod, metav1.CreateOptions{})
		}
		// The garbage collector: a pod made for a Job that was deleted
		// meanwhile goes too (through the tracker: it is not iolens's
		// write).
		pods, _ := cs.CoreV1().Pods(ns).List(bg, metav1.ListOptions{})
		for _, p := range pods.Items {
			job, ok := strings.CutSuffix(p.Name, "-pod")
			if !ok {
				continue
			}
			if _, err := cs.BatchV1().Jobs(ns).Get(bg, job, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				continue
			}
			// Not at once: the real one takes its time too, and iolens
			// deletes the pods itself first.
			if orphaned[p.Name].IsZero() {
				orphaned[p.Name] = time.Now()
			} else if time.Since(orphaned[p.Name]) > 300*time.Millisecond {
				_ = cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ns, p.Name)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (fc *fakeCluster) openLogs(ctx context.Context, _ string, pod string, _ bool) (io.ReadCloser, error) {
	fc.mu.Lock()
	call := fc.calls[pod]
	fc.calls[pod]++
	fc.mu.Unlock()
	return fc.logs(ctx, pod, call)
}

// agentLog is what a successful agent writes for n tests.
func agentLog(t *testing.T, n int, doneErr string) []byte {
	var b bytes.Buffer
	w := NewFrameWriter(&b)
	for i := 1; i <= n; i++ {
		_ = w.Write(Record{Type: RecordEvent, Test: i, Tests: n, Name: fmt.Sprintf("test%d", i)})
		b.WriteString("fio: a line on stderr\n")
		res, _ := json.Marshal(result.Result{Schema: result.SchemaV1, Index: i, Status: "ok",
			Target: result.Target{Kind: "dir", Path: "/data", Labels: map[string]string{"agent": "yes"}}})
		_ = w.Write(Record{Type: RecordResult, Result: res})
	}
	_ = w.Write(Record{Type: RecordDone, Error: doneErr})
	return b.Bytes()
}

func staticLogs(b []byte) func(context.Context, string, int) (io.ReadCloser, error) {
	return func(context.Context, string, int) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
}

type harness struct {
	fc      *fakeCluster
	runner  *Runner
	results []result.Result
	events  []Event
}

func newHarness(t *testing.T, fc *fakeCluster, mutate func(*Config)) *harness {
	h := &harness{fc: fc}
	cfg := Config{Namespace: ns, RunID: "r1", Image: "iolens:test", Context: "ctx1",
		Timeouts: Timeouts{Bind: 5 * time.Second, Schedule: 5 * time.Second, Start: 5 * time.Second, Run: 5 * time.Second, Cleanup: 5 * time.Second},
		Agent:    AgentArgs{Suite: "quick", Tests: 2}}
	if mutate != nil {
		mutate(&cfg)
	}
	h.runner = &Runner{
		Client:   &Client{CS: fc.cs, Logs: fc.openLogs, Poll: time.Millisecond},
		Config:   cfg,
		Emit:     func(r result.Result) error { h.results = append(h.results, r); return nil },
		Progress: func(e Event) { h.events = append(h.events, e) },
	}
	return h
}

func (h *harness) run(t *testing.T, ctx context.Context, targets []Target) (Summary, error) {
	t.Helper()
	cctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.fc.control(cctx); close(done) }()
	defer func() { stop(); <-done }()
	return h.runner.Run(ctx, targets)
}

// writes lists the create and delete calls iolens made, in order, as
// "verb resource name" (with the generated name of a created object).
func writes(fc *fakeCluster) []string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return append([]string(nil), fc.writes...)
}

func targetsOf(t *testing.T, m Matrix) []Target {
	ts, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func oneTarget(t *testing.T) []Target {
	return targetsOf(t, Matrix{StorageClasses: []string{"fast"}, Sizes: []resource.Quantity{resource.MustParse("1Gi")}})
}

func leftovers(t *testing.T, fc *fakeCluster) Leftovers {
	l, err := FindLeftovers(context.Background(), fc.cs, ns, "")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRunSuccessMetadataAndCleanupOrder(t *testing.T) {
	fc := newFakeCluster(t, "fast")
	fc.logs = staticLogs(agentLog(t, 2, ""))
	h := newHarness(t, fc, func(c *Config) {
		c.Disk = func(prov string, params map[string]string, size int64) (string, bool) {
			return fmt.Sprintf("%s:%s:%d", prov, params["skuName"], size>>30), true
		}
	})
	sum, err := h.run(t, context.Background(), oneTarget(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.results) != 2 {
		t.Fatalf("got %d results, want 2", len(h.results))
	}
	r := h.results[0]
	want := map[string]string{
		"k8s.context": "ctx1", "k8s.namespace": ns, "k8s.storage-class": "fast", "k8s.provisioner": "example.com/fast",
		"k8s.pv": "pv-iolens-t1-1", "k8s.csi-volume-handle": "vol-iolens-t1-1", "k8s.node": "node-1",
		"k8s.node.topology.kubernetes.io/zone": "z1", "k8s.node.node.kubernetes.io/instance-type": "m5.large",
		"k8s.size-requested": "1Gi", "k8s.size-actual": "2Gi", "k8s.sc.skuName": "Premium_LRS", "agent": "yes",
		// The catalog disk of the actual size, which the cloud rounded up.
		"k8s.catalog-disk": "example.com/fast:Premium_LRS:2",
	}
	for k, v := range want {
		if r.Target.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, r.Target.Labels[k], v)
		}
	}
	if _, ok := r.Target.Labels["k8s.sc.other"]; ok {
		t.Error("unimportant class parameter copied")
	}
	if r.Target.Kind != "pvc" || r.RunID != "r1" {
		t.Errorf("kind %q run %q", r.Target.Kind, r.RunID)
	}
	got := writes(fc)
	wantW := []string{"create persistentvolumeclaims iolens-t1-1", "create jobs iolens-t1-2",
		"delete jobs iolens-t1-2", "delete pods iolens-t1-2-pod", "delete persistentvolumeclaims iolens-t1-1"}
	if strings.Join(got, "\n") != strings.Join(wantW, "\n") {
		t.Errorf("writes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantW, "\n"))
	}
	var phases []Phase
	for _, e := range h.events {
		if len(phases) == 0 || phases[len(phases)-1] != e.Phase {
			phases = append(phases, e.Phase)
		}
	}
	for _, p := range []Phase{PhasePending, PhaseBound, PhaseScheduled, PhaseRunning, PhaseTest, PhaseDone, PhaseCleanup, PhaseCleaned} {
		if !containsPhase(phases, p) {
			t.Errorf("no %s event in %v", p, phases)
		}
	}
	if sum.FirstResult.IsZero() || sum.CleanedUp.Before(sum.LastResult) {
		t.Errorf("timings: %+v", sum)
	}
	if l := leftovers(t, fc); !l.Empty() {
		t.Errorf("left behind: %+v", l)
	}
	if _, err := fc.cs.CoreV1().PersistentVolumes().Get(context.Background(), "pv-iolens-t1-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("PV not gone: %v", err)
	}
}

func containsPhase(ps []Phase, p Phase) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

// failures at each point: the error names the phase and cause, and what was
// created is deleted newest first.
func TestRunFailurePoints(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumeclaims"}, "", errors.New("exceeded quota: q1, requested: requests.storage=1Gi"))
	cases := []struct {
		name       string
		setup      func(fc *fakeCluster, cfg *Config)
		phase      string
		wantErr    []string
		wantHint   string
		wantWrites []string
	}{
		{
			name: "pvc create refused by quota",
			setup: func(fc *fakeCluster, _ *Config) {
				fc.cs.PrependReactor("create", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, forbidden
				})
			},
			phase: "create PVC", wantErr: []string{"exceeded quota"}, wantHint: "quota",
			wantWrites: nil,
		},
		{
			name: "bind timeout without a provisioner",
			setup: func(fc *fakeCluster, cfg *Config) {
				fc.neverBind = true
				fc.bindReason = "ExternalProvisioning"
				cfg.Timeouts.Bind = 50 * time.Millisecond
			},
			phase: "bind", wantErr: []string{"not bound after 50ms", "timed out", "ExternalProvisioning"}, wantHint: "example.com/fast",
			wantWrites: []string{"create persistentvolumeclaims iolens-t1-1", "create jobs iolens-t1-2",
				"delete jobs iolens-t1-2", "delete pods iolens-t1-2-pod", "delete persistentvolumeclaims iolens-t1-1"},
		},
		{
			name: "job create fails",
			setup: func(fc *fakeCluster, _ *Config) {
				fc.cs.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "", errors.New("RBAC says no"))
				})
			},
			phase: "create Job", wantErr: []string{"RBAC says no"}, wantHint: "rbac.yaml",
			wantWrites: []string{"create persistentvolumeclaims iolens-t1-1", "delete persistentvolumeclaims iolens-t1-1"},
		},
		{
			name: "pod refused by Pod Security admission fails at once",
			setup: func(fc *fakeCluster, cfg *Config) {
				fc.refusePods = `Error creating: pods "iolens-t1-2-x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`
				// Far longer than the test may take: the refusal must not
				// wait for it.
				cfg.Timeouts.Schedule = time.Hour
			},
			phase: "schedule", wantErr: []string{"cannot create its pod", "violates PodSecurity"}, wantHint: "privileged",
			wantWrites: []string{"create persistentvolumeclaims iolens-t1-1", "create jobs iolens-t1-2",
				"delete jobs iolens-t1-2", "delete persistentvolumeclaims iolens-t1-1"},
		},
		{
			name: "agent service account missing fails at once",
			setup: func(fc *fakeCluster, cfg *Config) {
				fc.refusePods = `Error creating: pods "iolens-t1-2-x" is forbidden: error looking up service account bench/iolens-agent: serviceaccount "iolens-agent" not found`
				cfg.Timeouts.Schedule = time.Hour
			},
			phase: "schedule", wantErr: []string{"cannot create its pod", "iolens-agent"}, wantHint: "deploy/rbac.yaml",
			wantWrites: []string{"create persistentvolumeclaims iolens-t1-1", "create jobs iolens-t1-2",
				"delete jobs iolens-t1-2", "delete persistentvolumeclaims iolens-t1-1"},
		},
		{
			name: "pod fails: out of space reported by the agent",
			setup: func(fc *fakeCluster, _ *Config) {
				fc.podFails = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}
				fc.logs = staticLogs(agentLog(t, 1, "fio job write_iops failed with error 28 (ENOSPC): No space left on device"))
			},
			phase: "run", wantErr: []string{"ENOSPC"}, wantHint: "--size",
			wantWrites: []string{"create persistentvolumeclaims iolens-t1-1", "create jobs iolens-t1-2",
				"delete jobs iolens-t1-2", "delete pods iolens-t1-2-pod", "delete persistentvolumeclaims iolens-t1-1"},
		},
		{
			name: "node disappears while the test runs",
			setup: func(fc *fakeCluster, _ *Config) {
				fc.logs = func(ctx context.Context, _ string, _ int) (io.ReadCloser, error) {
					_ = fc.cs.CoreV1().Nodes().Delete(ctx, "node-1", metav1.DeleteOptions{})
					return io.NopCloser(&errReader{errors.New("dial tcp 10.0.0.1:10250: connect: no route to host")}), nil
				}
			},
			phase: "run", wantErr: []string{"node node-1 disappeared"}, wantHint: "stable nodes",
			wantWrites: []string{"create persistentvolumeclaims iolens-t1-1", "create jobs iolens-t1-2",
				"delete jobs iolens-t1-2", "delete pods iolens-t1-2-pod", "delete persistentvolumeclaims iolens-t1-1"},
		},
		{
			name: "pod killed before its final record",
			setup: func(fc *fakeCluster, _ *Config) {
				fc.podFails = &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}
				log := agentLog(t, 1, "")
				fc.logs = staticLogs(log[:len(log)-10])
			},
			phase: "run", wantErr: []string{"without its final record", "OOMKilled"}, wantHint: "memory",
			wantWrites: []string{"create persistentvolumeclaims iolens-t1-1", "create jobs iolens-t1-2",
				"delete jobs iolens-t1-2", "delete pods iolens-t1-2-pod", "delete persistentvolumeclaims iolens-t1-1"},
		},
		{
			name: "log stream cut every time",
			setup: func(fc *fakeCluster, _ *Config) {
				log := agentLog(t, 2, "")
				fc.logs = func(context.Context, string, int) (io.ReadCloser, error) {
					return io.NopCloser(io.MultiReader(bytes.NewReader(log[:len(log)/2]), &errReader{errors.New("unexpected EOF from kubelet")})), nil
				}
			},
			phase: "run", wantErr: []string{"log stream cut", "unexpected EOF from kubelet"}, wantHint: "kubelet",
			wantWrites: []string{"create persistentvolumeclaims iolens-t1-1", "create jobs iolens-t1-2",
				"delete jobs iolens-t1-2", "delete pods iolens-t1-2-pod", "delete persistentvolumeclaims iolens-t1-1"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fc := newFakeCluster(t, "fast")
			fc.logs = staticLogs(agentLog(t, 2, ""))
			h := newHarness(t, fc, nil)
			c.setup(fc, &h.runner.Config)
			sum, err := h.run(t, context.Background(), oneTarget(t))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrRunFailed) {
				t.Errorf("error does not wrap ErrRunFailed: %v", err)
			}
			var te *TargetError
			if !errors.As(err, &te) {
				t.Fatalf("no TargetError in %v", err)
			}
			if te.Phase != c.phase {
				t.Errorf("phase %q, want %q (%v)", te.Phase, c.phase, err)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if !strings.Contains(te.Hint(), c.wantHint) {
				t.Errorf("hint %q lacks %q", te.Hint(), c.wantHint)
			}
			if got := writes(fc); strings.Join(got, "\n") != strings.Join(c.wantWrites, "\n") {
				t.Errorf("writes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.wantWrites, "\n"))
			}
			if sum.Failed() != 1 {
				t.Errorf("failed = %d", sum.Failed())
			}
			if l := leftovers(t, fc); !l.Empty() {
				t.Errorf("left behind: %+v", l)
			}
		})
	}
}

type errReader struct{ err error }

func (e *errReader) Read([]byte) (int, error) { return 0, e.err }

func TestRunLogStreamCutOnceResumes(t *testing.T) {
	fc := newFakeCluster(t, "fast")
	log := agentLog(t, 3, "")
	// The first stream ends in the middle of the second result.
	second := bytes.Index(log, []byte(`"type":"result"`))
	second = bytes.Index(log[second+1:], []byte(`"type":"result"`)) + second + 1
	fc.logs = func(_ context.Context, _ string, call int) (io.ReadCloser, error) {
		if call == 0 {
			return io.NopCloser(bytes.NewReader(log[:second])), nil
		}
		return io.NopCloser(bytes.NewReader(log)), nil
	}
	h := newHarness(t, fc, nil)
	if _, err := h.run(t, context.Background(), oneTarget(t)); err != nil {
		t.Fatal(err)
	}
	if len(h.results) != 3 {
		t.Fatalf("got %d results, want each of 3 once", len(h.results))
	}
	for i, r := range h.results {
		if r.Index != i+1 {
			t.Errorf("result %d has index %d", i, r.Index)
		}
	}
	cut := false
	for _, e := range h.events {
		cut = cut || strings.Contains(e.Message, "log stream cut")
	}
	if !cut {
		t.Error("no event about the cut stream")
	}
}

func TestRunInterruptedCleansUp(t *testing.T) {
	fc := newFakeCluster(t, "fast")
	ctx, cancel := context.WithCancel(context.Background())
	fc.logs = func(lctx context.Context, _ string, _ int) (io.ReadCloser, error) {
		cancel() // Ctrl-C while the test runs
		<-lctx.Done()
		return nil, lctx.Err()
	}
	h := newHarness(t, fc, nil)
	_, err := h.run(t, ctx, oneTarget(t))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v does not say the run was interrupted", err)
	}
	want := []string{"create persistentvolumeclaims iolens-t1-1", "create jobs iolens-t1-2",
		"delete jobs iolens-t1-2", "delete pods iolens-t1-2-pod", "delete persistentvolumeclaims iolens-t1-1"}
	if got := writes(fc); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("writes:\n%s", strings.Join(got, "\n"))
	}
	if l := leftovers(t, fc); !l.Empty() {
		t.Errorf("left behind: %+v", l)
	}
}

func TestRunClassNotFoundCreatesNothing(t *testing.T) {
	fc := newFakeCluster(t, "fast", "slow")
	h := newHarness(t, fc, nil)
	ts := targetsOf(t, Matrix{StorageClasses: []string{"fast", "nope"}, Sizes: []resource.Quantity{resource.MustParse("1Gi")}})
	_, err := h.run(t, context.Background(), ts)
	var cnf *ClassNotFoundError
	if !errors.As(err, &cnf) || cnf.Name != "nope" {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(cnf.Hint(), "fast, slow") {
		t.Errorf("hint %q", cnf.Hint())
	}
	if w := writes(fc); len(w) != 0 {
		t.Errorf("created %v", w)
	}
}

func TestRunRetainedPVReported(t *testing.T) {
	fc := newFakeCluster(t, "fast")
	fc.reclaim = corev1.PersistentVolumeReclaimRetain
	fc.logs = staticLogs(agentLog(t, 1, ""))
	h := newHarness(t, fc, nil)
	sum, err := h.run(t, context.Background(), oneTarget(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Retained) != 1 || sum.Retained[0] != "pv-iolens-t1-1" {
		t.Errorf("retained %v", sum.Retained)
	}
}

func TestRunCleanupErrorNotDropped(t *testing.T) {
	fc := newFakeCluster(t, "fast")
	fc.logs = staticLogs(agentLog(t, 1, ""))
	fc.cs.PrependReactor("delete", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd is on fire")
	})
	h := newHarness(t, fc, nil)
	_, err := h.run(t, context.Background(), oneTarget(t))
	var ce *CleanupError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "etcd is on fire") || !strings.Contains(err.Error(), "PVC iolens-t1-1") {
		t.Fatalf("cleanup error lost or unclear: %v", err)
	}
	if !strings.Contains(ce.Hint(), "iolens k8s cleanup -n bench --run r1") {
		t.Errorf("hint %q", ce.Hint())
	}
	// The Job was still deleted, before the PVC.
	w := writes(fc)
	if len(w) < 4 || w[2] != "delete jobs iolens-t1-2" {
		t.Errorf("writes %v", w)
	}
}

// concurrency counts how many targets stream logs at the same time.
type concurrency struct {
	mu       sync.Mutex
	now, max int
}

func (c *concurrency) logs(log []byte, hold time.Duration) func(context.Context, string, int) (io.ReadCloser, error) {
	return func(context.Context, string, int) (io.ReadCloser, error) {
		c.mu.Lock()
		c.now++
		c.max = max(c.max, c.now)
		c.mu.Unlock()
		time.Sleep(hold)
		c.mu.Lock()
		c.now--
		c.mu.Unlock()
		return io.NopCloser(bytes.NewReader(log)), nil
	}
}

func TestRunParallelVersusSequential(t *testing.T) {
	m := Matrix{StorageClasses: []string{"fast", "slow"}, Sizes: []resource.Quantity{resource.MustParse("1Gi")}, VolumesPerNode: 2}
	for _, c := range []struct {
		parallel bool
		wantMax  int
	}{{false, 2}, {true, 4}} {
		t.Run(fmt.Sprintf("parallel=%v", c.parallel), func(t *testing.T) {
			fc := newFakeCluster(t, "fast", "slow")
			var cc concurrency
			fc.logs = cc.logs(agentLog(t, 1, ""), 100*time.Millisecond)
			h := newHarness(t, fc, func(cfg *Config) { cfg.Parallel = c.parallel })
			sum, err := h.run(t, context.Background(), targetsOf(t, m))
			if err != nil {
				t.Fatal(err)
			}
			// Sequential runs a group (the volumes sharing a node) at a
			// time; parallel runs everything at once.
			if cc.max != c.wantMax {
				t.Errorf("max concurrent targets %d, want %d", cc.max, c.wantMax)
			}
			if len(sum.Outcomes) != 4 || len(h.results) != 4 {
				t.Errorf("%d outcomes, %d results", len(sum.Outcomes), len(h.results))
			}
			if !c.parallel {
				// Group 2 starts only after group 1 is cleaned up.
				w := writes(fc)
				lastDelete, firstG2 := -1, -1
				for i, s := range w {
					if strings.HasPrefix(s, "delete persistentvolumeclaims iolens-t1-") || strings.HasPrefix(s, "delete persistentvolumeclaims iolens-t2-") {
						lastDelete = i
					}
					if firstG2 < 0 && strings.HasPrefix(s, "create persistentvolumeclaims iolens-t3-") {
						firstG2 = i
					}
				}
				if firstG2 < lastDelete {
					t.Errorf("group 2 started before group 1 was cleaned up: %v", w)
				}
			}
		})
	}
}

func TestJobSpecLeastPrivilege(t *testing.T) {
	tg := Target{ID: "t1", StorageClass: "fast", Size: resource.MustParse("1Gi"), Group: "g1"}
	base := Config{Namespace: ns, RunID: "r1", Image: "img:1", Timeouts: DefaultTimeouts(), Agent: AgentArgs{Suite: "quick", RuntimeS: 5}}
	job := base.jobFor(tg, "claim", gateRef{})
	pod := job.Spec.Template.Spec
	psc := pod.SecurityContext
	c := pod.Containers[0]
	if !*psc.RunAsNonRoot || *psc.RunAsUser == 0 || psc.FSGroup == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security %+v", psc)
	}
	if *c.SecurityContext.AllowPrivilegeEscalation || len(c.SecurityContext.Capabilities.Drop) != 1 || c.SecurityContext.Capabilities.Drop[0] != "ALL" || len(c.SecurityContext.Capabilities.Add) != 0 {
		t.Errorf("container security %+v", c.SecurityContext)
	}
	if *pod.AutomountServiceAccountToken {
		t.Error("service account token mounted")
	}
	if got := strings.Join(c.Args, " "); got != "k8s agent --run-id r1 --target t1 --dir /data --suite quick --runtime 5" {
		t.Errorf("args %q", got)
	}
	if job.Labels[LabelManagedBy] != "iolens" || job.Spec.Template.Labels[LabelRunID] != "r1" {
		t.Errorf("labels %v", job.Labels)
	}
	if *job.Spec.BackoffLimit != 0 {
		t.Error("job retries")
	}

	block := base
	block.VolumeMode = corev1.PersistentVolumeBlock
	bj := block.jobFor(tg, "claim", gateRef{})
	bc := bj.Spec.Template.Spec.Containers[0]
	if len(bc.VolumeDevices) != 1 || *bj.Spec.Template.Spec.SecurityContext.RunAsUser != 0 || len(bc.SecurityContext.Capabilities.Add) != 0 {
		t.Errorf("block: devices %v, security %+v", bc.VolumeDevices, bj.Spec.Template.Spec.SecurityContext)
	}

	nc := base
	nc.HostPath = "/var/lib/etcd"
	tn := tg
	tn.Node = "cp-1"
	nj := nc.jobFor(tn, "", gateRef{})
	np := nj.Spec.Template.Spec
	if np.Volumes[1].HostPath == nil || np.Volumes[1].HostPath.Path != "/var/lib/etcd" {
		t.Errorf("volumes %+v", np.Volumes)
	}
	if np.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0] != "cp-1" {
		t.Error("node-check not pinned")
	}
	tol := false
	for _, x := range np.Tolerations {
		tol = tol || x.Key == "node-role.kubernetes.io/control-plane"
	}
	if !tol || nj.Labels[LabelRole] != "node-check" {
		t.Error("node-check does not tolerate control-plane nodes")
	}
	_ = batchv1.Job{}
}

func TestCleanupFindsLeftovers(t *testing.T) {
	fc := newFakeCluster(t, "fast")
	h := newHarness(t, fc, func(cfg *Config) { cfg.Keep = true })
	fc.logs = staticLogs(agentLog(t, 1, ""))
	sum, err := h.run(t, context.Background(), oneTarget(t))
	if err != nil || !sum.Outcomes[0].Kept {
		t.Fatalf("err %v kept %v", err, sum.Outcomes[0].Kept)
	}
	l := leftovers(t, fc)
	if len(l.PVCs) != 1 || len(l.Jobs) != 1 || len(l.Pods) != 1 {
		t.Fatalf("leftovers %+v", l)
	}
	c := &Client{CS: fc.cs, Poll: time.Millisecond}
	ctx, stop := context.WithCancel(context.Background())
	go fc.control(ctx)
	defer stop()
	left, err := Cleanup(context.Background(), c, ns, "r1", nil)
	if err != nil || !left.Empty() {
		t.Fatalf("cleanup: %v, left %+v", err, left)
	}
	w := writes(fc)
	// Job, then pod, then PVC.
	tail := strings.Join(w[len(w)-3:], "\n")
	if tail != "delete jobs iolens-t1-2\ndelete pods iolens-t1-2-pod\ndelete persistentvolumeclaims iolens-t1-1" {
		t.Errorf("order:\n%s", tail)
	}
}

// gatedLog is an agent of a --volumes-per-node group: ready, then (once
// the CLI has set the start time) one test.
func gatedLog(t *testing.T) []byte {
	var b bytes.Buffer
	w := NewFrameWriter(&b)
	_ = w.Write(Record{Type: RecordEvent, Ready: true})
	b.Write(agentLog(t, 1, ""))
	return b.Bytes()
}

func agentSA(fc *fakeCluster) {
	_, _ = fc.cs.CoreV1().ServiceAccounts(ns).Create(context.Background(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultAgentServiceAccount, Namespace: ns}}, metav1.CreateOptions{})
}

func TestRunGroupStartsTogether(t *testing.T) {
	m := Matrix{StorageClasses: []string{"fast"}, Sizes: []resource.Quantity{resource.MustParse("1Gi")}, VolumesPerNode: 3}
	for _, failOne := range []bool{false, true} {
		t.Run(fmt.Sprintf("one-fails=%v", failOne), func(t *testing.T) {
			fc := newFakeCluster(t, "fast")
			agentSA(fc)
			var mu sync.Mutex
			var patches []map[string]string
			podPatches := 0
			fc.cs.PrependReactor("patch", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
				var p struct {
					Data map[string]string `json:"data"`
				}
				_ = json.Unmarshal(a.(k8stesting.PatchAction).GetPatch(), &p)
				mu.Lock()
				patches = append(patches, p.Data)
				mu.Unlock()
				return false, nil, nil
			})
			fc.cs.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				podPatches++
				return true, nil, errors.New("no pods patch")
			})
			log := gatedLog(t)
			fc.logs = func(_ context.Context, pod string, _ int) (io.ReadCloser, error) {
				if failOne && strings.HasPrefix(pod, "iolens-t3-") {
					// Never ready: its pod dies before the test file is written.
					return io.NopCloser(bytes.NewReader(nil)), errors.New("container exited")
				}
				return io.NopCloser(bytes.NewReader(log)), nil
			}
			h := newHarness(t, fc, nil)
			_, err := h.run(t, context.Background(), targetsOf(t, m))
			if (err != nil) != failOne {
				t.Fatalf("error %v", err)
			}
			want := 2
			if !failOne {
				want = 3
			}
			if podPatches != 0 {
				t.Errorf("%d pod patches: the gate must not need them", podPatches)
			}
			// The start time is written once, for the group's key.
			if len(patches) != 1 || len(patches[0]) != 1 || patches[0]["g1"] == "" {
				t.Fatalf("gate writes %v, want one start time for g1", patches)
			}
			if _, err := time.Parse(time.RFC3339Nano, patches[0]["g1"]); err != nil {
				t.Errorf("start time %q: %v", patches[0]["g1"], err)
			}
			// Nobody was told to start before the whole group was ready.
			var waiting, started int
			for _, e := range h.events {
				switch {
				case strings.HasPrefix(e.Message, "ready; waiting"):
					waiting++
				case strings.HasPrefix(e.Message, "group complete"):
					started++
					if waiting < want-1 {
						t.Errorf("group started after %d of %d were ready", waiting+1, want)
					}
				}
			}
			if started != want {
				t.Errorf("%d pods told to start, want %d", started, want)
			}
			// The gate's ConfigMap is the run's first object and its last
			// to go, after every target was cleaned up.
			w := writes(fc)
			if !strings.HasPrefix(w[0], "create configmaps iolens-gate-") || !strings.HasPrefix(w[len(w)-1], "delete configmaps iolens-gate-") {
				t.Errorf("writes: %v", w)
			}
			if l := leftovers(t, fc); !l.Empty() {
				t.Errorf("left behind: %+v", l)
			}
		})
	}
}

func TestRunGatedPodsGetTheAgentToken(t *testing.T) {
	m := Matrix{StorageClasses: []string{"fast"}, Sizes: []resource.Quantity{resource.MustParse("1Gi")}, VolumesPerNode: 2}
	for _, withSA := range []bool{true, false} {
		t.Run(fmt.Sprintf("service-account=%v", withSA), func(t *testing.T) {
			fc := newFakeCluster(t, "fast")
			if withSA {
				agentSA(fc)
			}
			var mu sync.Mutex
			var jobs []*batchv1.Job
			fc.cs.PrependReactor("create", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
				mu.Lock()
				jobs = append(jobs, a.(k8stesting.CreateAction).GetObject().(*batchv1.Job).DeepCopy())
				mu.Unlock()
				return false, nil, nil
			})
			fc.logs = staticLogs(gatedLog(t))
			h := newHarness(t, fc, nil)
			if _, err := h.run(t, context.Background(), targetsOf(t, m)); err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 2 {
				t.Fatalf("%d jobs", len(jobs))
			}
			for _, j := range jobs {
				pod := j.Spec.Template.Spec
				args := strings.Join(pod.Containers[0].Args, " ")
				gated := strings.Contains(args, "--gate-configmap iolens-gate-") && strings.Contains(args, "--gate-key g1")
				if gated != withSA || *pod.AutomountServiceAccountToken != withSA {
					t.Errorf("gated %v, token %v, want %v: %s", gated, *pod.AutomountServiceAccountToken, withSA, args)
				}
				if withSA && pod.ServiceAccountName != DefaultAgentServiceAccount {
					t.Errorf("service account %q", pod.ServiceAccountName)
				}
			}
			said := false
			for _, e := range h.events {
				said = said || strings.Contains(e.Message, "no service account iolens-agent") && strings.Contains(e.Message, "not together")
			}
			if said == withSA {
				t.Errorf("missing service account reported: %v, want %v", said, !withSA)
			}
		})
	}
}

// A refused or failing gate ConfigMap never stops the run; a ConfigMap that
// cannot be deleted is a cleanup error, after every target was cleaned up.
func TestRunGateConfigMapFailures(t *testing.T) {
	m := Matrix{StorageClasses: []string{"fast"}, Sizes: []resource.Quantity{resource.MustParse("1Gi")}, VolumesPerNode: 2}
	cases := []struct {
		name, verb string
		wantErr    string
		wantEvent  string
	}{
		{"create refused", "create", "", "cannot create the start-gate ConfigMap"},
		{"patch refused", "patch", "", "could not open the start gate"},
		{"delete fails", "delete", "ConfigMap iolens-gate-", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fc := newFakeCluster(t, "fast")
			agentSA(fc)
			fc.cs.PrependReactor(c.verb, "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("RBAC says no"))
			})
			fc.logs = staticLogs(gatedLog(t))
			h := newHarness(t, fc, nil)
			sum, err := h.run(t, context.Background(), targetsOf(t, m))
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("error %v, want %q", err, c.wantErr)
			}
			if len(h.results) != 2 || sum.Failed() != 0 && c.wantErr == "" {
				t.Errorf("%d results, %d failed", len(h.results), sum.Failed())
			}
			if c.wantEvent != "" {
				said := false
				for _, e := range h.events {
					said = said || strings.Contains(e.Message, c.wantEvent)
				}
				if !said {
					t.Errorf("no event %q", c.wantEvent)
				}
			}
			w := writes(fc)
			// The targets' objects were deleted in any case, in reverse order.
			if strings.Count(strings.Join(w, "\n"), "delete persistentvolumeclaims") != 2 {
				t.Errorf("writes %v", w)
			}
		})
	}
}

func TestPlanGates(t *testing.T) {
	m := Matrix{StorageClasses: []string{"a", "b"}, Sizes: []resource.Quantity{resource.MustParse("1Gi")}, Nodes: []string{"n1", "n2"}}
	one := targetsOf(t, m)
	two := targetsOf(t, Matrix{StorageClasses: m.StorageClasses, Sizes: m.Sizes, Nodes: m.Nodes, VolumesPerNode: 2})
	keys := func(gs map[string]*gate, ts []Target) string {
		var out []string
		for _, t := range ts {
			k := "-"
			if g := gs[t.ID]; g != nil {
				k = fmt.Sprintf("%s/%d", g.key, g.total)
			}
			out = append(out, k)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		name     string
		ts       []Target
		parallel bool
		want     string
	}{
		{"one volume per node, in turn", one, false, "- - - -"},
		{"one volume per node, at once", one, true, "run/4 run/4 run/4 run/4"},
		{"two per node, in turn", two, false, "g1/2 g1/2 g2/2 g2/2 g3/2 g3/2 g4/2 g4/2"},
		{"two per node, at once", two, true, "run/8 run/8 run/8 run/8 run/8 run/8 run/8 run/8"},
		{"a single target", one[:1], true, "-"},
	} {
		if got := keys(planGates(c.ts, c.parallel), c.ts); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestWaitGate(t *testing.T) {
	cs := fake.NewSimpleClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "iolens-gate-x", Namespace: ns}})
	read := ConfigMapGate(cs, ns, "iolens-gate-x", "g1")
	// The start time appears after a while, 300 ms ahead of then.
	var set time.Time
	go func() {
		time.Sleep(100 * time.Millisecond)
		set = time.Now()
		at := set.Add(300 * time.Millisecond).UTC().Format(time.RFC3339Nano)
		_, _ = cs.CoreV1().ConfigMaps(ns).Update(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "iolens-gate-x", Namespace: ns},
			Data: map[string]string{"g1": at}}, metav1.UpdateOptions{})
	}()
	var said []string
	WaitGate(context.Background(), read, 5*time.Second, 10*time.Millisecond, func(s string) { said = append(said, s) })
	if d := time.Since(set); d < 280*time.Millisecond || d > 2*time.Second {
		t.Errorf("started %s after the start time was set, want 300ms", d)
	}
	if len(said) != 0 {
		t.Errorf("said %v", said)
	}

	// An agent that cannot read the gate says so once, and starts alone
	// at the timeout.
	said = nil
	failing := func(context.Context) (string, error) { return "", errors.New("configmaps is forbidden") }
	start := time.Now()
	WaitGate(context.Background(), failing, 100*time.Millisecond, 5*time.Millisecond, func(s string) { said = append(said, s) })
	if d := time.Since(start); d < 100*time.Millisecond || d > time.Second {
		t.Errorf("gave up after %s", d)
	}
	if len(said) != 2 || !strings.Contains(said[0], "forbidden") || !strings.Contains(said[1], "starting alone") {
		t.Errorf("said %q", said)
	}

	// An unreadable start time starts at once.
	said = nil
	WaitGate(context.Background(), func(context.Context) (string, error) { return "soon", nil }, time.Minute, time.Millisecond, func(s string) { said = append(said, s) })
	if len(said) != 1 || !strings.Contains(said[0], "unreadable") {
		t.Errorf("said %q", said)
	}
}

func TestJobSpecStartGate(t *testing.T) {
	c := Config{Namespace: ns, RunID: "r1", Image: "img:1", Timeouts: DefaultTimeouts(), Agent: AgentArgs{Suite: "quick"}}
	tg := Target{ID: "t1", StorageClass: "fast", Size: resource.MustParse("1Gi"), Group: "g1", Slot: 1}
	alone := c.jobFor(tg, "claim", gateRef{})
	if strings.Contains(strings.Join(alone.Spec.Template.Spec.Containers[0].Args, " "), "--gate") {
		t.Error("a target alone waits for a gate")
	}
	if *alone.Spec.Template.Spec.AutomountServiceAccountToken || alone.Spec.Template.Spec.ServiceAccountName != "" {
		t.Error("a target that waits for no gate gets a token")
	}
	grouped := c.jobFor(tg, "claim", gateRef{ConfigMap: "iolens-gate-abc", Key: "g1"})
	pod := grouped.Spec.Template.Spec
	args := strings.Join(pod.Containers[0].Args, " ")
	if !strings.Contains(args, "--gate-configmap iolens-gate-abc --gate-key g1 --gate-timeout 15m0s") {
		t.Errorf("grouped target args: %s", args)
	}
	if !*pod.AutomountServiceAccountToken || pod.ServiceAccountName != DefaultAgentServiceAccount {
		t.Errorf("token %v, service account %q", *pod.AutomountServiceAccountToken, pod.ServiceAccountName)
	}
	if len(grouped.Spec.Template.Annotations) != 0 {
		t.Errorf("annotations %v: the gate no longer goes through the pod", grouped.Spec.Template.Annotations)
	}
	c.AgentServiceAccount = "bench-agent"
	if sa := c.jobFor(tg, "claim", gateRef{ConfigMap: "x", Key: "g1"}).Spec.Template.Spec.ServiceAccountName; sa != "bench-agent" {
		t.Errorf("service account %q", sa)
	}
}

func TestJobSpecNodeCheckSeesOnlyItsDirectory(t *testing.T) {
	uid := int64(1001)
	c := Config{Namespace: ns, RunID: "r1", Image: "img:1", Timeouts: DefaultTimeouts(), Agent: AgentArgs{Suite: "etcd"},
		HostPath: "/var/lib/etcd", RunAsUser: &uid}
	job := c.jobFor(Target{ID: "t1", Node: "cp-1", Group: "g1"}, "", gateRef{})
	pod := job.Spec.Template.Spec
	name := NodeDirName("r1", "t1")
	agent := pod.Containers[0]
	var host *corev1.VolumeMount
	for i, m := range agent.VolumeMounts {
		if m.Name == "host" {
			host = &agent.VolumeMounts[i]
		}
	}
	if host == nil || host.SubPath != name || host.MountPath != "/host" {
		t.Fatalf("agent mounts %+v, want only subdirectory %s", agent.VolumeMounts, name)
	}
	if len(pod.InitContainers) != 1 {
		t.Fatalf("%d init containers", len(pod.InitContainers))
	}
	side := pod.InitContainers[0]
	if side.RestartPolicy == nil || *side.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Error("node-dir is not a sidecar: it would not outlive the agent to remove the directory")
	}
	if side.StartupProbe == nil || side.StartupProbe.Exec == nil || !strings.Contains(strings.Join(side.StartupProbe.Exec.Command, " "), "--check") {
		t.Error("no startup probe: the agent could start before its directory exists")
	}
	if got := strings.Join(side.Args, " "); got != "k8s node-dir --parent /host-parent --name "+name+" --run-id r1" {
		t.Errorf("sidecar args %q", got)
	}
	if len(side.SecurityContext.Capabilities.Add) != 0 || *side.SecurityContext.AllowPrivilegeEscalation {
		t.Error("the sidecar gains privileges")
	}
	if *pod.SecurityContext.RunAsUser != uid {
		t.Errorf("runs as %d, want %d (the directory's owner)", *pod.SecurityContext.RunAsUser, uid)
	}
	for _, v := range pod.Volumes {
		if v.HostPath != nil && (v.HostPath.Path != "/var/lib/etcd" || *v.HostPath.Type != corev1.HostPathDirectory) {
			t.Errorf("host volume %+v: must exist, never be created", v.HostPath)
		}
	}
}

// A node whose kubelet stops answering fails only its own targets, with
// the node's condition in the error; its pod is force-deleted, since no
// kubelet will confirm a graceful deletion, and everything is cleaned up.
func TestRunNodeLostFailsOnlyItsTargets(t *testing.T) {
	fc := newFakeCluster(t, "fast")
	ctx := context.Background()
	_, _ = fc.cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-2"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}, metav1.CreateOptions{})
	var mu sync.Mutex
	grace := map[string]string{}
	fc.cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.DeleteActionImpl).DeleteOptions
		g := "graceful"
		if opts.GracePeriodSeconds != nil && *opts.GracePeriodSeconds == 0 {
			g = "forced"
		}
		node := "?"
		if o, err := fc.cs.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), ns, a.(k8stesting.DeleteAction).GetName()); err == nil {
			node = o.(*corev1.Pod).Spec.NodeName
		}
		mu.Lock()
		grace[node] = g
		mu.Unlock()
		return false, nil, nil
	})
	log := agentLog(t, 2, "")
	fc.logs = func(ctx context.Context, pod string, call int) (io.ReadCloser, error) {
		p, err := fc.cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil || p.Spec.NodeName != "node-2" {
			return io.NopCloser(bytes.NewReader(log)), nil
		}
		if call == 2 {
			// The node controller notices the kubelet's silence.
			n, _ := fc.cs.CoreV1().Nodes().Get(ctx, "node-2", metav1.GetOptions{})
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
				Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}}
			_, _ = fc.cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		}
		return nil, errors.New(`Get "https://10.0.0.2:10250/containerLogs/bench/x/agent?follow=true": dial tcp 10.0.0.2:10250: connect: connection refused`)
	}
	h := newHarness(t, fc, func(c *Config) { c.Parallel = true })
	ts := targetsOf(t, Matrix{StorageClasses: []string{"fast"}, Sizes: []resource.Quantity{resource.MustParse("1Gi")}, Nodes: []string{"node-1", "node-2"}})
	sum, err := h.run(t, ctx, ts)
	var re *RunError
	if !errors.As(err, &re) || len(re.Errs) != 1 {
		t.Fatalf("error %v, want one failed target", err)
	}
	var te *TargetError
	if !errors.As(re.Errs[0], &te) || te.Target.Node != "node-2" || te.NodeLost != "node-2" {
		t.Fatalf("failed target: %v", re.Errs[0])
	}
	if want := "node node-2 is not ready (Ready=Unknown, NodeStatusUnknown: Kubelet stopped posting node status.)"; !strings.Contains(te.Error(), want) {
		t.Errorf("error %q lacks %q", te.Error(), want)
	}
	if !strings.Contains(te.Hint(), "other nodes' targets carry on") {
		t.Errorf("hint %q", te.Hint())
	}
	if len(h.results) != 2 || h.results[0].Target.Labels["k8s.node"] != "node-1" {
		t.Errorf("%d results, want node-1's 2", len(h.results))
	}
	if sum.Failed() != 1 {
		t.Errorf("%d failed", sum.Failed())
	}
	if len(grace) != 2 || grace["node-1"] != "graceful" || grace["node-2"] != "forced" {
		t.Errorf("pod deletions %v: node-2's must be forced", grace)
	}
	reported := false
	for _, e := range h.events {
		reported = reported || strings.Contains(e.Message, "cannot reach the kubelet of node node-2")
	}
	if !reported {
		t.Error("the unreachable kubelet was not reported while waiting")
	}
	if l := leftovers(t, fc); !l.Empty() {
		t.Errorf("left behind: %+v", l)
	}
}

// A class that binds at once made the volume in another zone than the node
// the target is pinned to: the run says which zone, which nodes could host
// it, and advises WaitForFirstConsumer, at once rather than after the
// schedule timeout.
func TestRunVolumeInAnotherZone(t *testing.T) {
	fc := newFakeCluster(t, "fast")
	ctx := context.Background()
	imm := storagev1.VolumeBindingImmediate
	sc, _ := fc.cs.StorageV1().StorageClasses().Get(ctx, "fast", metav1.GetOptions{})
	sc.VolumeBindingMode = &imm
	_, _ = fc.cs.StorageV1().StorageClasses().Update(ctx, sc, metav1.UpdateOptions{})
	ready := corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
	for _, n := range []struct{ name, zone string }{{"node-2", "z2"}, {"node-3", "z2"}, {"node-4", "z3"}} {
		_, _ = fc.cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name,
			Labels: map[string]string{"topology.kubernetes.io/zone": n.zone}}, Status: ready}, metav1.CreateOptions{})
	}
	fc.pvAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.disk.csi.azure.com/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"z2"}}}}}}}
	// The CSI driver's own topology key is not the nodes' label: only
	// nodes that carry it match. Give z2's nodes both.
	for _, n := range []string{"node-2", "node-3"} {
		node, _ := fc.cs.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		node.Labels["topology.disk.csi.azure.com/zone"] = "z2"
		_, _ = fc.cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
	}
	fc.unschedulable = "0/4 nodes are available: 1 node(s) had volume node affinity conflict, 3 node(s) didn't match Pod's node affinity/selector."
	h := newHarness(t, fc, func(c *Config) { c.Timeouts.Schedule = time.Hour })
	ts := targetsOf(t, Matrix{StorageClasses: []string{"fast"}, Sizes: []resource.Quantity{resource.MustParse("1Gi")}, Nodes: []string{"node-1", "node-4"}})
	start := time.Now()
	_, err := h.run(t, ctx, ts)
	if time.Since(start) > 10*time.Second {
		t.Errorf("took %s: the conflict waited for a timeout", time.Since(start))
	}
	var re *RunError
	if !errors.As(err, &re) || len(re.Errs) != 2 {
		t.Fatalf("error %v", err)
	}
	var te *TargetError
	errors.As(re.Errs[0], &te)
	for _, want := range []string{"volume node affinity conflict", "is in zone z2", "nodes that could host it: node-2, node-3", "the pod must run on node-1 (zone z1)"} {
		if !strings.Contains(te.Error(), want) {
			t.Errorf("error %q lacks %q", te.Error(), want)
		}
	}
	for _, want := range []string{"class fast binds Immediate", "WaitForFirstConsumer", "--node-selector topology.kubernetes.io/zone=z2"} {
		if !strings.Contains(te.Hint(), want) {
			t.Errorf("hint %q lacks %q", te.Hint(), want)
		}
	}
	// Said before anything was made, too: the nodes asked for are in two
	// zones and the class binds at once.
	warned := false
	for _, e := range h.events {
		warned = warned || strings.Contains(e.Message, "class fast binds Immediate and the nodes asked for are in 2 zones")
	}
	if !warned {
		t.Error("no warning before the run")
	}
	if l := leftovers(t, fc); !l.Empty() {
		t.Errorf("left behind: %+v", l)
	}
}

func TestVolumePlace(t *testing.T) {
	aff := func(key string, op corev1.NodeSelectorOperator, vals ...string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: vals}}}}}}}}
	}
	for _, c := range []struct {
		pv   *corev1.PersistentVolume
		want string
	}{
		{aff("topology.kubernetes.io/zone", corev1.NodeSelectorOpIn, "eastus-2"), "zone eastus-2"},
		{aff("topology.ebs.csi.aws.com/zone", corev1.NodeSelectorOpIn, "us-east-1b", "us-east-1a"), "zone us-east-1a, us-east-1b"},
		{aff("kubernetes.io/hostname", corev1.NodeSelectorOpIn, "e2e-node-2"), "node e2e-node-2"},
		{aff("rack", corev1.NodeSelectorOpIn, "r1"), "nodes where rack In r1"},
		{&corev1.PersistentVolume{}, ""},
	} {
		if got := volumePlace(c.pv); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// A result records the node's other attached volumes, as the catalog
// disks their classes provision, and how many of the run's volumes ran
// beside it: IBM splits the node's volume bandwidth over all of them.
func TestRunRecordsTheNodesVolumes(t *testing.T) {
	fc := newFakeCluster(t, "fast")
	fc.logs = staticLogs(agentLog(t, 1, ""))
	bg := context.Background()
	other := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-other"},
		Spec: corev1.PersistentVolumeSpec{StorageClassName: "fast", Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("300Gi")},
			ClaimRef: &corev1.ObjectReference{Namespace: "apps", Name: "data"}, PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "example.com", VolumeHandle: "vol-other"}}}}
	if _, err := fc.cs.CoreV1().PersistentVolumes().Create(bg, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node, err := fc.cs.CoreV1().Nodes().Get(bg, "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.VolumesAttached = []corev1.AttachedVolume{{Name: "kubernetes.io/csi/example.com^vol-other"},
		{Name: "kubernetes.io/csi/example.com^vol-iolens-t1-1"}, {Name: "kubernetes.io/csi/other.example^vol-x"}}
	if _, err := fc.cs.CoreV1().Nodes().UpdateStatus(bg, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, fc, func(c *Config) {
		c.Disk = func(prov string, params map[string]string, size int64) (string, bool) {
			return fmt.Sprintf("%s:%s:%d", prov, params["skuName"], size>>30), true
		}
	})
	ts := targetsOf(t, Matrix{StorageClasses: []string{"fast"}, Sizes: []resource.Quantity{resource.MustParse("1Gi")}, VolumesPerNode: 2})
	if _, err := h.run(t, bg, ts[:1]); err != nil {
		t.Fatal(err)
	}
	if len(h.results) == 0 {
		t.Fatal("no results")
	}
	l := h.results[0].Target.Labels
	for k, want := range map[string]string{"k8s.node.volumes-attached": "3", "k8s.group-size": "2",
		"k8s.node.attached-disks": "example.com/fast:Premium_LRS:300 + ?"} {
		if l[k] != want {
			t.Errorf("label %s = %q, want %q", k, l[k], want)
		}
	}
}
