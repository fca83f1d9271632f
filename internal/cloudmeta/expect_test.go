package cloudmeta

import (
	"context"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/limits"
)

func detectAzure(t *testing.T) Info {
	t.Helper()
	s := serve(t, &fake{provider: azure})
	info, err := detect(context.Background(), testOptions(t, s.URL, azureTree(t)))
	if err != nil || info.Provider != azure {
		t.Fatalf("%v %+v", err, info)
	}
	return info
}

// The expectation a directory on /dev/sdc (LVM over the LUN 0 disk)
// gets is what --expect azure:P20 --vm Standard_D8s_v3 --cache readonly
// would give, and the catalog takes it as is.
func TestExpectForAzure(t *testing.T) {
	info := detectAzure(t)
	cases := []struct {
		devices         []string
		disk, vm, cache string
		matched         string // the matched disk's device; "" for none
		note, from      string
	}{
		{devices: []string{"dm-0", "sdc"}, disk: "azure:P20", vm: "azure:Standard_D8s_v3", cache: "readonly", matched: "sdc",
			from: "Azure IMDS: Standard_D8s_v3; data disk LUN 0 (azure:P20, 512 GiB, caching readonly) on sdc (/dev/disk/azure/scsi1/lun0 -> sdc)"},
		{devices: []string{"sdd1", "sdd"}, disk: "azure:ultra:1024GiB:iops=20000,throughput=500", vm: "azure:Standard_D8s_v3", cache: "none", matched: "sdd"},
		{devices: []string{"sde"}, vm: "azure:Standard_D8s_v3", cache: "none", matched: "sde", note: "give --expect azure:premium-ssd-v2:256GiB:iops=N,throughput=M"},
		{devices: []string{"dm-0", "sdc", "sdf"}, disk: "azure:P20", vm: "azure:Standard_D8s_v3", cache: "readonly", matched: "sdc", note: "spans 2 disks (sdc, sdf)"},
		{devices: []string{"nvme9n1"}, vm: "azure:Standard_D8s_v3", note: "the target is on nvme9n1, which is none of the disks"},
		{devices: nil, vm: "azure:Standard_D8s_v3", note: "no device was given"},
	}
	for _, tc := range cases {
		x, d := info.ExpectFor(tc.devices)
		got := ""
		if d != nil {
			got = d.Device
		}
		if x.Disk != tc.disk || x.VM != tc.vm || x.Cache != tc.cache || got != tc.matched {
			t.Errorf("%v: got %+v on %q", tc.devices, x, got)
		}
		if tc.note != "" && !anyContains(x.Notes, tc.note) {
			t.Errorf("%v: no note with %q: %q", tc.devices, tc.note, x.Notes)
		}
		if tc.from != "" && x.From != tc.from {
			t.Errorf("%v: from %q\nwant %q", tc.devices, x.From, tc.from)
		}
		if x.Disk != "" {
			e, err := limits.MustDefault().ParseExpectation(x.Disk, x.VM, x.Attached, x.Cache)
			if err != nil {
				t.Errorf("%v: the catalog refuses %+v: %v", tc.devices, x, err)
				continue
			}
			if e.VM == nil || e.VM.ID != x.VM || e.Disk.Spec != x.Disk {
				t.Errorf("%v: expectation %+v", tc.devices, e)
			}
		}
	}
	if s := info.Summary(); s != "azure Standard_D8s_v3 in westeurope zone 1, 5 disk(s), from the Azure IMDS" {
		t.Errorf("summary %q", s)
	}
}

// IBM splits volume bandwidth over the VM's data volumes: the others
// with a known spec go to Attached, the rest get a note.
func TestExpectForIBMAttached(t *testing.T) {
	info := Info{Provider: ibm, VMSize: "bx2-16x64", VM: "ibm:bx2-16x64", Disks: []Disk{
		{Role: "boot", Device: "vda"},
		{Role: "data", Device: "vdb", Spec: "ibm:10iops-tier:300GB", DeviceHow: "test"},
		{Role: "data", Device: "vdc", Spec: "ibm:5iops-tier:100GB"},
		{Role: "data", Device: "vdd"},
	}}
	x, d := info.ExpectFor([]string{"vdb"})
	if d == nil || x.Disk != "ibm:10iops-tier:300GB" || len(x.Attached) != 1 || x.Attached[0] != "ibm:5iops-tier:100GB" || x.Cache != "" {
		t.Fatalf("%+v %v", x, d)
	}
	if !anyContains(x.Notes, "1 other data volume(s) have no catalog spec") {
		t.Errorf("notes %q", x.Notes)
	}
	e, err := limits.MustDefault().ParseExpectation(x.Disk, x.VM, x.Attached, x.Cache)
	if err != nil || e.Share == nil || len(e.Share.AllocMbps) != 2 {
		t.Fatalf("%v %+v", err, e)
	}
}

func TestExpectForAWS(t *testing.T) {
	s := serve(t, &fake{provider: aws})
	info, err := detect(context.Background(), testOptions(t, s.URL, awsTree(t)))
	if err != nil || info.Provider != aws {
		t.Fatal(err, info)
	}
	x, d := info.ExpectFor([]string{"nvme1n1p1", "nvme1n1"})
	if d == nil || d.ID != "vol-0fedcba9876543210" || x.Disk != "" || x.VM != "aws:m5.large" {
		t.Fatalf("%+v %+v", x, d)
	}
	if !anyContains(x.Notes, "not in instance metadata") || !strings.Contains(x.From, "vol-0fedcba9876543210") {
		t.Errorf("%+v", x)
	}
}

// Tying disks to devices through sysfs alone, and saying so when it
// cannot.
func TestAzureSysfsAmbiguity(t *testing.T) {
	tr := fixture(t, map[string]string{
		dataCtrl + "/device_id":                        "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}",
		dataCtrl + "/host3/target3:0:0/3:0:0:0/vendor": "Msft",
		dataCtrl + "/host3/target3:0:1/3:0:1:0/vendor": "Msft",
		rootCtrl + "/device_id":                        "{00000000-0000-8899-0000-000000000000}",
		rootCtrl + "/host0/target0:0:0/0:0:0:0/vendor": "Msft",
	}, map[string]string{
		"sys/block/sdc/device": "../../devices/LNXSYSTM:00/VMBUS:00/f8b3781b-1e82-4818-a1c3-63d806ec15bb/host3/target3:0:0/3:0:0:0",
		"sys/block/sdd/device": "../../devices/LNXSYSTM:00/VMBUS:00/f8b3781b-1e82-4818-a1c3-63d806ec15bb/host3/target3:0:1/3:0:1:0",
		"sys/block/sda/device": "../../devices/LNXSYSTM:00/VMBUS:00/00000000-0000-8899-0000-000000000000/host0/target0:0:0/0:0:0:0",
		// A link out of the sys root is not followed to a controller.
		"sys/block/sdx/device": "/proc/self",
	})
	tree := tree{sys: tr + "/sys", dev: tr + "/dev"}
	lun := 0
	d := Disk{Role: "data", LUN: &lun}
	tree.azureDataDevice(&d)
	if d.Device != "" || !anyContains(d.Notes, "matches several devices (sdc, sdd)") {
		t.Errorf("%+v", d)
	}
	lun2 := 5
	d = Disk{Role: "data", LUN: &lun2}
	tree.azureDataDevice(&d)
	if d.Device != "" || !anyContains(d.Notes, "no kernel device found for LUN 5") {
		t.Errorf("%+v", d)
	}
	o := Disk{Role: "os"}
	tree.azureOSDevice(&o)
	if o.Device != "sda" || !strings.Contains(o.DeviceHow, "OS disk") {
		t.Errorf("%+v", o)
	}
}
