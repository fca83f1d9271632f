package headroom_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/headroom"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist/promtest"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// series is one series sampled at the fleet's first and last instants.
func series(f fleet, name string, kv ...string) *promtest.Series {
	l := map[string]string{"__name__": name}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return &promtest.Series{Labels: l, TS: []int64{f.start.UnixMilli(), f.at(f.n - 1).UnixMilli()}, V: []float64{1, 1}}
}

// TestFromCluster: the fleet's node-1 as a cluster has it. db/data-0 is
// node-1's sdc, on a Premium_LRS class at 1 TiB (a P30 in the catalog);
// db/cache-0 is node-1's sdb, on a local-path class the catalog does
// not know; db/pending is not bound; node-1 is a Standard_D4s_v3.
func TestFromCluster(t *testing.T) {
	f := fleet{start: time.Unix(1_790_000_000, 0), step: 15 * time.Second, n: 480}
	mount := func(pv string) string { return "/var/lib/kubelet/pods/0c6c/volumes/kubernetes.io~csi/" + pv + "/mount" }
	ss := append(f.series(),
		series(f, "kubelet_volume_stats_capacity_bytes", "namespace", "db", "persistentvolumeclaim", "data-0", "node", "node-1"),
		series(f, "kubelet_volume_stats_capacity_bytes", "namespace", "db", "persistentvolumeclaim", "cache-0", "node", "node-1"),
		series(f, "node_filesystem_size_bytes", "instance", "node-1:9100", "device", "/dev/sdc", "mountpoint", mount("pv-data")),
		series(f, "node_filesystem_size_bytes", "instance", "node-1:9100", "device", "/dev/sdb", "mountpoint", mount("pv-cache")),
		series(f, "node_filesystem_size_bytes", "instance", "node-1:9100", "device", "/dev/sda1", "mountpoint", "/"))
	_, c := fakeClient(t, ss)
	gi := func(n int64) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(n<<30, resource.BinarySI)}
	}
	pv := func(name, class string, size int64) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{StorageClassName: class, Capacity: gi(size),
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "disk.csi.azure.com", VolumeHandle: name}}}}
	}
	claim := func(name, vol string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: name}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: vol}}
	}
	objs := []runtime.Object{
		claim("data-0", "pv-data"), claim("cache-0", "pv-cache"), claim("pending", ""),
		pv("pv-data", "premium", 1024), pv("pv-cache", "local-path", 100),
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "premium"}, Provisioner: "disk.csi.azure.com", Parameters: map[string]string{"skuName": "Premium_LRS"}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-path"}, Provisioner: "rancher.io/local-path"},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{corev1.LabelInstanceTypeStable: "Standard_D4s_v3"}}},
	}
	cs := fake.NewSimpleClientset(objs...)
	cat := limits.MustDefault()
	o := headroom.Options{From: f.start, To: f.at(f.n - 1), Catalog: cat, Margin: 0.3}
	inv, err := headroom.FromCluster(t.Context(), cs, c, cat, headroom.Claims{Namespace: "db"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if inv.VMs["node-1:9100"] != "azure:Standard_D4s_v3" {
		t.Errorf("VMs %v", inv.VMs)
	}
	if !strings.Contains(strings.Join(inv.Notes, "\n"), "db/pending: not bound") {
		t.Errorf("notes %q", inv.Notes)
	}
	o.Rules, o.VMs = inv.Rules, inv.VMs
	o.Selector = o.Selector.With("instance", "=", "node-1:9100")
	r, err := headroom.Run(t.Context(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	data := byName(t, r, "node-1:9100", "sdc")
	if data.Claim != "db/data-0" || data.Cap == nil || data.Cap.Source != headroom.SourceCatalog || data.Cap.IOPS != 5000 ||
		data.Rec == nil || data.Rec.Action != headroom.ActionSmaller {
		t.Errorf("data-0: claim %q, cap %+v, recommendation %+v", data.Claim, data.Cap, data.Rec)
	}
	cache := byName(t, r, "node-1:9100", "sdb")
	if cache.Claim != "db/cache-0" || cache.Cap != nil || cache.Status != headroom.StatusUnknown || !strings.Contains(cache.CapUnknown, "local-path") ||
		!strings.Contains(cache.CapUnknown, "k8s diagnose") {
		t.Errorf("cache-0: claim %q, cap %v, status %s, why %q", cache.Claim, cache.Cap, cache.Status, cache.CapUnknown)
	}
	// --expect comes before the class, even naming the device alone.
	x, err := headroom.ParseRule("sdb=iops=500", headroom.SourceExpect, cat)
	if err != nil {
		t.Fatal(err)
	}
	o.Rules = append([]headroom.Rule{x}, inv.Rules...)
	r, err = headroom.Run(t.Context(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	if cache := byName(t, r, "node-1:9100", "sdb"); cache.Cap == nil || cache.Cap.Source != headroom.SourceExpect || cache.Claim != "db/cache-0" {
		t.Errorf("--expect over the class: %+v", cache.Cap)
	}
	// One claim by its name, and claims by a label.
	one, err := headroom.FromCluster(t.Context(), cs, c, cat, headroom.Claims{Namespace: "db", Name: "cache-0"}, o)
	if err != nil || len(one.Rules) != 1 || one.Rules[0].Claim != "db/cache-0" {
		t.Errorf("--pvc db/cache-0: %v, %+v", err, one)
	}
	if _, err := headroom.FromCluster(t.Context(), cs, c, cat, headroom.Claims{Namespace: "db", Name: "nope"}, o); err == nil {
		t.Error("--pvc of a claim that does not exist: no error")
	}
	none, err := headroom.FromCluster(t.Context(), cs, c, cat, headroom.Claims{Selector: "app=none"}, o)
	if err != nil || len(none.Rules) != 0 {
		t.Errorf("a selector no claim matches: %v, %d rules", err, len(none.Rules))
	}
	// A class iolens measured: its caps come before the catalog's, and
	// the catalog disk the class maps to still gives the price; a class
	// not measured keeps the catalog's; a history that cannot be read is
	// noted, and the catalog stands.
	o.Measured = func(_ context.Context, class string) (*headroom.Cap, error) {
		switch class {
		case "local-path":
			return &headroom.Cap{Name: "measured by run r1 on 2026-11-01", IOPS: 1234, BWBytes: 50e6}, nil
		case "premium":
			return &headroom.Cap{Name: "measured by run r2 on 2026-11-02", IOPS: 4800, BWBytes: 190e6}, nil
		}
		return nil, nil
	}
	inv, err = headroom.FromCluster(t.Context(), cs, c, cat, headroom.Claims{Namespace: "db"}, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Rules = inv.Rules
	r, err = headroom.Run(t.Context(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	if cache := byName(t, r, "node-1:9100", "sdb"); cache.Cap == nil || cache.Cap.Source != headroom.SourceHistory || cache.Cap.IOPS != 1234 ||
		cache.Cap.Name != "measured by run r1 on 2026-11-01 (class local-path)" || cache.Cap.Disk != nil {
		t.Errorf("cache-0 on a measured class: %+v", cache.Cap)
	}
	if data := byName(t, r, "node-1:9100", "sdc"); data.Cap == nil || data.Cap.Source != headroom.SourceHistory || data.Cap.IOPS != 4800 ||
		data.Cap.Disk == nil || data.Rec == nil || data.Rec.CurrentUSD == nil {
		t.Errorf("data-0 on a measured class the catalog knows: cap %+v, recommendation %+v", data.Cap, data.Rec)
	}
	o.Measured = func(context.Context, string) (*headroom.Cap, error) { return nil, errors.New("database is locked") }
	inv, err = headroom.FromCluster(t.Context(), cs, c, cat, headroom.Claims{Namespace: "db"}, o)
	if err != nil || !strings.Contains(strings.Join(inv.Notes, "\n"), "the history database could not be read (database is locked)") {
		t.Errorf("an unreadable history: %v, notes %q", err, inv.Notes)
	}
	for _, ru := range inv.Rules {
		if ru.Claim == "db/data-0" && (ru.Cap == nil || ru.Cap.Source != headroom.SourceCatalog) {
			t.Errorf("data-0 without the history: %+v", ru.Cap)
		}
	}
	// The node's OS disk: the disk under its root file system, named as
	// such, its cap unknown and what to give; --expect gives it.
	o.Measured = nil
	whole, err := headroom.FromCluster(t.Context(), cs, c, cat, headroom.Claims{}, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Rules = whole.Rules
	r2, err := headroom.Run(t.Context(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	osd := byName(t, r2, "node-1:9100", "sda")
	if osd.OSDiskOf != "node-1" || osd.Cap != nil || !strings.Contains(osd.CapUnknown, "the OS disk of node node-1 (a Standard_D4s_v3)") ||
		!strings.Contains(osd.CapUnknown, "--expect node-1:9100/sda=SPEC") {
		t.Errorf("the OS disk: of %q, cap %v, why %q", osd.OSDiskOf, osd.Cap, osd.CapUnknown)
	}
	if d := byName(t, r2, "node-1:9100", "sdc"); d.OSDiskOf != "" || d.Claim != "db/data-0" {
		t.Errorf("data-0 named the OS disk: %+v", d)
	}
	var txt strings.Builder
	headroom.Text(&txt, r2, time.UTC)
	if !strings.Contains(txt.String(), "OS disk of node-1 (sda)") {
		t.Errorf("the text does not name the OS disk:\n%s", txt.String())
	}
	x, err = headroom.ParseRule("node-1:9100/sda=azure:P10", headroom.SourceExpect, cat)
	if err != nil {
		t.Fatal(err)
	}
	o.Rules = append(whole.Rules, x)
	if r2, err = headroom.Run(t.Context(), c, o); err != nil {
		t.Fatal(err)
	}
	if osd := byName(t, r2, "node-1:9100", "sda"); osd.OSDiskOf != "node-1" || osd.Cap == nil || osd.Cap.IOPS != 500 {
		t.Errorf("the OS disk with --expect: of %q, cap %+v", osd.OSDiskOf, osd.Cap)
	}
	var n1 *headroom.Node
	for _, n := range r.Nodes {
		n1 = n
	}
	if n1 == nil || n1.VMIOPS != 6400 {
		t.Errorf("node-1: %+v", n1)
	}
}
