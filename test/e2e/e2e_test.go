// Package e2e tests 'iolens k8s' against a real cluster of two nodes that
// run.sh starts (cluster.sh). Without one (IOLENS_E2E_KUBECONFIG unset), the
// tests skip: run them with 'make e2e' as root.
//
// The storage classes: local-path (dynamic, ext4 on a loop device of each
// node; uncapped on e2e-node, capped at IOLENS_E2E_CAP2_IOPS per container
// on e2e-node-2, like a node with another disk), local-path-b (the same on
// e2e-node's other loop device, capped at IOLENS_E2E_CAP_IOPS by the runc
// wrapper, like a capped cloud disk) and local-block (static PVs on raw
// loop devices of e2e-node, for Block mode; the test creates them).
//
// The CLI runs as a user bound to nothing but the Roles and the ClusterRole
// of deploy/rbac.yaml, in its two namespaces: what it needs is what that
// file grants.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	node      = "e2e-node"
	node2     = "e2e-node-2"
	managedBy = "app.kubernetes.io/managed-by=iolens"
	// nsRestricted enforces the restricted Pod Security profile: the
	// Filesystem runs must pass it. nsPriv allows Block mode and
	// node-check, which need root. Both come from deploy/rbac.yaml.
	nsRestricted = "iolens"
	nsPriv       = "iolens-privileged"
	user         = "iolens-e2e-user"
)

type env struct {
	// kubeconfig is the admin's; userKubeconfig that of a user with only
	// the rights of deploy/rbac.yaml, which the CLI runs as.
	kubeconfig, userKubeconfig, iolens, kubectl, state, cluster string
	cs                                                          kubernetes.Interface
	db                                                          string
}

func setup(t *testing.T) *env {
	t.Helper()
	e := &env{
		kubeconfig:     os.Getenv("IOLENS_E2E_KUBECONFIG"),
		userKubeconfig: os.Getenv("IOLENS_E2E_USER_KUBECONFIG"),
		iolens:         os.Getenv("IOLENS_E2E_IOLENS"),
		kubectl:        os.Getenv("IOLENS_E2E_KUBECTL"),
		state:          os.Getenv("IOLENS_E2E_STATE"),
		cluster:        os.Getenv("IOLENS_E2E_CLUSTER"),
	}
	if e.kubeconfig == "" || e.iolens == "" || e.state == "" {
		t.Skip("no e2e cluster: run 'make e2e' as root (it starts one and sets IOLENS_E2E_KUBECONFIG, IOLENS_E2E_IOLENS, IOLENS_E2E_STATE)")
	}
	if e.userKubeconfig == "" || e.kubectl == "" || e.cluster == "" {
		t.Fatal("IOLENS_E2E_USER_KUBECONFIG, IOLENS_E2E_KUBECTL and IOLENS_E2E_CLUSTER are not set (run.sh sets them)")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if e.cs, err = kubernetes.NewForConfig(rc); err != nil {
		t.Fatal(err)
	}
	e.db = filepath.Join(t.TempDir(), "history.db")
	ctx := context.Background()
	// The namespaces, Roles and agent service account of deploy/rbac.yaml,
	// as a cluster admin would apply them, and the user bound to them.
	apply := exec.Command(e.kubectl, "--kubeconfig", e.kubeconfig, "apply", "-f", filepath.Join("..", "..", "deploy", "rbac.yaml"))
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply -f deploy/rbac.yaml: %v\n%s", err, out)
	}
	for _, ns := range []string{nsRestricted, nsPriv} {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-user", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "iolens"},
			Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}}
		if _, err := e.cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-user"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "iolens-read"},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}}
	if _, err := e.cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The namespace controller creates the default service account, which
	// the Job controller needs before it can create pods.
	for _, ns := range []string{nsRestricted, nsPriv} {
		waitFor(t, 30*time.Second, "service account in "+ns, func() bool {
			_, err := e.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			return err == nil
		})
	}
	for _, n := range []string{node, node2} {
		waitFor(t, 60*time.Second, "node "+n+" ready", func() bool {
			nd, err := e.cs.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false
			}
			for _, c := range nd.Status.Conditions {
				if c.Type == corev1.NodeReady {
					return c.Status == corev1.ConditionTrue
				}
			}
			return false
		})
	}
	return e
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !ok() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// result of one iolens invocation.
type cmdResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// cmd runs iolens k8s as the least-privilege user.
func (e *env) cmd(ctx context.Context, args ...string) *exec.Cmd {
	return e.cmdAs(ctx, e.userKubeconfig, args...)
}

func (e *env) cmdAs(ctx context.Context, kubeconfig string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, e.iolens, append([]string{"k8s", "--kubeconfig", kubeconfig}, args...)...)
	c.Env = append(os.Environ(), "IOLENS_DB="+e.db, "NO_COLOR=1")
	return c
}

// run runs iolens k8s as the least-privilege user; runAdmin as the
// cluster's admin, for what needs more (every namespace).
func (e *env) run(t *testing.T, args ...string) cmdResult {
	t.Helper()
	return e.runAs(t, e.userKubeconfig, args...)
}

func (e *env) runAdmin(t *testing.T, args ...string) cmdResult {
	t.Helper()
	return e.runAs(t, e.kubeconfig, args...)
}

func (e *env) runAs(t *testing.T, kubeconfig string, args ...string) cmdResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := e.cmdAs(ctx, kubeconfig, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	r := cmdResult{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("iolens %v: %v", args, err)
	}
	t.Logf("iolens k8s %s: exit %d in %.1fs\n%s", strings.Join(args, " "), r.code, r.took.Seconds(), r.stderr)
	return r
}

func results(t *testing.T, ndjson string) []result.Result {
	t.Helper()
	var rs []result.Result
	sc := bufio.NewScanner(strings.NewReader(ndjson))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r result.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("result line: %v: %.200s", err, sc.Text())
		}
		rs = append(rs, r)
	}
	return rs
}

// nothingLeft fails unless no object of any iolens run is left, no PV is
// bound to or released from an iolens claim (apart from the Retain PVs
// listed in keep) and the provisioner's directories are empty.
func (e *env) nothingLeft(t *testing.T, keepPVs ...string) {
	t.Helper()
	ctx := context.Background()
	var left []string
	// Deletion waits on the provisioner's helper pods, which are slow on
	// a loaded machine; what is left is named if it does not go.
	const budget = 2 * time.Minute
	end := time.Now().Add(budget)
	for gone := func() bool {
		left = nil
		opt := metav1.ListOptions{LabelSelector: managedBy}
		if l, err := e.cs.CoreV1().PersistentVolumeClaims("").List(ctx, opt); err == nil {
			for _, o := range l.Items {
				left = append(left, "pvc "+o.Namespace+"/"+o.Name)
			}
		}
		if l, err := e.cs.BatchV1().Jobs("").List(ctx, opt); err == nil {
			for _, o := range l.Items {
				left = append(left, "job "+o.Namespace+"/"+o.Name)
			}
		}
		if l, err := e.cs.CoreV1().Pods("").List(ctx, opt); err == nil {
			for _, o := range l.Items {
				left = append(left, "pod "+o.Namespace+"/"+o.Name)
			}
		}
		if l, err := e.cs.CoreV1().ConfigMaps("").List(ctx, opt); err == nil {
			for _, o := range l.Items {
				left = append(left, "configmap "+o.Namespace+"/"+o.Name)
			}
		}
		// The provisioner's helper pods run in local-path-storage.
		if l, err := e.cs.CoreV1().Pods("local-path-storage").List(ctx, metav1.ListOptions{}); err == nil {
			for _, o := range l.Items {
				left = append(left, "helper pod "+o.Name)
			}
		}
		if l, err := e.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{}); err == nil {
			for _, o := range l.Items {
				if !contains(keepPVs, o.Name) {
					left = append(left, "pv "+o.Name+" ("+string(o.Status.Phase)+")")
				}
			}
		}
		for _, d := range []string{"pv/a", "pv/b", "n2/pv/a", "n2/pv/b"} {
			ents, _ := os.ReadDir(filepath.Join(e.state, d))
			for _, de := range ents {
				if de.Name() != "lost+found" {
					left = append(left, "dir "+filepath.Join(d, de.Name()))
				}
			}
		}
		return len(left) == 0
	}; !gone(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("left behind after %s: %v", budget, left)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// jobFile is a short fio job: one 4 KiB random read test of a few seconds.
func jobFile(t *testing.T, runtime int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "randread.fio")
	job := fmt.Sprintf("[global]\nioengine=libaio\ndirect=1\ntime_based=1\nruntime=%d\nsize=32m\n\n[randread-4k]\nrw=randread\nbs=4k\niodepth=16\n", runtime)
	if err := os.WriteFile(p, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func capIOPS() float64 {
	if v, err := strconv.ParseFloat(os.Getenv("IOLENS_E2E_CAP_IOPS"), 64); err == nil {
		return v
	}
	return 400
}

func TestCluster(t *testing.T) {
	e := setup(t)
	// In order: each case starts from an empty cluster and must leave it
	// empty.
	t.Run("classes", e.testClasses)
	t.Run("matrix", e.testMatrix)
	t.Run("all-nodes", e.testAllNodes)
	t.Run("placement", e.testPlacement)
	t.Run("volumes-per-node-parallel", e.testVolumesPerNodeParallel)
	t.Run("targets-and-flags", e.testTargetsAndFlags)
	t.Run("diagnose", e.testDiagnose)
	t.Run("block", e.testBlock)
	t.Run("node-check", e.testNodeCheck)
	t.Run("missing-class", e.testMissingClass)
	t.Run("never-binds", e.testNeverBinds)
	t.Run("pod-security-refused", e.testPodSecurityRefused)
	t.Run("interrupt", e.testInterrupt)
	t.Run("node-gone", e.testNodeGone)
	t.Run("keep-and-cleanup", e.testKeepAndCleanup)
	t.Run("kubectl-plugin", e.testPlugin)
}

func (e *env) testClasses(t *testing.T) {
	r := e.run(t, "classes", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	var cls []struct {
		Name              string `json:"name"`
		Provisioner       string `json:"provisioner"`
		Default           bool   `json:"default"`
		VolumeBindingMode string `json:"volume_binding_mode"`
		ReclaimPolicy     string `json:"reclaim_policy"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &cls); err != nil {
		t.Fatalf("classes -o json: %v\n%s", err, r.stdout)
	}
	got := map[string]string{}
	for _, c := range cls {
		got[c.Name] = fmt.Sprintf("%s %v %s %s", c.Provisioner, c.Default, c.VolumeBindingMode, c.ReclaimPolicy)
	}
	want := map[string]string{
		"local-path":   "rancher.io/local-path true WaitForFirstConsumer Delete",
		"local-path-b": "rancher.io/local-path false WaitForFirstConsumer Delete",
		"local-block":  "kubernetes.io/no-provisioner false WaitForFirstConsumer Retain",
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("class %s: got %q, want %q", n, got[n], w)
		}
	}
	r = e.run(t, "classes")
	if r.code != 0 || !strings.Contains(r.stdout, "PROVISIONER") || !strings.Contains(r.stdout, "local-path-b") {
		t.Errorf("classes table: exit %d\n%s", r.code, r.stdout)
	}
}

// testMatrix: two classes × one size, two volumes per node, all at once, in
// a namespace that enforces the restricted Pod Security profile, on
// e2e-node (where one class is capped and the other not).
func (e *env) testMatrix(t *testing.T) {
	r := e.run(t, "run", "-n", nsRestricted, "--storage-class", "local-path,local-path-b", "--pvc-size", "1Gi",
		"--nodes", node, "--volumes-per-node", "2", "--parallel", "--job", jobFile(t, 3), "-o", "ndjson")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	rs := results(t, r.stdout)
	if len(rs) != 4 {
		t.Fatalf("%d results, want 4 (2 classes × 2 volumes)", len(rs))
	}
	slots := map[string]int{}
	pvs := map[string]bool{}
	capped := capIOPS()
	for _, res := range rs {
		l := res.Target.Labels
		for _, k := range []string{"k8s.context", "k8s.namespace", "k8s.storage-class", "k8s.provisioner", "k8s.pv", "k8s.pvc",
			"k8s.node", "k8s.size-requested", "k8s.size-actual", "k8s.pod", "k8s.run-id", "k8s.volume-mode"} {
			if l[k] == "" {
				t.Errorf("result of %s has no label %s: %v", l["k8s.target"], k, l)
			}
		}
		if l["k8s.node"] != node || l["k8s.namespace"] != nsRestricted || l["k8s.provisioner"] != "rancher.io/local-path" ||
			l["k8s.size-requested"] != "1Gi" || l["k8s.volume-mode"] != "Filesystem" || l["k8s.context"] != "iolens-e2e" {
			t.Errorf("metadata: %v", l)
		}
		if res.Status != "ok" || res.Read == nil {
			t.Fatalf("result %s: status %s, read %v", l["k8s.target"], res.Status, res.Read)
		}
		slots[l["k8s.storage-class"]+"#"+l["k8s.slot"]]++
		pvs[l["k8s.pv"]] = true
		iops := res.Read.IOPS
		t.Logf("%s slot %s: %.0f IOPS", l["k8s.storage-class"], l["k8s.slot"], iops)
		switch l["k8s.storage-class"] {
		case "local-path-b":
			// The class's disk is capped: the result must show the cap.
			if capped > 0 && (iops < 0.8*capped || iops > 1.1*capped) {
				t.Errorf("capped class: %.0f IOPS, want about %.0f", iops, capped)
			}
		case "local-path":
			if capped > 0 && iops < 2*capped {
				t.Errorf("uncapped class: %.0f IOPS, want well above the other class's cap %.0f", iops, capped)
			}
		}
	}
	// The two volumes of a class share the node: they are measured
	// together, whatever their provisioning times (the start gate). Both
	// tests last as long, so they end together too.
	ends := map[string][]time.Time{}
	for _, res := range rs {
		ends[res.Target.Labels["k8s.storage-class"]] = append(ends[res.Target.Labels["k8s.storage-class"]], res.End)
	}
	for class, e := range ends {
		if len(e) != 2 {
			continue
		}
		d := e[0].Sub(e[1]).Abs()
		t.Logf("class %s: the two volumes' tests ended %.3fs apart", class, d.Seconds())
		if d > 1500*time.Millisecond {
			t.Errorf("class %s: the two volumes' tests ended %.1fs apart; they should run together", class, d.Seconds())
		}
	}
	if !strings.Contains(r.stderr, "group complete: starting together") {
		t.Errorf("no start gate in the progress")
	}
	for _, k := range []string{"local-path#1", "local-path#2", "local-path-b#1", "local-path-b#2"} {
		if slots[k] != 1 {
			t.Errorf("target %s: %d results, want 1 (%v)", k, slots[k], slots)
		}
	}
	if len(pvs) != 4 {
		t.Errorf("%d distinct PVs, want 4", len(pvs))
	}
	for _, s := range []string{"bound", "scheduled", "running test 1/1", "cleaned", "first result"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("progress has no %q", s)
		}
	}
	if !strings.Contains(r.stderr, "saved as run") {
		t.Errorf("results not saved to the history")
	}
	e.nothingLeft(t)
}

// testBlock: Block mode on static PVs of raw loop devices. Their Retain
// policy keeps them: iolens must name them; the test deletes them.
func (e *env) testBlock(t *testing.T) {
	ctx := context.Background()
	devs, err := os.ReadFile(filepath.Join(e.state, "block-devices"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	mode := corev1.PersistentVolumeBlock
	for i, d := range strings.Fields(string(devs)) {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e2e-block-%d", i+1)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("512Mi")},
				VolumeMode:                    &mode,
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              "local-block",
				PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: d}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
				}}}},
			},
		}
		if _, err := e.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, pv.Name)
	}
	defer func() {
		for _, n := range names {
			_ = e.cs.CoreV1().PersistentVolumes().Delete(ctx, n, metav1.DeleteOptions{})
		}
		e.nothingLeft(t)
	}()
	r := e.run(t, "run", "-n", nsPriv, "--storage-class", "local-block", "--pvc-size", "512Mi", "--volume-mode", "Block",
		"--volumes-per-node", "2", "--parallel", "--job", jobFile(t, 2), "-o", "ndjson", "--no-save")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	rs := results(t, r.stdout)
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	for _, res := range rs {
		l := res.Target.Labels
		if l["k8s.volume-mode"] != "Block" || !contains(names, l["k8s.pv"]) || res.Target.Kind != "pvc" || res.Read == nil || res.Read.IOPS <= 0 {
			t.Errorf("block result: kind %s, labels %v", res.Target.Kind, l)
		}
	}
	for _, n := range names {
		if !strings.Contains(r.stderr, "PV "+n+" kept by its Retain reclaim policy") {
			t.Errorf("retained PV %s not reported", n)
		}
	}
	e.nothingLeft(t, names...)
}

// testNodeCheck: the etcd suite in a host directory of each node. The pod
// sees only a subdirectory it makes and removes; the root is refused.
func (e *env) testNodeCheck(t *testing.T) {
	dir := filepath.Join(e.state, "node-check")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Something of the host's in the directory: the pod must not see it.
	if err := os.WriteFile(filepath.Join(dir, "etcd-member"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{node, node2} {
		r := e.run(t, "node-check", n, "-n", nsPriv, "--path", dir, "-o", "ndjson", "--no-save")
		if r.code != 0 {
			t.Fatalf("%s: exit %d", n, r.code)
		}
		rs := results(t, r.stdout)
		if len(rs) != 1 || rs[0].Sync == nil {
			t.Fatalf("%s: want one etcd result with fdatasync latency, got %d", n, len(rs))
		}
		if rs[0].Target.Labels["k8s.host-path"] != dir || rs[0].Target.Labels["k8s.node"] != n {
			t.Errorf("%s: labels: %v", n, rs[0].Target.Labels)
		}
		if !strings.Contains(r.stderr, "etcd verdict: ") {
			t.Errorf("%s: no etcd verdict", n)
		}
		// The pod wrote only in its own subdirectory, and removed it.
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 || ents[0].Name() != "etcd-member" {
			t.Errorf("%s: node-check left %v in %s", n, ents, dir)
		}
		e.nothingLeft(t)
	}
	r := e.run(t, "node-check", node, "-n", nsPriv, "--path", "/", "--no-save")
	if r.code != 2 || !strings.Contains(r.stderr, "system directory") {
		t.Errorf("--path /: exit %d", r.code)
	}
}

func (e *env) testMissingClass(t *testing.T) {
	r := e.run(t, "run", "-n", nsRestricted, "--storage-class", "e2e-missing", "--pvc-size", "1Gi", "--job", jobFile(t, 1), "--no-save")
	if r.code == 0 || !strings.Contains(r.stderr, `storage class "e2e-missing" does not exist`) || !strings.Contains(r.stderr, "hint:") {
		t.Errorf("exit %d, want a clear error with a hint", r.code)
	}
	e.nothingLeft(t)
}

// testNeverBinds: a class whose provisioner does not exist. The claim never
// binds; the error must say why, and everything must go.
func (e *env) testNeverBinds(t *testing.T) {
	ctx := context.Background()
	imm := storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "e2e-orphan"}, Provisioner: "example.com/nobody", VolumeBindingMode: &imm}
	if _, err := e.cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer e.cs.StorageV1().StorageClasses().Delete(ctx, sc.Name, metav1.DeleteOptions{})
	// The timeout holds the local-path target too, whose claim binds
	// in about 4 s on a quiet machine and later beside make test's other
	// work: 15 s leaves it room.
	r := e.run(t, "run", "-n", nsRestricted, "--storage-class", "e2e-orphan,local-path", "--pvc-size", "1Gi", "--job", jobFile(t, 1),
		"--bind-timeout", "15s", "--parallel", "--no-save", "-o", "ndjson")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (some targets failed)", r.code)
	}
	if !strings.Contains(r.stderr, "e2e-orphan") || !strings.Contains(r.stderr, "example.com/nobody") {
		t.Errorf("the error does not name the class and its provisioner")
	}
	// The other target carried on.
	if rs := results(t, r.stdout); len(rs) != 1 || rs[0].Target.Labels["k8s.storage-class"] != "local-path" {
		t.Errorf("want the local-path target's result, got %d results", len(rs))
	}
	if !strings.Contains(r.stderr, "1 of 2 targets failed") {
		t.Errorf("no partial-failure summary")
	}
	e.nothingLeft(t)
}

// testPodSecurityRefused: Block mode runs as root, which a restricted
// namespace refuses. That must fail at once with the reason and a hint, not
// after the schedule timeout.
func (e *env) testPodSecurityRefused(t *testing.T) {
	r := e.run(t, "run", "-n", nsRestricted, "--storage-class", "local-block", "--pvc-size", "512Mi", "--volume-mode", "Block",
		"--job", jobFile(t, 1), "--no-save")
	if r.code == 0 {
		t.Fatal("exit 0: a root pod ran in a restricted namespace")
	}
	if !strings.Contains(r.stderr, "violates PodSecurity") || !strings.Contains(r.stderr, "pod-security.kubernetes.io/enforce=privileged") {
		t.Errorf("the error does not give the cause and the fix")
	}
	if r.took > 60*time.Second {
		t.Errorf("took %.0fs: the refusal waited for a timeout", r.took.Seconds())
	}
	e.nothingLeft(t)
}

// testInterrupt: SIGINT (Ctrl-C) while every target runs fio.
func (e *env) testInterrupt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := e.cmd(ctx, "run", "-n", nsRestricted, "--storage-class", "local-path", "--pvc-size", "1Gi",
		"--all-nodes", "--volumes-per-node", "2", "--parallel", "--job", jobFile(t, 120), "--no-save")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	c.Stderr = pw
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	running := map[string]bool{}
	var mu sync.Mutex
	allRunning := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			stderr.WriteString(line + "\n")
			if i := strings.Index(line, "] running test"); i > 0 {
				running[line[strings.Index(line, "[")+1:i]] = true
				if len(running) == 4 {
					close(allRunning)
				}
			}
			mu.Unlock()
		}
	}()
	select {
	case <-allRunning:
	case <-time.After(90 * time.Second):
		_ = c.Process.Kill()
		t.Fatalf("targets not running after 90s:\n%s", stderr.String())
	}
	time.Sleep(time.Second)
	sent := time.Now()
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = c.Wait()
	took := time.Since(sent)
	mu.Lock()
	out := stderr.String()
	mu.Unlock()
	t.Logf("interrupted; exit after %.1fs:\n%s", took.Seconds(), out)
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Errorf("exit %v, want 130", err)
	}
	if !strings.Contains(out, "interrupted") || !strings.Contains(out, "was deleted") {
		t.Errorf("the interrupted run does not say it cleaned up")
	}
	e.nothingLeft(t)
}

// testKeepAndCleanup: --keep leaves the objects; 'iolens k8s cleanup' finds
// them by run id and removes them. Across every namespace, --all lists what
// it would delete and asks for --yes.
func (e *env) testKeepAndCleanup(t *testing.T) {
	ctx := context.Background()
	keep := func(id string) {
		r := e.run(t, "run", "-n", nsRestricted, "--storage-class", "local-path", "--pvc-size", "1Gi", "--job", jobFile(t, 1),
			"--keep", "--run-id", id, "--no-save")
		if r.code != 0 {
			t.Fatalf("exit %d", r.code)
		}
		sel := metav1.ListOptions{LabelSelector: managedBy + ",iolens.dev/run-id=" + id}
		pvcs, _ := e.cs.CoreV1().PersistentVolumeClaims(nsRestricted).List(ctx, sel)
		jobs, _ := e.cs.BatchV1().Jobs(nsRestricted).List(ctx, sel)
		if len(pvcs.Items) != 1 || len(jobs.Items) != 1 {
			t.Fatalf("--keep: %d PVCs and %d Jobs of run %s, want 1 and 1", len(pvcs.Items), len(jobs.Items), id)
		}
	}
	id := "e2e-keep-" + strconv.FormatInt(time.Now().Unix(), 36)
	keep(id)
	r := e.run(t, "cleanup", "-n", nsRestricted, "--run", id)
	if r.code != 0 || !strings.Contains(r.stdout, "nothing left") {
		t.Errorf("cleanup: exit %d, %s", r.code, r.stdout)
	}
	e.nothingLeft(t)

	// A PVC that says it is iolens's but carries no run id is not.
	class := "local-path"
	foreign := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "not-a-run", Namespace: nsRestricted,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "iolens"}},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if _, err := e.cs.CoreV1().PersistentVolumeClaims(nsRestricted).Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	keep(id + "-2")
	r = e.runAdmin(t, "cleanup", "--all", "-A")
	if r.code != 2 || !strings.Contains(r.stderr, "--yes") || !strings.Contains(r.stdout, nsRestricted+"/iolens-t1-") || strings.Contains(r.stdout, "not-a-run") {
		t.Errorf("cleanup --all -A without --yes: exit %d\n%s", r.code, r.stdout)
	}
	r = e.runAdmin(t, "cleanup", "--all", "-A", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "nothing left") {
		t.Errorf("cleanup --all -A --yes: exit %d, %s", r.code, r.stdout)
	}
	if _, err := e.cs.CoreV1().PersistentVolumeClaims(nsRestricted).Get(ctx, "not-a-run", metav1.GetOptions{}); err != nil {
		t.Errorf("the PVC without a run id was deleted: %v", err)
	}
	if err := e.cs.CoreV1().PersistentVolumeClaims(nsRestricted).Delete(ctx, "not-a-run", metav1.DeleteOptions{}); err != nil {
		t.Error(err)
	}
	e.nothingLeft(t)
}

// testPlugin: 'kubectl iolens' finds the plugin on PATH.
func (e *env) testPlugin(t *testing.T) {
	if e.kubectl == "" {
		t.Skip("no kubectl (IOLENS_E2E_KUBECTL)")
	}
	dir := t.TempDir()
	// The flags of 'make build', so that the compiled packages come from
	// the build cache.
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "kubectl-iolens"), "github.com/iolens/iolens/cmd/kubectl-iolens")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	c := exec.Command(e.kubectl, "iolens", "classes")
	c.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "KUBECONFIG="+e.kubeconfig)
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "local-path-b") {
		t.Errorf("kubectl iolens classes: %v\n%s", err, out)
	}
}
