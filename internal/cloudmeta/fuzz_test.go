package cloudmeta

import (
	"testing"
	"unicode/utf8"

	"github.com/iolens/iolens/internal/limits"
)

// fuzzOptions has no sys or dev tree: the fuzzers exercise the parsers
// and the mapping onto the catalog, not the file system.
func fuzzOptions() *Options {
	return &Options{Catalog: limits.MustDefault(), SysRoot: "/nonexistent/cloudmeta-fuzz/sys", DevRoot: "/nonexistent/cloudmeta-fuzz/dev"}
}

// checkInfo holds for anything built from a metadata answer: names fit
// the checks they passed, figures are in range, every spec is one the
// catalog takes back unchanged.
func checkInfo(t *testing.T, info *Info) {
	t.Helper()
	if info.VMSize != "" {
		if _, ok := name(info.VMSize, maxNameLen); !ok {
			t.Fatalf("vm size %q", info.VMSize)
		}
	}
	for _, s := range []string{info.Region, info.Zone} {
		if s != "" {
			if _, ok := name(s, maxNameLen); !ok {
				t.Fatalf("location %q", s)
			}
		}
	}
	for _, d := range info.Disks {
		checkDisk(t, &d)
	}
}

func checkDisk(t *testing.T, d *Disk) {
	t.Helper()
	if d.LUN != nil && (*d.LUN < 0 || *d.LUN > maxLUN) {
		t.Fatalf("lun %d", *d.LUN)
	}
	if d.SizeBytes < 0 || d.ProvisionedIOPS < 0 || d.ProvisionedIOPS > maxIOPS || d.ProvisionedBWBytes < 0 || d.ProvisionedBWBytes > maxBWBytes {
		t.Fatalf("figures %+v", d)
	}
	for _, s := range []string{d.Name, d.ID, d.Type} {
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 %q", s)
		}
		if _, ok := text(s, maxIDLen); !ok && s != "" {
			t.Fatalf("unprintable %q", s)
		}
	}
	if d.Spec != "" {
		got, err := limits.MustDefault().ParseDisk(d.Spec)
		if err != nil || got.Spec != d.Spec {
			t.Fatalf("spec %q does not round-trip: %v", d.Spec, err)
		}
	}
}

func FuzzParseAzure(f *testing.F) {
	f.Add(readTestdata(f, "azure-instance.json"))
	f.Add([]byte(`{"compute":{"vmSize":"Standard_D8s_v3","storageProfile":{"osDisk":{"diskSizeGB":30,"managedDisk":{"storageAccountType":"Premium_LRS"}},"dataDisks":[{"lun":"63","diskSizeGB":"65536","managedDisk":{"storageAccountType":"UltraSSD_LRS"},"opsPerSecondThrottle":"400000","bytesPerSecondThrottle":"10000000000"}]}}}`))
	f.Add([]byte(`{"compute":{"vmSize":"Standard_B2s","storageProfile":{"dataDisks":[{"lun":"0","diskSizeGB":"4","managedDisk":{"storageAccountType":"PremiumV2_LRS"}},{"lun":"0"}]}}}`))
	f.Add([]byte(`{"compute":{"vmSize":"x","storageProfile":{"osDisk":{"diffDiskSettings":{"option":"Local"}},"dataDisks":"none"}}}`))
	f.Add([]byte(`{"compute":{"vmSize":"Standard_D8s_v3","storageProfile":{"dataDisks":[{"lun":"99999999999999999999","diskSizeGB":"1e9","opsPerSecondThrottle":"NaN"}]}}}`))
	f.Add([]byte(`[[[[[[[[[[]]]]]]]]]]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		doc, _, err := parseAzure(b)
		if err != nil {
			return
		}
		o := fuzzOptions()
		info := Info{Provider: azure}
		azureInfo(o, doc, &info)
		checkInfo(t, &info)
	})
}

func FuzzParseAWSIdentity(f *testing.F) {
	f.Add(readTestdata(f, "aws-identity.json"))
	f.Add([]byte(`{"instanceType": 7, "region": {"x": 1}, "availabilityZone": null}`))
	f.Add([]byte(`{"instanceType": "m5.large\n", "region": "eu-west-1/../"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		doc, _, err := parseAWSIdentity(b)
		if err != nil {
			return
		}
		info := Info{Provider: aws}
		awsInfo(fuzzOptions(), doc, &info)
		checkInfo(t, &info)
	})
}

func FuzzParseToken(f *testing.F) {
	f.Add([]byte("AQAEAF5t-fake-session-token=="))
	f.Add([]byte("abc\r\nX-Injected: 1"))
	f.Add([]byte(" \t"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseToken("token", b)
		if err != nil {
			return
		}
		if s == "" || len(s) > 8192 {
			t.Fatalf("token %q", s)
		}
		for i := 0; i < len(s); i++ {
			if s[i] <= ' ' || s[i] > '~' {
				t.Fatalf("token %q", s)
			}
		}
	})
}

func FuzzEBSVolumeID(f *testing.F) {
	f.Add("vol0a1b2c3d4e5f60718")
	f.Add("vol-0a1b2c3d4e5f60718")
	f.Add("AWS1234567890ABCDEF")
	f.Add("vol../../x")
	f.Fuzz(func(t *testing.T, serial string) {
		id, ok := ebsVolumeID(serial)
		if !ok {
			return
		}
		if _, ok := name(id, 64); !ok || len(id) < 12 || id[:4] != "vol-" {
			t.Fatalf("%q -> %q", serial, id)
		}
	})
}

func FuzzParseGCP(f *testing.F) {
	f.Add(readTestdata(f, "gcp-machine-type.txt"), readTestdata(f, "gcp-disks.json"))
	f.Add([]byte("projects/1/zones/"), []byte(`[{"deviceName":"../x","type":"PERSISTENT-SSD"},{"deviceName":7,"type":["x"]}]`))
	f.Add([]byte("n2-custom-4-16384"), []byte(`{"deviceName":"a"}`))
	f.Fuzz(func(t *testing.T, mt, disks []byte) {
		if v, err := parseGCPPath("machine-type", mt); err == nil {
			if _, ok := name(v, maxNameLen); !ok {
				t.Fatalf("machine type %q", v)
			}
		}
		ds, _, err := parseGCPDisks(disks)
		if err != nil {
			return
		}
		if len(ds) > maxDisks {
			t.Fatalf("%d disks", len(ds))
		}
		o := fuzzOptions()
		tr := tree{sys: o.SysRoot, dev: o.DevRoot}
		for i := range ds {
			d := gcpDiskInfo(o, tr, &ds[i], "fuzz")
			checkDisk(t, &d)
		}
	})
}

func FuzzParseIBM(f *testing.F) {
	f.Add(readTestdata(f, "ibm-token.json"), readTestdata(f, "ibm-instance.json"), readTestdata(f, "ibm-volume-attachments.json"))
	f.Add([]byte(`{"access_token":"a\u0000b"}`), []byte(`{"profile":{"name":"bx2-2x8"},"volume_attachments":[{"id":"x","volume":{"capacity":"300","profile":{"name":"10iops-tier"}}}]}`), []byte(`{"volume_attachments":[{"device":{"id":"../../../../etc"}}]}`))
	f.Add([]byte(`{}`), []byte(`{"profile":{"name":"bx2-2x8"},"volume_attachments":[{"volume":{"capacity":"99999999","iops":"1e9","profile":{"name":"custom"}}}]}`), []byte(`[]`))
	f.Fuzz(func(t *testing.T, tok, inst, atts []byte) {
		if s, err := parseIBMToken(tok); err == nil && (s == "" || len(s) > 8192) {
			t.Fatalf("token %q", s)
		}
		o := fuzzOptions()
		tr := tree{sys: o.SysRoot, dev: o.DevRoot}
		if in, _, err := parseIBMInstance(inst); err == nil {
			if len(in.VolumeAttachments) > maxDisks {
				t.Fatalf("%d attachments", len(in.VolumeAttachments))
			}
			for i := range in.VolumeAttachments {
				d := ibmDisk(o, tr, &in.VolumeAttachments[i], "data", "fuzz")
				checkDisk(t, &d)
			}
		}
		if list, _, err := parseIBMAttachments(atts); err == nil {
			for i := range list {
				d := ibmDisk(o, tr, &list[i], "data", "fuzz")
				checkDisk(t, &d)
			}
		}
	})
}
