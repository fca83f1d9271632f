package promhist

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"github.com/iolens/iolens/internal/promhist/promtest"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// one is a series with a sample at each end of the test range.
func one(name string, kv ...string) *promtest.Series {
	l := map[string]string{"__name__": name}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	t0 := pvcFrom.UnixMilli()
	return &promtest.Series{Labels: l, TS: []int64{t0, t0 + 60_000}, V: []float64{1, 2}}
}

var pvcFrom = date("2026-03-01T14:00:00Z")

func claim(name, pv string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: name}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: pv}}
}

func csiPV(name, driver, handle string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}}}}
}

func node(name, ip string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}}}}
}

// The node exporter of worker-1 is 10.0.0.5:9100, with sda and nvme1n1.
func nodeExporter(extra ...*promtest.Series) []*promtest.Series {
	return append([]*promtest.Series{
		one(mIOTime, "instance", "10.0.0.5:9100", "device", "sda"),
		one(mIOTime, "instance", "10.0.0.5:9100", "device", "nvme1n1"),
		one(mIOTime, "instance", "10.0.0.6:9100", "device", "sda"),
		one("node_uname_info", "instance", "10.0.0.5:9100", "nodename", "worker-1"),
		one("node_uname_info", "instance", "10.0.0.6:9100", "nodename", "worker-2"),
	}, extra...)
}

func TestResolvePVC(t *testing.T) {
	pvMount := "/var/lib/kubelet/pods/0c6c/volumes/kubernetes.io~csi/pv-1/mount"
	attached := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "csi-123"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "worker-1",
		Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr("pv-1")}}, Status: storagev1.VolumeAttachmentStatus{Attached: true}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "pg-0"}, Spec: corev1.PodSpec{NodeName: "worker-1",
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
	local := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disks/ssd1/vol"}},
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"worker-1"}}}}}}}}}
	handle := "projects/p/zones/z/disks/pvc-9"
	sum := sha256.Sum256([]byte(handle))
	tests := []struct {
		name    string
		objs    []runtime.Object
		series  []*promtest.Series
		node    string
		device  string
		noteHas string
	}{
		{"kubelet stats, then the kubelet's mount", []runtime.Object{claim("data", "pv-1"), csiPV("pv-1", "ebs.csi.aws.com", "vol-0abc"), node("worker-1", "10.0.0.5")},
			nodeExporter(one(mVolumeStats, "namespace", "db", "persistentvolumeclaim", "data", "node", "worker-1"),
				one("node_filesystem_size_bytes", "instance", "10.0.0.5:9100", "device", "/dev/nvme1n1p1", "mountpoint", pvMount)),
			"worker-1", "nvme1n1", "kubelet's volume stats"},
		{"attached, found by its serial", []runtime.Object{claim("data", "pv-1"), csiPV("pv-1", "ebs.csi.aws.com", "vol-0abc"), node("worker-1", "10.0.0.5"), attached},
			nodeExporter(one("node_disk_info", "instance", "10.0.0.5:9100", "device", "nvme1n1", "serial", "vol0abc")),
			"worker-1", "nvme1n1", "serial vol0abc"},
		{"mounted by a pod, the CSI global mount", []runtime.Object{claim("data", "pv-1"), csiPV("pv-1", "pd.csi.storage.gke.io", handle), node("worker-1", "10.0.0.5"), pod},
			nodeExporter(one("node_filesystem_size_bytes", "instance", "10.0.0.5:9100", "device", "/dev/sda",
				"mountpoint", "/var/lib/kubelet/plugins/kubernetes.io/csi/pd.csi.storage.gke.io/"+hex.EncodeToString(sum[:])+"/globalmount")),
			"worker-1", "sda", "pod pg-0"},
		{"a local volume: the file system holding its path", []runtime.Object{claim("data", "pv-1"), local, node("worker-1", "10.0.0.5")},
			nodeExporter(one("node_filesystem_size_bytes", "instance", "10.0.0.5:9100", "device", "/dev/nvme1n1", "mountpoint", "/mnt/disks/ssd1"),
				one("node_filesystem_size_bytes", "instance", "10.0.0.5:9100", "device", "/dev/sda1", "mountpoint", "/")),
			"worker-1", "nvme1n1", "node affinity"},
		{"no device to be found", []runtime.Object{claim("data", "pv-1"), csiPV("pv-1", "disk.csi.azure.com", "/subscriptions/s/disks/d"), node("worker-1", "10.0.0.5"), attached},
			nodeExporter(), "worker-1", "", "could not be told"},
		{"the node by its address, no uname", []runtime.Object{claim("data", "pv-1"), csiPV("pv-1", "ebs.csi.aws.com", "vol-0abc"), node("worker-1", "10.0.0.5"), attached},
			[]*promtest.Series{one(mIOTime, "instance", "10.0.0.5:9100", "device", "nvme1n1"), one(mIOTime, "instance", "10.0.0.6:9100", "device", "sda")},
			"worker-1", "", "could not be told"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewSimpleClientset(tc.objs...)
			_, srv := promtest.NewFake(t, tc.series)
			v, err := ResolvePVC(t.Context(), cs, clientOf(t, srv.URL, Auth{}, Limits{}), "db", "data", pvcFrom, pvcFrom.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if v.Node != tc.node || v.Device != tc.device || v.Selector.String() != `instance="10.0.0.5:9100"` {
				t.Errorf("node %q device %q selector %s, want %q %q instance=10.0.0.5:9100", v.Node, v.Device, v.Selector, tc.node, tc.device)
			}
			if notes := strings.Join(v.Notes, "\n"); !strings.Contains(notes, tc.noteHas) {
				t.Errorf("notes %q, want one saying %q", v.Notes, tc.noteHas)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestResolvePVCErrors: each way a claim cannot be followed says why and
// what to give instead.
func TestResolvePVCErrors(t *testing.T) {
	bound := []runtime.Object{claim("data", "pv-1"), csiPV("pv-1", "ebs.csi.aws.com", "vol-0abc"), node("worker-1", "10.0.0.5")}
	tests := []struct {
		name   string
		objs   []runtime.Object
		series []*promtest.Series
		react  func(*fake.Clientset)
		want   string
	}{
		{"no such claim", nil, nodeExporter(), nil, "not found"},
		{"not bound", []runtime.Object{claim("data", "")}, nodeExporter(), nil, "not bound"},
		{"on two nodes in the range", bound, nodeExporter(one(mVolumeStats, "namespace", "db", "persistentvolumeclaim", "data", "node", "worker-1"),
			one(mVolumeStats, "namespace", "db", "persistentvolumeclaim", "data", "node", "worker-2")), nil, "several nodes"},
		{"on no node", bound, nodeExporter(), nil, "no node has it"},
		{"no node exporter for the node", bound, []*promtest.Series{one(mVolumeStats, "namespace", "db", "persistentvolumeclaim", "data", "node", "worker-1"),
			one(mIOTime, "instance", "10.9.9.9:9100", "device", "sda")}, nil, "no node exporter of node worker-1"},
		{"the PV cannot be read", bound, nodeExporter(), func(cs *fake.Clientset) {
			cs.PrependReactor("get", "persistentvolumes", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, errors.New("forbidden: no PV for you")
			})
		}, "no PV for you"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewSimpleClientset(tc.objs...)
			if tc.react != nil {
				tc.react(cs)
			}
			_, srv := promtest.NewFake(t, tc.series)
			_, err := ResolvePVC(t.Context(), cs, clientOf(t, srv.URL, Auth{}, Limits{}), "db", "data", pvcFrom, pvcFrom.Add(time.Hour))
			if err == nil || !strings.Contains(err.Error(), tc.want) || hint.Of(err) == "" {
				t.Fatalf("error %v (hint %q), want one saying %q, with a hint", err, hint.Of(err), tc.want)
			}
		})
	}
	for _, s := range []string{"data", "db/", "/data", "DB/data", "db/da ta"} {
		if _, _, err := ParsePVC(s); err == nil || hint.Of(err) == "" {
			t.Errorf("ParsePVC(%q): %v", s, err)
		}
	}
}
