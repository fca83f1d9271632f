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
		"topology.kubernetes.io/zone": "z1", "node.kubernetes.io/instance-type": "m5.large"}}})
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
		if res := a.GetResource().Resource; err == nil && (res == "persistentvolumeclaims" || res == "jobs") {
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
				Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: fc.reclaim,
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
			pod.Status.Phase = corev1.PodRunning
			if fc.podFails != nil {
				pod.Status.Phase = corev1.PodFailed
				pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: containerTag, State: corev1.ContainerState{Terminated: fc.podFails}}}
			}
			_, _ = cs.CoreV1().Pods(ns).Create(bg, pod, metav1.CreateOptions{})
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
	job := base.jobFor(tg, "claim")
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
	bj := block.jobFor(tg, "claim")
	bc := bj.Spec.Template.Spec.Containers[0]
	if len(bc.VolumeDevices) != 1 || *bj.Spec.Template.Spec.SecurityContext.RunAsUser != 0 || len(bc.SecurityContext.Capabilities.Add) != 0 {
		t.Errorf("block: devices %v, security %+v", bc.VolumeDevices, bj.Spec.Template.Spec.SecurityContext)
	}

	nc := base
	nc.HostPath = "/var/lib/etcd"
	tn := tg
	tn.Node = "cp-1"
	nj := nc.jobFor(tn, "")
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

func TestRunGroupStartsTogether(t *testing.T) {
	m := Matrix{StorageClasses: []string{"fast"}, Sizes: []resource.Quantity{resource.MustParse("1Gi")}, VolumesPerNode: 3}
	for _, failOne := range []bool{false, true} {
		t.Run(fmt.Sprintf("one-fails=%v", failOne), func(t *testing.T) {
			fc := newFakeCluster(t, "fast")
			var mu sync.Mutex
			patched := map[string]string{}
			fc.cs.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				var p struct {
					Metadata struct{ Annotations map[string]string } `json:"metadata"`
				}
				_ = json.Unmarshal(a.(k8stesting.PatchAction).GetPatch(), &p)
				mu.Lock()
				patched[a.(k8stesting.PatchAction).GetName()] = p.Metadata.Annotations[AnnotationStart]
				mu.Unlock()
				return true, &corev1.Pod{}, nil
			})
			log := gatedLog(t)
			fc.logs = func(_ context.Context, pod string, _ int) (io.ReadCloser, error) {
				if failOne && strings.HasPrefix(pod, "iolens-t3-") {
					// Never ready: its pod dies before the test file is written.
					return io.NopCloser(bytes.NewReader(nil)), errors.New("container exited")
				}
				return io.NopCloser(bytes.NewReader(log)), nil
			}
			h := newHarness(t, fc, func(c *Config) { c.Parallel = true })
			_, err := h.run(t, context.Background(), targetsOf(t, m))
			if (err != nil) != failOne {
				t.Fatalf("error %v", err)
			}
			want := 3
			if failOne {
				want = 2
			}
			if len(patched) != want {
				t.Fatalf("start time set on %d pods (%v), want %d", len(patched), patched, want)
			}
			var start string
			for pod, s := range patched {
				if start != "" && s != start {
					t.Errorf("pod %s starts at %s, the group at %s", pod, s, start)
				}
				start = s
			}
			if _, err := time.Parse(time.RFC3339Nano, start); err != nil {
				t.Errorf("start time %q: %v", start, err)
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
		})
	}
}

func TestJobSpecStartGate(t *testing.T) {
	c := Config{Namespace: ns, RunID: "r1", Image: "img:1", Timeouts: DefaultTimeouts(), Agent: AgentArgs{Suite: "quick"}}
	alone := c.jobFor(Target{ID: "t1", StorageClass: "fast", Size: resource.MustParse("1Gi"), Group: "g1"}, "claim")
	if strings.Contains(strings.Join(alone.Spec.Template.Spec.Containers[0].Args, " "), "--start-gate") {
		t.Error("a target alone on its node waits for a group")
	}
	grouped := c.jobFor(Target{ID: "t1", StorageClass: "fast", Size: resource.MustParse("1Gi"), Group: "g1", Slot: 1}, "claim")
	args := strings.Join(grouped.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--start-gate "+GatePath) {
		t.Errorf("grouped target args: %s", args)
	}
	if _, ok := grouped.Spec.Template.Annotations[AnnotationStart]; !ok {
		t.Error("no start annotation on the pod template")
	}
	var dw *corev1.DownwardAPIVolumeSource
	for _, v := range grouped.Spec.Template.Spec.Volumes {
		if v.DownwardAPI != nil {
			dw = v.DownwardAPI
		}
	}
	if dw == nil || dw.Items[0].FieldRef.FieldPath != "metadata.annotations['"+AnnotationStart+"']" {
		t.Errorf("downward API volume: %+v", dw)
	}
}
