package cloudmeta

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/limits"
)

const dataCtrl = "sys/devices/LNXSYSTM:00/VMBUS:00/f8b3781b-1e82-4818-a1c3-63d806ec15bb"
const rootCtrl = "sys/devices/LNXSYSTM:00/VMBUS:00/00000000-0000-8899-0000-000000000000"

// azureTree: udev links for the OS disk and LUNs 0, 1 and 3; LUN 2 only
// in sysfs (sde on the data-disk controller), with a decoy at LUN 2 on
// the OS disk's controller.
func azureTree(t *testing.T) string {
	return fixture(t, map[string]string{
		dataCtrl + "/device_id":                        "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}\n",
		dataCtrl + "/host3/target3:0:0/3:0:0:2/vendor": "Msft\n",
		rootCtrl + "/device_id":                        "{00000000-0000-8899-0000-000000000000}\n",
		rootCtrl + "/host0/target0:0:0/0:0:0:2/vendor": "Msft\n",
		"sys/block/sde/size":                           "536870912\n",
		"sys/block/sdg/size":                           "2048\n",
		"dev/sda":                                      "",
	}, map[string]string{
		"dev/disk/azure/root":       "../../sda",
		"dev/disk/azure/scsi1/lun0": "../../../sdc",
		"dev/disk/azure/scsi1/lun1": "../../../sdd",
		"dev/disk/azure/scsi1/lun3": "../../../sdf",
		"sys/block/sde/device":      "../../devices/LNXSYSTM:00/VMBUS:00/f8b3781b-1e82-4818-a1c3-63d806ec15bb/host3/target3:0:0/3:0:0:2",
		"sys/block/sdg/device":      "../../devices/LNXSYSTM:00/VMBUS:00/00000000-0000-8899-0000-000000000000/host0/target0:0:0/0:0:0:2",
	})
}

func awsTree(t *testing.T) string {
	return fixture(t, map[string]string{
		"sys/block/nvme0n1/device/model":  "Amazon Elastic Block Store              \n",
		"sys/block/nvme0n1/device/serial": "vol0a1b2c3d4e5f60718\n",
		"sys/block/nvme0n1/size":          "16777216\n",
		"sys/block/nvme1n1/device/model":  "Amazon Elastic Block Store              \n",
		"sys/block/nvme1n1/device/serial": "vol0fedcba9876543210\n",
		"sys/block/nvme1n1/size":          "209715200\n",
		"sys/block/nvme2n1/device/model":  "Amazon EC2 NVMe Instance Storage        \n",
		"sys/block/nvme2n1/device/serial": "AWS1234567890ABCDEF\n",
		"sys/block/nvme2n1/size":          "146484375\n",
		"sys/block/loop0/size":            "0\n",
	}, nil)
}

func gcpTree(t *testing.T) string {
	return fixture(t, map[string]string{
		"sys/block/sda/size": "20971520\n",
		"sys/block/sdb/size": "419430400\n",
	}, map[string]string{
		"dev/disk/by-id/google-persistent-disk-0": "../../sda",
		"dev/disk/by-id/google-bench-data":        "../../sdb",
		"dev/disk/by-id/google-local-nvme-ssd-0":  "../../nvme0n1",
	})
}

func ibmTree(t *testing.T) string {
	return fixture(t, map[string]string{
		"sys/block/vda/serial": "0717-5b8c2a16-1b2c-4\n",
		"sys/block/vda/size":   "209715200\n",
		"sys/block/vdb/serial": "0717-0fbaf561-6390-4\n",
		"sys/block/vdb/size":   "585937500\n",
		"sys/block/vdc/serial": "cloud-init-0000\n",
	}, map[string]string{
		"dev/disk/by-id/virtio-0717-5b8c2a16-1b2c-4": "../../vda",
	})
}

// want is a disk as the test expects it; "" and 0 fields must be empty.
type wantDisk struct {
	role, typ, spec, device, caching string
	lun                              int // -1: none
	sizeGiB                          int64
	note                             string // a substring of one note; "" for none required
}

func TestDetectProviders(t *testing.T) {
	cases := []struct {
		provider     string
		tree         func(*testing.T) string
		vmSize, vm   string
		region, zone string
		disks        []wantDisk
		infoNote     string
		factSource   string
	}{
		{
			provider: azure, tree: azureTree,
			vmSize: "Standard_D8s_v3", vm: "azure:Standard_D8s_v3", region: "westeurope", zone: "1",
			disks: []wantDisk{
				{role: "os", typ: "Premium_LRS", spec: "azure:P4", device: "sda", caching: "readwrite", lun: -1, sizeGiB: 30},
				{role: "data", typ: "Premium_LRS", spec: "azure:P20", device: "sdc", caching: "readonly", lun: 0, sizeGiB: 512, note: "performance tier"},
				{role: "data", typ: "UltraSSD_LRS", spec: "azure:ultra:1024GiB:iops=20000,throughput=500", device: "sdd", caching: "none", lun: 1, sizeGiB: 1024},
				{role: "data", typ: "PremiumV2_LRS", device: "sde", caching: "none", lun: 2, sizeGiB: 256, note: "give --expect azure:premium-ssd-v2:256GiB:iops=N,throughput=M"},
				{role: "data", typ: "StandardSSD_LRS", spec: "azure:E10", device: "sdf", caching: "readwrite", lun: 3, sizeGiB: 100},
			},
			factSource: "Azure IMDS compute.vmSize",
		},
		{
			provider: aws, tree: awsTree,
			vmSize: "m5.large", vm: "aws:m5.large", region: "eu-west-1", zone: "eu-west-1b",
			disks: []wantDisk{
				{role: "ebs", device: "nvme0n1", lun: -1, sizeGiB: 8, note: "give --expect aws:TYPE:8GiB[:iops=N,throughput=M]"},
				{role: "ebs", device: "nvme1n1", lun: -1, sizeGiB: 100, note: "not in instance metadata"},
				{role: "instance-store", typ: "instance-store", device: "nvme2n1", lun: -1, sizeGiB: 70, note: "instance store"},
			},
			infoNote:   "give --expect aws:TYPE:SIZE",
			factSource: "AWS IMDSv2 instance-identity document instanceType",
		},
		{
			provider: gcp, tree: gcpTree,
			vmSize: "n2-standard-8", vm: "gcp:n2-standard-8", region: "europe-west4", zone: "europe-west4-b",
			disks: []wantDisk{
				{role: "persistent", typ: "PERSISTENT", device: "sda", lun: -1, sizeGiB: 10, note: "give --expect gcp:TYPE:10GiB"},
				{role: "persistent", typ: "PERSISTENT-BALANCED", spec: "gcp:pd-balanced:200GiB", device: "sdb", lun: -1, sizeGiB: 200},
				{role: "scratch", typ: "SCRATCH", lun: -1, note: "no /dev/disk/by-id/google-local-ssd-0"},
			},
			factSource: "GCP metadata instance/machine-type",
		},
		{
			provider: ibm, tree: ibmTree,
			vmSize: "bx2-16x64", vm: "ibm:bx2-16x64", region: "us-south", zone: "us-south-1",
			disks: []wantDisk{
				{role: "boot", device: "vda", lun: -1, sizeGiB: 100},
				{role: "data", device: "vdb", lun: -1, sizeGiB: 280},
			},
			infoNote:   "give --expect ibm:PROFILE:SIZE",
			factSource: "IBM VPC metadata instance profile.name",
		},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			f := &fake{provider: tc.provider}
			s := serve(t, f)
			info, err := detect(context.Background(), testOptions(t, s.URL, tc.tree(t)))
			if err != nil {
				t.Fatal(err)
			}
			if info.Provider != tc.provider || info.VMSize != tc.vmSize || info.VM != tc.vm || info.Region != tc.region || info.Zone != tc.zone {
				t.Fatalf("got %s %q (%q) in %q/%q, want %s %q (%q) in %q/%q; probes %+v notes %q",
					info.Provider, info.VMSize, info.VM, info.Region, info.Zone, tc.provider, tc.vmSize, tc.vm, tc.region, tc.zone, info.Probes, info.Notes)
			}
			if !hasFact(info.Facts, "vm_size", tc.vmSize, tc.factSource) {
				t.Errorf("no vm_size fact from %q: %+v", tc.factSource, info.Facts)
			}
			if tc.infoNote != "" && !anyContains(info.Notes, tc.infoNote) {
				t.Errorf("no note with %q: %q", tc.infoNote, info.Notes)
			}
			if len(info.Disks) != len(tc.disks) {
				t.Fatalf("%d disks, want %d: %+v", len(info.Disks), len(tc.disks), info.Disks)
			}
			for i, w := range tc.disks {
				d := info.Disks[i]
				lun := -1
				if d.LUN != nil {
					lun = *d.LUN
				}
				if d.Role != w.role || d.Type != w.typ || d.Spec != w.spec || d.Device != w.device || d.Caching != w.caching || lun != w.lun || gibCeil(d.SizeBytes) != w.sizeGiB {
					t.Errorf("disk %d: got role %q type %q spec %q device %q caching %q lun %d size %d GiB; want %+v (notes %q)",
						i, d.Role, d.Type, d.Spec, d.Device, d.Caching, lun, gibCeil(d.SizeBytes), w, d.Notes)
				}
				if w.note != "" && !anyContains(d.Notes, w.note) {
					t.Errorf("disk %d: no note with %q: %q", i, w.note, d.Notes)
				}
				if d.Device != "" && d.DeviceHow == "" {
					t.Errorf("disk %d: device %s without saying how it was found", i, d.Device)
				}
				// Every spec iolens returns is one the catalog accepts as is.
				if d.Spec != "" {
					if got, err := limits.MustDefault().ParseDisk(d.Spec); err != nil || got.Spec != d.Spec {
						t.Errorf("disk %d: spec %q does not round-trip through the catalog: %v", i, d.Spec, err)
					}
				}
			}
			for _, p := range info.Probes {
				if p.Answered != (p.Provider == tc.provider) {
					t.Errorf("probe %+v", p)
				}
			}
		})
	}
}

func hasFact(fs []Fact, key, value, source string) bool {
	for _, f := range fs {
		if f.Key == key && f.Value == value && f.Source == source {
			return true
		}
	}
	return false
}

func anyContains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// The Azure disk facts name the IMDS field each came from.
func TestAzureFactSources(t *testing.T) {
	s := serve(t, &fake{provider: azure})
	info, err := detect(context.Background(), testOptions(t, s.URL, azureTree(t)))
	if err != nil || len(info.Disks) != 5 {
		t.Fatalf("%v %+v", err, info)
	}
	ultra := info.Disks[2]
	for _, f := range []Fact{
		{"lun", "1", "Azure IMDS compute.storageProfile.dataDisks[2].lun"},
		{"type", "UltraSSD_LRS", "Azure IMDS compute.storageProfile.dataDisks[2].managedDisk.storageAccountType"},
		{"size_gib", "1024", "Azure IMDS compute.storageProfile.dataDisks[2].diskSizeGB"},
		{"provisioned_iops", "20000", "Azure IMDS compute.storageProfile.dataDisks[2].opsPerSecondThrottle"},
		{"provisioned_bw_bytes", "500000000", "Azure IMDS compute.storageProfile.dataDisks[2].bytesPerSecondThrottle"},
	} {
		if !hasFact(ultra.Facts, f.Key, f.Value, f.Source) {
			t.Errorf("missing %+v in %+v", f, ultra.Facts)
		}
	}
	if !strings.Contains(info.Disks[3].DeviceHow, "sysfs") || !strings.Contains(info.Disks[1].DeviceHow, "/dev/disk/azure/scsi1/lun0") {
		t.Errorf("device_how: %q, %q", info.Disks[3].DeviceHow, info.Disks[1].DeviceHow)
	}
}

// Token flows: the fake refuses a GET without the session token, so a
// detection proves the PUT came first and its token was carried.
func TestTokenFlows(t *testing.T) {
	for _, p := range []string{aws, ibm} {
		t.Run(p, func(t *testing.T) {
			f := &fake{provider: p}
			s := serve(t, f)
			o := testOptions(t, s.URL, fixture(t, nil, nil))
			o.Providers = []string{p}
			info, err := detect(context.Background(), o)
			if err != nil || info.Provider != p {
				t.Fatalf("%v %+v", err, info)
			}
			reqs := f.requests()
			if len(reqs) < 2 || !strings.HasPrefix(reqs[0], "PUT ") {
				t.Fatalf("requests %q: want the token PUT first", reqs)
			}
		})
	}
	// A service that hands out no token (an EC2 look-alike with IMDSv1
	// only) is not taken for AWS.
	f := &fake{handler: func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			http.Error(w, "", http.StatusMethodNotAllowed)
			return
		}
		w.Write(readTestdata(t, "aws-identity.json"))
	}}
	s := serve(t, f)
	o := testOptions(t, s.URL, fixture(t, nil, nil))
	o.Providers = []string{aws}
	info, err := detect(context.Background(), o)
	if err != nil || info.Detected() || info.Probes[0].Outcome != "HTTP 405" {
		t.Fatalf("%v %+v", err, info)
	}
}

// No cloud: nothing listens at the address. Detect says so, without an
// error, at once.
func TestNoCloud(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + l.Addr().String()
	l.Close()
	start := time.Now()
	info, err := detect(context.Background(), testOptions(t, addr, fixture(t, nil, nil)))
	if err != nil || info.Detected() {
		t.Fatalf("%v %+v", err, info)
	}
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Errorf("took %v with nothing listening", el)
	}
	if len(info.Probes) != 4 {
		t.Fatalf("probes %+v", info.Probes)
	}
	for _, p := range info.Probes {
		if p.Answered || p.Outcome != "connection refused" {
			t.Errorf("probe %+v", p)
		}
	}
	if info.Summary() != "no cloud metadata service answered" {
		t.Errorf("summary %q", info.Summary())
	}
	x, d := info.ExpectFor([]string{"sda"})
	if d != nil || x.Disk != "" || x.VM != "" {
		t.Errorf("expect %+v %v", x, d)
	}

	// An ordinary web server on that address is not a cloud either.
	s := serve(t, &fake{handler: func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>hello</html>"))
	}})
	info, err = detect(context.Background(), testOptions(t, s.URL, fixture(t, nil, nil)))
	if err != nil || info.Detected() {
		t.Fatalf("%v %+v", err, info)
	}
}

// A service that accepts the connection and never answers costs the
// probe timeout, not more.
func TestHangingService(t *testing.T) {
	s := serve(t, &fake{handler: hang()})
	o := testOptions(t, s.URL, fixture(t, nil, nil))
	o.ProbeTimeout = 300 * time.Millisecond
	start := time.Now()
	info, err := detect(context.Background(), o)
	el := time.Since(start)
	if err != nil || info.Detected() {
		t.Fatalf("%v %+v", err, info)
	}
	if el < 250*time.Millisecond || el > time.Second {
		t.Errorf("took %v, want about the 300ms probe timeout", el)
	}
	for _, p := range info.Probes {
		if !strings.HasPrefix(p.Outcome, "no answer within") {
			t.Errorf("probe %+v", p)
		}
	}
}

// The first provider to prove itself wins; probes still waiting are
// cancelled rather than waited for.
func TestFirstAnswerWins(t *testing.T) {
	az := &fake{provider: azure}
	stall := hang()
	s := serve(t, &fake{handler: func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metadata/instance" {
			az.ServeHTTP(w, r)
			return
		}
		// Every other provider's first request hangs.
		stall(w, r)
	}})
	az.t = t
	start := time.Now()
	o := testOptions(t, s.URL, azureTree(t))
	o.ProbeTimeout = 2 * time.Second
	info, err := detect(context.Background(), o)
	if err != nil || info.Provider != azure {
		t.Fatalf("%v %+v", err, info)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("took %v: the others were waited for", el)
	}
	for _, p := range info.Probes[1:] {
		if p.Outcome != "not needed: azure answered" {
			t.Errorf("probe %+v", p)
		}
	}
}

// Azure's 5 requests a second: a 429 is tried once more.
func TestRetryOn429(t *testing.T) {
	az := &fake{provider: azure}
	n := 0
	var mu sync.Mutex
	s := serve(t, &fake{handler: func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			http.Error(w, "Too many requests", http.StatusTooManyRequests)
			return
		}
		az.ServeHTTP(w, r)
	}})
	az.t = t
	o := testOptions(t, s.URL, fixture(t, nil, nil))
	o.Providers = []string{azure}
	info, err := detect(context.Background(), o)
	if err != nil || info.Provider != azure {
		t.Fatalf("%v %+v", err, info)
	}
}

func TestCallerCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := detect(ctx, Options{dial: loopbackOnly(t)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	// Cancelled while probing.
	s := serve(t, &fake{handler: hang()})
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := detect(ctx, testOptions(t, s.URL, fixture(t, nil, nil))); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

func TestOptionsErrors(t *testing.T) {
	for _, o := range []Options{
		{BaseURL: "169.254.169.254"},
		{BaseURL: "ftp://x"},
		{BaseURL: "http://x/?a=b"},
		{GCPURL: "http://"},
		{Providers: []string{"oracle"}},
	} {
		o.dial = loopbackOnly(t)
		_, err := detect(context.Background(), o)
		var oe *OptionsError
		if !errors.As(err, &oe) || oe.Hint() == "" {
			t.Errorf("%+v: err %v", o, err)
		}
	}
}

// The defaults are the real addresses; the dialer records them without
// connecting.
func TestDefaultAddresses(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	o := Options{
		SysRoot: t.TempDir(), DevRoot: t.TempDir(),
		dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			seen[addr] = true
			mu.Unlock()
			return nil, errors.New("not dialled in tests")
		},
	}
	info, err := detect(context.Background(), o)
	if err != nil || info.Detected() {
		t.Fatalf("%v %+v", err, info)
	}
	if !seen["169.254.169.254:80"] || !seen["metadata.google.internal:80"] || len(seen) != 2 {
		t.Errorf("dialled %v", seen)
	}
	if len(info.Probes) != 5 {
		t.Errorf("probes %+v", info.Probes)
	}
}
