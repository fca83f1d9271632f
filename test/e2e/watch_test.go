package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

const (
	watchNS   = "iolens-privileged"
	watchPort = "9101"
	// stallIOPS is the throttle the test puts on the writer's cgroup to
	// stall the disk under it, and stallHold how long it lasts at least.
	stallIOPS = 1
	stallHold = 6 * time.Second
)

// TestWatch deploys deploy/watch-daemonset.yaml as it is, apart from what
// differs on this cluster (the image, the kubelet's pod log directory and
// the loop device to watch, which 'iolens watch' skips unless named). A
// pod writes with fio to a PVC of the capped class; the test then squeezes
// the blkio throttle of the pod's cgroup on that class's loop device to
// stallIOPS, as a throttled or failing disk would, and restores it. The
// DaemonSet's /metrics, read through the API server's pod proxy, must show
// the device's state go to stalled and back, the time-in-state counter
// count the stall, and 'iolens k8s watch' must show the device stalled
// with the writer pod as its top pod. Rates are counters: the write rate
// is their increase between two scrapes.
func TestWatch(t *testing.T) {
	e := setup(t)
	start := time.Now()
	defer func() { t.Logf("TestWatch took %.1fs", time.Since(start).Seconds()) }()
	ctx := context.Background()

	dev, majmin := mountedDevice(t, filepath.Join(e.state, "pv", "b"))
	t.Logf("class local-path-b is on %s (%s)", dev, majmin)

	objs := loadManifest(t, filepath.Join("..", "..", "deploy", "watch-daemonset.yaml"))
	e.deployWatch(t, objs, dev)
	defer e.removeWatch(t, objs)
	pod := e.watchPod(t)
	t.Logf("DaemonSet ready after %.1fs: pod %s", time.Since(start).Seconds(), pod)

	writer := e.startWriter(t)
	defer e.removeWriter(t, writer)
	uid, cid := e.containerOf(t, writer)
	t.Logf("writer %s/%s running after %.1fs", nsPriv, writer, time.Since(start).Seconds())

	// The watch learns the device's normal rate from active intervals:
	// wait until the writer's IO shows, named, in the metrics.
	var m metrics
	waitFor(t, 60*time.Second, "the writer's IO in the watch metrics", func() bool {
		m = e.scrape(t, pod)
		return e.writeRate(t, pod, dev) >= 20 && m.has("iolens_watch_cgroup_bytes_per_second", "device", dev, "namespace", nsPriv, "pod", writer)
	})
	time.Sleep(2 * time.Second)
	w := e.writeRate(t, pod, dev)
	m = e.scrape(t, pod)
	if v, ok := m.get("iolens_watch_device_state", "device", dev, "node", node, "state", "stalled"); !ok || v != 0 {
		t.Fatalf("stalled state before the stall: %v (present %v), want 0", v, ok)
	}
	stalledBefore, _ := m.get("iolens_watch_device_state_seconds_total", "device", dev, "node", node, "state", "stalled")
	if _, ok := m.get("iolens_build_info"); !ok {
		t.Errorf("no iolens_build_info")
	}
	t.Logf("before the stall: %.0f write IOPS on %s", w, dev)

	// The stall: the writer's own throttle, squeezed.
	cg := filepath.Join("/sys/fs/cgroup/blkio", "kubepods", "besteffort", "pod"+uid, cid)
	restore := squeeze(t, cg, majmin, stallIOPS)
	defer restore()
	squeezed := time.Now()
	waitFor(t, 15*time.Second, "the device stalled", func() bool {
		m = e.scrape(t, pod)
		v, _ := m.get("iolens_watch_device_state", "device", dev, "node", node, "state", "stalled")
		return v == 1
	})
	t.Logf("device stalled %.1fs after the throttle", time.Since(squeezed).Seconds())

	// 'iolens k8s watch' during the stall: the device's row names the
	// writer. At ~1 IOPS an interval may see no completion of it, so a
	// table without it is asked again.
	want := nsPriv + "/" + writer
	var table string
	for i := 0; ; i++ {
		r := e.run(t, "watch", "--once", "--refresh", "1s", "--timeout", "20s")
		table = r.stdout
		if r.code != 0 {
			t.Fatalf("k8s watch: exit %d\n%s", r.code, table)
		}
		if row := rowOf(table, dev); strings.Contains(row, "stalled") && strings.Contains(row, want) {
			t.Logf("k8s watch during the stall:\n%s", table)
			break
		}
		if i == 4 {
			t.Fatalf("k8s watch: no row %q stalled with top pod %s:\n%s", dev, want, table)
		}
	}
	if d := stallHold - time.Since(squeezed); d > 0 {
		time.Sleep(d)
	}
	m = e.scrape(t, pod)
	if v, _ := m.get("iolens_watch_device_state", "device", dev, "state", "stalled"); v != 1 {
		t.Errorf("stalled state %v after %s of throttle, want 1", v, stallHold)
	}
	restore()
	held := time.Since(squeezed)
	waitFor(t, 15*time.Second, "the device no longer stalled", func() bool {
		m = e.scrape(t, pod)
		v, ok := m.get("iolens_watch_device_state", "device", dev, "state", "stalled")
		return ok && v == 0
	})
	t.Logf("throttle held %.1fs; stall over %.1fs after it was lifted", held.Seconds(), time.Since(squeezed.Add(held)).Seconds())
	if v, _ := m.get("iolens_watch_device_state_seconds_total", "device", dev, "node", node, "state", "stalled"); v-stalledBefore < 2 {
		t.Errorf("stalled seconds went from %v to %v, want the stall's few seconds more", stalledBefore, v)
	}
	if v, _ := m.get("iolens_watch_findings_total", "device", dev, "kind", "stall"); v < 1 {
		t.Errorf("no stall finding counted")
	}
	if w := e.writeRate(t, pod, dev); w < 20 {
		t.Errorf("%.0f write IOPS after the throttle was lifted; the writer did not recover", w)
	}

	// The pod was named through the API, with the service account of the
	// manifest: only the API knows the container's name.
	if !e.namedThroughAPI(t, pod, writer, "fio") {
		t.Errorf("no sample names container fio of %s/%s: the watch pod could not list pods through the API", nsPriv, writer)
	}

	// The watch pod ran the whole time: probes answered, no restart.
	p, err := e.cs.CoreV1().Pods(watchNS).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.RestartCount > 0 || !s.Ready {
			t.Errorf("watch container %s: ready %v, %d restarts", s.Name, s.Ready, s.RestartCount)
		}
	}
}

// mountedDevice returns the kernel name and major:minor of the block
// device mounted at dir.
func mountedDevice(t *testing.T, dir string) (string, string) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == dir {
			link, err := os.Readlink("/sys/dev/block/" + f[2])
			if err != nil {
				t.Fatalf("%s is mounted from %s, which is no block device: %v", dir, f[2], err)
			}
			return filepath.Base(link), f[2]
		}
	}
	t.Fatalf("nothing mounted at %s", dir)
	return "", ""
}

// loadManifest decodes every object of a YAML manifest strictly: an
// unknown or misspelt field fails the test.
func loadManifest(t *testing.T, path string) []runtime.Object {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	rd := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var objs []runtime.Object
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// deployWatch creates the manifest's objects, with the DaemonSet adapted
// to this cluster, and waits until its pod is ready.
func (e *env) deployWatch(t *testing.T, objs []runtime.Object, dev string) {
	t.Helper()
	ctx := context.Background()
	image := os.Getenv("IOLENS_E2E_IMAGE")
	if image == "" {
		t.Fatal("IOLENS_E2E_IMAGE is not set (run.sh sets it from the image tarball)")
	}
	var err error
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Namespace:
			// deploy/rbac.yaml made it already, with the same labels.
			if _, err = e.cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
				err = nil
			}
		case *corev1.ServiceAccount:
			_, err = e.cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = e.cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = e.cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.DaemonSet:
			ps := &o.Spec.Template.Spec
			c := &ps.Containers[0]
			c.Image = image
			c.Args = append(c.Args, dev)
			// The cluster's nodes share one kernel, so every watch pod
			// would see the same devices: one, on the node of the
			// watched device, is enough.
			ps.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
			for i := range ps.Volumes {
				if ps.Volumes[i].Name == "pod-logs" {
					// This kubelet's podLogsDir (cluster.sh).
					ps.Volumes[i].HostPath.Path = filepath.Join(e.state, "pod-logs")
				}
			}
			var pl string
			for _, m := range c.VolumeMounts {
				if m.Name == "pod-logs" {
					pl = m.MountPath
				}
			}
			if !contains(c.Args, "--pod-logs="+pl) {
				t.Fatalf("the DaemonSet mounts the pod logs at %s but does not pass it to --pod-logs: %v", pl, c.Args)
			}
			_, err = e.cs.AppsV1().DaemonSets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("the watch manifest has a %T, which the test does not create", o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 60*time.Second, "the watch DaemonSet ready", func() bool {
		ds, err := e.cs.AppsV1().DaemonSets(watchNS).Get(ctx, "iolens-watch", metav1.GetOptions{})
		return err == nil && ds.Status.DesiredNumberScheduled == 1 && ds.Status.NumberReady == 1
	})
}

func (e *env) watchPod(t *testing.T) string {
	t.Helper()
	l, err := e.cs.CoreV1().Pods(watchNS).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=iolens-watch"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.Items[0].Spec.NodeName != node {
		t.Fatalf("%d watch pods, want one on %s", len(l.Items), node)
	}
	return l.Items[0].Name
}

// removeWatch deletes what deployWatch created and waits until it is
// gone, its pods included. The namespace is deploy/rbac.yaml's too, and
// stays.
func (e *env) removeWatch(t *testing.T, objs []runtime.Object) {
	t.Helper()
	ctx := context.Background()
	fg := metav1.DeletePropagationForeground
	del := metav1.DeleteOptions{PropagationPolicy: &fg}
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *appsv1.DaemonSet:
			err = e.cs.AppsV1().DaemonSets(o.Namespace).Delete(ctx, o.Name, del)
		case *corev1.ServiceAccount:
			err = e.cs.CoreV1().ServiceAccounts(o.Namespace).Delete(ctx, o.Name, del)
		case *rbacv1.ClusterRole:
			err = e.cs.RbacV1().ClusterRoles().Delete(ctx, o.Name, del)
		case *rbacv1.ClusterRoleBinding:
			err = e.cs.RbacV1().ClusterRoleBindings().Delete(ctx, o.Name, del)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %T: %v", o, err)
		}
	}
	waitFor(t, 90*time.Second, "the watch pods gone", func() bool {
		l, err := e.cs.CoreV1().Pods(watchNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=iolens-watch"})
		_, dsErr := e.cs.AppsV1().DaemonSets(watchNS).Get(ctx, "iolens-watch", metav1.GetOptions{})
		return err == nil && len(l.Items) == 0 && apierrors.IsNotFound(dsErr)
	})
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			_, err = e.cs.RbacV1().ClusterRoles().Get(ctx, o.Name, metav1.GetOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = e.cs.RbacV1().ClusterRoleBindings().Get(ctx, o.Name, metav1.GetOptions{})
		case *corev1.ServiceAccount:
			_, err = e.cs.CoreV1().ServiceAccounts(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		default:
			continue
		}
		if !apierrors.IsNotFound(err) {
			t.Errorf("%T left: %v", o, err)
		}
	}
}

// startWriter starts a pod that writes 4 KiB blocks with fio, one at a
// time and synchronously, as a database does, to a PVC of the capped
// class, and returns its name once it runs.
func (e *env) startWriter(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	class := "local-path-b"
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "watch-writer", Namespace: nsPriv},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")}},
		},
	}
	if _, err := e.cs.CoreV1().PersistentVolumeClaims(nsPriv).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	grace := int64(0)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "watch-writer", Namespace: nsPriv},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			// On the node of the watch pod and of local-path-b's capped
			// device (the other node's storage is elsewhere).
			NodeSelector: map[string]string{"kubernetes.io/hostname": node},
			Containers: []corev1.Container{{
				Name:            "fio",
				Image:           os.Getenv("IOLENS_E2E_IMAGE"),
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"fio", "--name=writer", "--filename=/data/writer", "--size=16m", "--rw=randwrite", "--bs=4k",
					"--ioengine=psync", "--direct=1", "--time_based", "--runtime=300", "--output-format=terse"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}}},
		},
	}
	if _, err := e.cs.CoreV1().Pods(nsPriv).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the writer pod running", func() bool {
		p, err := e.cs.CoreV1().Pods(nsPriv).Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil && p.Status.Phase != corev1.PodPending && p.Status.Phase != corev1.PodRunning {
			t.Fatalf("writer pod %s", p.Status.Phase)
		}
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
	return pod.Name
}

func (e *env) removeWriter(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	zero := int64(0)
	if err := e.cs.CoreV1().Pods(nsPriv).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
	waitFor(t, 60*time.Second, "the writer pod gone", func() bool {
		_, err := e.cs.CoreV1().Pods(nsPriv).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if err := e.cs.CoreV1().PersistentVolumeClaims(nsPriv).Delete(ctx, "watch-writer", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
	e.nothingLeft(t)
}

// containerOf returns the pod UID and the container ID of a one-container
// pod: together they name its cgroup.
func (e *env) containerOf(t *testing.T, name string) (string, string) {
	t.Helper()
	p, err := e.cs.CoreV1().Pods(nsPriv).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("pod %s: %d container statuses", name, len(p.Status.ContainerStatuses))
	}
	if p.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Fatalf("pod %s: QoS class %s, want BestEffort", name, p.Status.QOSClass)
	}
	_, id, ok := strings.Cut(p.Status.ContainerStatuses[0].ContainerID, "://")
	if !ok {
		t.Fatalf("pod %s: container ID %q", name, p.Status.ContainerStatuses[0].ContainerID)
	}
	return string(p.UID), id
}

// squeeze sets the blkio IOPS throttle of cgroup dir on device majmin to
// iops, for reads and writes, and returns the function that puts the
// previous limits back (0 removes a limit that was not there before). The
// returned function may be called more than once.
func squeeze(t *testing.T, dir, majmin string, iops int) func() {
	t.Helper()
	files := []string{"blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"}
	old := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("the writer's cgroup: %v", err)
		}
		old[f] = "0"
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, majmin+" "); ok {
				old[f] = strings.TrimSpace(v)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(majmin+" "+strconv.Itoa(iops)), 0); err != nil {
			t.Fatalf("throttling %s: %v", f, err)
		}
	}
	t.Logf("%s on %s: %d IOPS (was %s)", dir, majmin, iops, old[files[1]])
	done := false
	return func() {
		if done {
			return
		}
		done = true
		for _, f := range files {
			// The cgroup is gone with the pod: nothing left to restore.
			if err := os.WriteFile(filepath.Join(dir, f), []byte(majmin+" "+old[f]), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("restoring %s: %v", f, err)
			}
		}
	}
}

// metrics is a Prometheus text exposition, by metric family.
type metrics map[string]*dto.MetricFamily

// scrape reads the watch pod's /metrics through the API server's pod
// proxy.
func (e *env) scrape(t *testing.T, pod string) metrics {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := e.cs.CoreV1().Pods(watchNS).ProxyGet("http", pod, watchPort, "metrics", nil).DoRaw(ctx)
	if err != nil {
		t.Fatalf("scraping %s through the API server: %v", pod, err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: /metrics is not Prometheus text format: %v", pod, err)
	}
	return mfs
}

// get returns the value of the first sample of name whose labels include
// the given label/value pairs.
func (m metrics) get(name string, labels ...string) (float64, bool) {
next:
	for _, s := range m[name].GetMetric() {
		have := map[string]string{}
		for _, l := range s.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if v, ok := have[labels[i]]; !ok || v != labels[i+1] {
				continue next
			}
		}
		switch {
		case s.Gauge != nil:
			return s.GetGauge().GetValue(), true
		case s.Counter != nil:
			return s.GetCounter().GetValue(), true
		case s.Untyped != nil:
			return s.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// writeRate is the device's write IOPS from the watch's counter: its
// increase between two scrapes 2 s apart, as rate() would read it.
func (e *env) writeRate(t *testing.T, pod, dev string) float64 {
	t.Helper()
	a, _ := e.scrape(t, pod).get("iolens_watch_device_io_operations_total", "device", dev, "op", "write")
	start := time.Now()
	time.Sleep(2 * time.Second)
	b, ok := e.scrape(t, pod).get("iolens_watch_device_io_operations_total", "device", dev, "op", "write")
	if !ok {
		return 0
	}
	return (b - a) / time.Since(start).Seconds()
}

func (m metrics) has(name string, labels ...string) bool {
	_, ok := m.get(name, labels...)
	return ok
}

// namedThroughAPI reads the watch pod's NDJSON output and reports whether
// a sample lists the writer pod's container by name.
func (e *env) namedThroughAPI(t *testing.T, pod, writer, container string) bool {
	t.Helper()
	b, err := e.cs.CoreV1().Pods(watchNS).GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var named, unnamed int
	for _, line := range bytes.Split(b, []byte("\n")) {
		var r result.WatchRecord
		if json.Unmarshal(line, &r) != nil || r.Type != result.WatchTypeSample {
			continue
		}
		for _, c := range r.Top {
			if c.Namespace == nsPriv && c.Pod == writer {
				if c.Container == container {
					named++
				} else {
					unnamed++
				}
			}
		}
	}
	t.Logf("samples naming the writer: %d with its container's name, %d without", named, unnamed)
	return named > 0
}

// rowOf returns the line of an 'iolens k8s watch' table for a device.
func rowOf(table, dev string) string {
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == node && f[1] == dev {
			return line
		}
	}
	return ""
}
