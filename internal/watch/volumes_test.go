package watch

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// nodeTree adds to a fixture tree what a Kubernetes node's mount table
// shows: disks and a partition in /sys, and init's mountinfo.
func nodeTree(t *testing.T, tr *tree, mounts [][2]string) {
	t.Helper()
	// vda with partition vda1 (252:1) as the root disk.
	dir := filepath.Join(tr.sys, "devices/virtual/block/vda")
	tr.write(filepath.Join(dir, "dev"), "252:0\n")
	tr.write(filepath.Join(dir, "vda1/dev"), "252:1\n")
	tr.write(filepath.Join(dir, "vda1/partition"), "1\n")
	tr.link("../../devices/virtual/block/vda/vda1", filepath.Join(tr.sys, "dev/block/252:1"))
	tr.link("../../devices/virtual/block/vda", filepath.Join(tr.sys, "dev/block/252:0"))
	var b strings.Builder
	for i, m := range mounts {
		fmt.Fprintf(&b, "%d 1 %s / %s rw,relatime shared:1 - ext4 /dev/x rw\n", 30+i, m[0], m[1])
	}
	tr.write(filepath.Join(tr.proc, "1/mountinfo"), b.String())
}

func TestVolumeDevices(t *testing.T) {
	tr := newTree(t, "sdc", "sdd", "sde") // 253:0, 253:16, 253:32
	const pods = "/var/lib/kubelet/pods"
	nodeTree(t, tr, [][2]string{
		{"252:1", "/"},
		{"253:0", pods + "/uid-1/volumes/kubernetes.io~csi/pvc-aaa/mount"},
		{"253:0", "/var/lib/kubelet/plugins/kubernetes.io/csi/disk.csi.azure.com/0123abcd/globalmount"},
		{"253:16", pods + "/uid-2/volumes/kubernetes.io~azure-disk/pvc-bbb"},
		{"253:32", "/mnt/disks"},
		{"0:55", pods + "/uid-3/volumes/kubernetes.io~nfs/pvc-nfs"},
		{"0:60", pods + "/uid-3/volumes/kubernetes.io~configmap/pvc-aaa-config"},
	})
	vols := []Volume{
		{Name: "pvc-aaa", Class: "premium", Expect: "azure:P15"},
		{Name: "pvc-bbb", Class: "standard", Expect: "azure:E10"},
		{Name: "local-1", Path: "/mnt/disks/ssd1/vol", Class: "local", Expect: "iops=500"},
		{Name: "local-2", Path: "/mnt/disks/ssd2", Class: "local"},
		{Name: "pvc-nfs", Class: "nfs"},
		{Name: "pvc-elsewhere", Class: "premium", Expect: "azure:P15"},
		{Name: "relative", Path: "mnt/disks"},
	}
	got, err := VolumeDevices(tr.proc, tr.sys, vols)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"pvc-aaa": "sdc", "pvc-bbb": "sdd", "local-1": "sde", "local-2": "sde"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("VolumeDevices = %v, want %v", got, want)
	}
	expect, about := NodeExpectations(vols, got)
	// sde carries two local volumes, one expected and one not: no one
	// disk's ceiling fits it.
	if fmt.Sprint(expect) != fmt.Sprint(map[string]string{"sdc": "azure:P15", "sdd": "azure:E10"}) {
		t.Errorf("expectations %v", expect)
	}
	if about["sde"] != "PV local-1 (class local), PV local-2 (class local)" || about["sdc"] != "PV pvc-aaa (class premium)" {
		t.Errorf("about %v", about)
	}
}

func TestKubeletVolume(t *testing.T) {
	for mp, want := range map[string]string{
		"/var/lib/kubelet/pods/u/volumes/kubernetes.io~csi/pvc-1/mount": "pvc-1",
		"/var/lib/kubelet/pods/u/volumes/kubernetes.io~aws-ebs/pvc-2":   "pvc-2",
		"/var/lib/kubelet/pods/u/volume-subpaths/pvc-3/c/0":             "",
		"/var/lib/kubelet/pods/u/volumes":                               "",
		"/":                                                             "",
	} {
		if got := kubeletVolume(mp); got != want {
			t.Errorf("%s -> %q, want %q", mp, got, want)
		}
	}
}

// Discover adds a device as its volume appears and puts its expected disk
// in force; the records say so, and the new device's rows follow.
func TestRediscover(t *testing.T) {
	tr := newTree(t, "vdb", "vdc")
	p10 := &Ceiling{Name: "azure:P10", IOPS: 500, BWBytes: 100e6, BurstIOPS: 3500, BurstBWBytes: 170e6, BurstSeconds: 1800, CreditStartPct: 100}
	calls := 0
	disc := Discovery{Devices: []string{"vdb"}}
	w, err := New(Config{ProcRoot: tr.proc, SysRoot: tr.sys, Devices: []string{"vdb"}, Interval: time.Second, Host: "n1",
		Rediscover: 2 * time.Second, Discover: func() (Discovery, error) { calls++; return disc, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1714564800, 0)
	if _, err := w.Start(t0); err != nil {
		t.Fatal(err)
	}
	tick := func(s int) []result.WatchRecord {
		tr.counters["vdc"][3] += 100 // 100 writes a second on vdc
		tr.flush()
		recs, err := w.Tick(t0.Add(time.Duration(s) * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	if recs := tick(1); calls != 0 || len(recs) != 1 {
		t.Fatalf("discovery before its interval: %d calls, %d records", calls, len(recs))
	}
	disc = Discovery{Devices: []string{"vdb", "vdc"}, Ceilings: map[string]*Ceiling{"vdc": p10}, About: map[string]string{"vdc": "PV pvc-1 (class premium)"}}
	recs := tick(2)
	if calls != 1 {
		t.Fatalf("%d discoveries after 2 s", calls)
	}
	var fs []string
	for _, r := range recs[1:] {
		fs = append(fs, r.Finding.Kind+" "+r.Finding.Device+": "+r.Finding.Summary)
	}
	want := []string{"device vdc: watching vdc: PV pvc-1 (class premium)", "expect vdc: vdc is expected to be azure:P10 (PV pvc-1 (class premium))"}
	if strings.Join(fs, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(fs, "\n"), strings.Join(want, "\n"))
	}
	if len(w.Devices()) != 2 || w.Devices()[1].Expect != "azure:P10" || w.CeilingOf("vdc") != p10 || w.CeilingOf("vdb") != nil {
		t.Errorf("devices %+v", w.Devices())
	}
	// The interval after discovery has no previous counters for vdc; the
	// one after shows its 100 writes a second against the P10's 500 base
	// IOPS (not bursting: the base rate is the ceiling).
	tick(3)
	recs = tick(4)
	var row *result.WatchDevice
	for i, d := range recs[0].Devices {
		if d.Device == "vdc" {
			row = &recs[0].Devices[i]
		}
	}
	if row == nil || row.WriteIOPS != 100 || row.CeilingPct == nil || *row.CeilingPct != 20 {
		t.Fatalf("vdc row %+v", row)
	}
	// Its volume gone: no longer compared, said once (discovery runs
	// every 2 s: at 6 s next).
	disc = Discovery{Devices: []string{"vdb"}}
	tick(5)
	recs = tick(6)
	if len(recs) != 2 || recs[1].Finding.Kind != "expect" || w.CeilingOf("vdc") != nil {
		t.Errorf("after the volume went: %d records, ceiling %v", len(recs), w.CeilingOf("vdc"))
	}
}

// A failing discovery is logged once, and changes nothing.
func TestRediscoverError(t *testing.T) {
	tr := newTree(t, "vdb")
	w, err := New(Config{ProcRoot: tr.proc, SysRoot: tr.sys, Devices: []string{"vdb"}, Interval: time.Second, Rediscover: time.Second,
		Discover: func() (Discovery, error) { return Discovery{}, fmt.Errorf("pods is forbidden") }})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1714564800, 0)
	if _, err := w.Start(t0); err != nil {
		t.Fatal(err)
	}
	n := 0
	for s := 1; s <= 3; s++ {
		recs, err := w.Tick(t0.Add(time.Duration(s) * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs[1:] {
			n++
			if r.Finding.Severity != "warn" || !strings.Contains(r.Finding.Summary, "pods is forbidden") {
				t.Errorf("finding %+v", r.Finding)
			}
		}
	}
	if n != 1 || len(w.Devices()) != 1 {
		t.Errorf("%d findings, %d devices", n, len(w.Devices()))
	}
}

// FuzzVolumeDevices: a hostile mount table and hostile volume names and
// paths never panic, and every volume found is one that was asked for, on
// a device of the fixture's /sys.
func FuzzVolumeDevices(f *testing.F) {
	f.Add("30 1 253:0 / /var/lib/kubelet/pods/u/volumes/kubernetes.io~csi/pv-1/mount rw shared:1 - ext4 /dev/x rw\n", "pv-1", "/mnt/x")
	f.Add("30 1 253:16 / /mnt rw - xfs /dev/y rw\n31 1 0:5 / /dev rw - devtmpfs d rw\n", "pv-2", "/mnt/disks/a")
	f.Add("garbage\n\n30 1 x:y / / - - -\n", "", "relative/path")
	f.Fuzz(func(t *testing.T, mountinfo, name, path string) {
		tr := newTree(t, "sdc", "sdd")
		tr.write(filepath.Join(tr.proc, "1/mountinfo"), mountinfo)
		vols := []Volume{{Name: name, Path: path}, {Name: "pv-1"}}
		got, err := VolumeDevices(tr.proc, tr.sys, vols)
		if err != nil {
			return // an unreadable table is an error, not a panic
		}
		for v, dev := range got {
			if v != name && v != "pv-1" {
				t.Errorf("found %q, which was not asked for", v)
			}
			if dev != "sdc" && dev != "sdd" {
				t.Errorf("%q on %q, no device of the fixture", v, dev)
			}
		}
	})
}
