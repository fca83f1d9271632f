package clusterwatch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/watch"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// fixtureNode writes a /proc and /sys with the given block devices
// (name -> major:minor) and init's mount table (major:minor, mount point).
func fixtureNode(t *testing.T, devs map[string]string, mounts [][2]string) (proc, sys string) {
	t.Helper()
	root := t.TempDir()
	proc, sys = filepath.Join(root, "proc"), filepath.Join(root, "sys")
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	var ds strings.Builder
	for name, mm := range devs {
		dir := filepath.Join(sys, "devices/virtual/block", name)
		write(filepath.Join(dir, "dev"), mm+"\n")
		write(filepath.Join(dir, "queue/rotational"), "0\n")
		link("../../devices/virtual/block/"+name, filepath.Join(sys, "class/block", name))
		link("../../devices/virtual/block/"+name, filepath.Join(sys, "dev/block", mm))
		maj, min, _ := strings.Cut(mm, ":")
		fmt.Fprintf(&ds, "%4s %7s %s 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", maj, min, name)
	}
	write(filepath.Join(proc, "diskstats"), ds.String())
	var mi strings.Builder
	for i, m := range mounts {
		fmt.Fprintf(&mi, "%d 1 %s / %s rw,relatime shared:1 - ext4 /dev/x rw\n", 30+i, m[0], m[1])
	}
	write(filepath.Join(proc, "1/mountinfo"), mi.String())
	return proc, sys
}

// A node of a mixed cluster: an Azure DS2_v2 whose pods mount a 256 GiB
// Premium SSD (a P15 by the catalog's storage-class mapping), a volume of
// a class annotated with its figures, and one of a class nobody knows.
// Each device gets its own expected disk; the VM's limits join the
// catalog disk's.
func TestClusterExpectations(t *testing.T) {
	const node = "aks-pool-1"
	pods := "/var/lib/kubelet/pods"
	proc, sys := fixtureNode(t, map[string]string{"sda": "8:0", "sdc": "8:32", "sdd": "8:48", "sde": "8:64"}, [][2]string{
		{"8:0", "/"},
		{"8:32", pods + "/u1/volumes/kubernetes.io~csi/pv-premium/mount"},
		{"8:48", pods + "/u1/volumes/kubernetes.io~csi/pv-figures/mount"},
		{"8:64", pods + "/u2/volumes/kubernetes.io~csi/pv-unknown/mount"},
	})
	gi := func(n int64) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(n<<30, resource.BinarySI)}
	}
	pv := func(name, class string, size int64, ann map[string]string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
			Spec: corev1.PersistentVolumeSpec{StorageClassName: class, Capacity: gi(size)}}
	}
	pvc := func(ns, name, pv string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: pv}}
	}
	pod := func(ns, name, on string, claims ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: on},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		for _, c := range claims {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
		}
		return p
	}
	objs := []runtime.Object{
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"node.kubernetes.io/instance-type": "Standard_DS2_v2"}}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "managed-premium"}, Provisioner: "disk.csi.azure.com", Parameters: map[string]string{"skuName": "Premium_LRS"}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{ExpectAnnotation: "iops=500,bw=100MB"}}, Provisioner: "example.com/fast"},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-path"}, Provisioner: "rancher.io/local-path"},
		pv("pv-premium", "managed-premium", 256, nil), pv("pv-figures", "fast", 10, nil), pv("pv-unknown", "local-path", 10, nil),
		pv("pv-other", "managed-premium", 1024, nil),
		pvc("db", "data-0", "pv-premium"), pvc("db", "wal-0", "pv-figures"), pvc("web", "cache", "pv-unknown"), pvc("db", "data-1", "pv-other"),
		pod("db", "postgres-0", node, "data-0", "wal-0"), pod("web", "cache-0", node, "cache"),
		// On another node: its volume is not this node's business.
		pod("db", "postgres-1", "aks-pool-2", "data-1"),
	}
	cs := fake.NewSimpleClientset(objs...)
	c := NewNodeExpect(cs, node, 100)
	d, err := c.Discoverer(context.Background(), proc, sys, nil)()
	if err != nil {
		t.Fatal(err)
	}
	// By hand, from Azure's tables: a P15 does 1,100 IOPS and 125 MB/s,
	// bursting to 3,500 IOPS and 170 MB/s for 30 minutes; a DS2_v2 allows
	// 6,400 IOPS and 96 MB/s uncached.
	p15 := watch.Ceiling{IOPS: 1100, BWBytes: 125e6, BurstIOPS: 3500, BurstBWBytes: 170e6, BurstSeconds: 1800, VMIOPS: 6400, VMBWBytes: 96e6, CreditStartPct: 100}
	got := d.Ceilings["sdc"]
	if got == nil {
		t.Fatalf("no ceiling for sdc: %+v", d)
	}
	name := got.Name
	g := *got
	g.Name = ""
	if g != p15 || !strings.Contains(name, "P15") || !strings.Contains(name, "Standard_DS2_v2") {
		t.Errorf("sdc: %+v (%s), want %+v", g, name, p15)
	}
	if f := d.Ceilings["sdd"]; f == nil || f.IOPS != 500 || f.BWBytes != 100e6 || f.VMIOPS != 0 {
		t.Errorf("sdd (class annotation): %+v", f)
	}
	if d.Ceilings["sde"] != nil || d.Ceilings["sda"] != nil || len(d.Ceilings) != 2 {
		t.Errorf("ceilings %v: only the two known volumes have one", d.Ceilings)
	}
	if d.About["sde"] != "PV pv-unknown (class local-path)" {
		t.Errorf("about %v", d.About)
	}
	for _, want := range []string{"sda", "sdc", "sdd", "sde"} {
		found := false
		for _, n := range d.Devices {
			found = found || n == want
		}
		if !found {
			t.Errorf("%s not watched: %v", want, d.Devices)
		}
	}
	// Claims, volumes and classes are read once: the second discovery
	// only reads the node and lists its pods.
	before := len(cs.Actions())
	if _, err := c.Discoverer(context.Background(), proc, sys, nil)(); err != nil {
		t.Fatal(err)
	}
	var verbs []string
	for _, a := range cs.Actions()[before:] {
		verbs = append(verbs, a.GetVerb()+" "+a.GetResource().Resource)
	}
	if strings.Join(verbs, ",") != "get nodes,list pods" {
		t.Errorf("second discovery: %v", verbs)
	}
	// A PV's own annotation wins over its class.
	pa := pv("pv-premium", "managed-premium", 256, map[string]string{ExpectAnnotation: "aws:gp3:100GiB"})
	c2 := NewNodeExpect(fake.NewSimpleClientset(append(objs[1:4], pa, objs[5], objs[8], objs[9], objs[12], objs[0])...), node, 100)
	d, err = c2.Discoverer(context.Background(), proc, sys, nil)()
	if err != nil {
		t.Fatal(err)
	}
	if x := d.Ceilings["sdc"]; x == nil || !strings.HasPrefix(x.Name, "aws:") || x.VMIOPS != 0 {
		t.Errorf("PV annotation: %+v", x)
	}
}

// Without access to the API the watch goes on, with what it found.
func TestClusterExpectationsForbidden(t *testing.T) {
	proc, sys := fixtureNode(t, map[string]string{"sda": "8:0"}, [][2]string{{"8:0", "/"}})
	c := NewNodeExpect(fake.NewSimpleClientset(), "n1", 100)
	d, err := c.Discoverer(context.Background(), proc, sys, nil)()
	if err == nil || !strings.Contains(err.Error(), "node n1") {
		t.Errorf("error %v", err)
	}
	if len(d.Devices) != 1 || d.Devices[0] != "sda" {
		t.Errorf("devices %v", d.Devices)
	}
}
