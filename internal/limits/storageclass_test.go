package limits

import "testing"

func TestFromStorageClass(t *testing.T) {
	const gi = 1 << 30
	tests := []struct {
		prov   string
		params map[string]string
		size   int64
		want   string
		ok     bool
	}{
		{"kubernetes.io/azure-disk", map[string]string{"storageaccounttype": "Premium_LRS", "kind": "Managed", "cachingmode": "None"}, 250 * gi, "azure:P15", true},
		{"disk.csi.azure.com", map[string]string{"skuName": "Premium_LRS"}, 500 * gi, "azure:P20", true},
		{"disk.csi.azure.com", nil, 100 * gi, "azure:E10", true},
		{"kubernetes.io/azure-disk", map[string]string{"storageaccounttype": "Standard_LRS"}, 1024 * gi, "azure:S30", true},
		{"disk.csi.azure.com", map[string]string{"skuName": "PremiumV2_LRS", "DiskIOPSReadWrite": "5000", "DiskMBpsReadWrite": "200"}, 100 * gi, "azure:premium-ssd-v2:100GiB:iops=5000,throughput=200", true},
		// An Ultra class without DiskIOPSReadWrite / DiskMBpsReadWrite gets
		// the driver's documented defaults, 500 and 100 (driver-parameters.md).
		{"disk.csi.azure.com", map[string]string{"skuName": "UltraSSD_LRS"}, 1024 * gi, "azure:ultra:1024GiB:iops=500,throughput=100", true},
		{"vpc.block.csi.ibm.io", map[string]string{"profile": "sdp"}, 100 * gi, "ibm:sdp:100GB:iops=3000,throughput=125", true},
		{"ebs.csi.aws.com", map[string]string{"type": "gp3", "iops": "6000", "throughput": "250"}, 200 * gi, "aws:gp3:200GiB:iops=6000,throughput=250", true},
		{"ebs.csi.aws.com", nil, 100 * gi, "aws:gp3:100GiB:iops=3000,throughput=125", true},
		{"kubernetes.io/aws-ebs", map[string]string{"type": "io1", "iopsPerGB": "10"}, 100 * gi, "aws:io1:100GiB:iops=1000", true},
		{"kubernetes.io/aws-ebs", nil, 100 * gi, "aws:gp2:100GiB", true},
		{"pd.csi.storage.gke.io", map[string]string{"type": "pd-ssd"}, 500 * gi, "gcp:pd-ssd:500GiB", true},
		{"vpc.block.csi.ibm.io", map[string]string{"profile": "10iops-tier"}, 300 * gi, "ibm:10iops-tier:300GB", true},
		{"vpc.block.csi.ibm.io", map[string]string{"profile": "custom", "iops": "4000"}, 300 * gi, "ibm:custom:300GB:iops=4000", true},
		{"file.csi.azure.com", map[string]string{"skuName": "Premium_LRS"}, 1024 * gi, "azure:files-premium:1024GiB", true},
		{"filestore.csi.storage.gke.io", map[string]string{"tier": "zonal"}, 2048 * gi, "gcp:filestore-zonal:2048GiB", true},
		{"filestore.csi.storage.gke.io", map[string]string{"tier": "standard"}, 2048 * gi, "", false},
		{"filestore.csi.storage.gke.io", map[string]string{"tier": "zonal"}, 100 * gi, "", false},
		{"vpc.file.csi.ibm.io", map[string]string{"profile": "dp2", "iops": "3000"}, 300 * gi, "ibm:file-dp2:300GB:iops=3000", true},
		{"vpc.file.csi.ibm.io", map[string]string{"profile": "dp2", "iops": "9000"}, 300 * gi, "", false},
		{"vpc.file.csi.ibm.io", map[string]string{"profile": "rfs"}, 100 * gi, "ibm:file-regional:100GB:throughput=100", true},
		{"rancher.io/local-path", nil, gi, "", false},
		{"disk.csi.azure.com", map[string]string{"skuName": "Premium_LRS"}, 40000 * gi, "", false},
		{"disk.csi.azure.com", map[string]string{"skuName": "Nope"}, gi, "", false},
	}
	for _, tc := range tests {
		got, ok := FromStorageClass(tc.prov, tc.params, tc.size)
		if got != tc.want || ok != tc.ok {
			t.Errorf("FromStorageClass(%s, %v, %d) = %q, %v; want %q, %v", tc.prov, tc.params, tc.size, got, ok, tc.want, tc.ok)
		}
	}
	if got := StorageClassCache("disk.csi.azure.com", nil); got != CacheReadOnly {
		t.Errorf("CSI default cache %q", got)
	}
	if got := StorageClassCache("kubernetes.io/azure-disk", map[string]string{"cachingmode": "None"}); got != CacheNone {
		t.Errorf("cachingmode None: %q", got)
	}
}

// Each CSI driver's documented defaults: the Azure Disk driver's skuName
// StandardSSD_LRS and cachingMode ReadOnly (azuredisk-csi), the EBS
// driver's gp3 at 3,000 IOPS and 125 MiB/s (ebs-csi-params; the in-tree
// plugin's gp2), the PD driver's pd-standard.
func TestStorageClassDefaults(t *testing.T) {
	for _, tc := range []struct{ prov, want string }{
		{"disk.csi.azure.com", "azure:E15"},
		{"ebs.csi.aws.com", "aws:gp3:256GiB:iops=3000,throughput=125"},
		{"kubernetes.io/aws-ebs", "aws:gp2:256GiB"},
		{"pd.csi.storage.gke.io", "gcp:pd-standard:256GiB"},
		{"kubernetes.io/gce-pd", "gcp:pd-standard:256GiB"},
	} {
		if got, ok := FromStorageClass(tc.prov, nil, 256<<30); !ok || got != tc.want {
			t.Errorf("%s with no parameters: %q, want %q", tc.prov, got, tc.want)
		}
	}
	for _, p := range []map[string]string{nil, {"skuName": "Premium_LRS"}, {"CachingMode": "ReadOnly"}} {
		if got := StorageClassCache("disk.csi.azure.com", p); got != CacheReadOnly {
			t.Errorf("%v: cache %q, want the driver's ReadOnly", p, got)
		}
	}
	if got := StorageClassCache("ebs.csi.aws.com", nil); got != "" {
		t.Errorf("EBS has no host cache: %q", got)
	}
}
