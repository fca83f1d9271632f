package limits

import (
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

func TestCatalogCeiling(t *testing.T) {
	res := func(labels map[string]string, iops float64) *result.Result {
		return &result.Result{Status: "ok", Test: result.TestSpec{Name: "randread-4k-qd32", RW: "randread", BlockSize: 4096, IODepth: 32, NumJobs: 1, Direct: true},
			Read:     &result.DirResult{IOPS: iops, BWBytes: iops * 4096, Lat: result.Latency{MeanNs: 32 / iops * 1e9}},
			Target:   result.Target{Labels: labels},
			Findings: []result.Finding{{Kind: KindCeiling, Summary: "stale"}, {Kind: "steady", Summary: "kept"}}}
	}
	// A P15 claim (managed-csi, Premium_LRS, 256Gi) on a DS2_v2 node,
	// at its 1,100 IOPS cap.
	r := res(map[string]string{"k8s.catalog-disk": "azure:P15", "k8s.node.node.kubernetes.io/instance-type": "Standard_DS2_v2",
		"k8s.sc.cachingMode": "None"}, 1098)
	CatalogCeiling(r)
	var got []string
	for _, f := range r.Findings {
		got = append(got, f.Kind+": "+f.Summary)
	}
	if len(r.Findings) != 2 || r.Findings[0].Summary != "kept" || !strings.HasPrefix(r.Findings[1].Summary, VerdictDiskIOPS) {
		t.Fatalf("findings: %q", got)
	}
	if r.Target.Labels["expect"] != "azure:P15" || r.Target.Labels["expect_vm"] != "azure:Standard_DS2_v2" {
		t.Errorf("labels %v", r.Target.Labels)
	}
	// A class the catalog does not map (local-path): no ceiling finding.
	r = res(map[string]string{"k8s.storage-class": "local-path"}, 50000)
	CatalogCeiling(r)
	if len(r.Findings) != 2 || r.Findings[0].Summary != "stale" {
		t.Errorf("unmapped class changed: %+v", r.Findings)
	}
}

// An Azure Disk class without cachingMode gets the CSI driver's default,
// ReadOnly: seed 001's 8,159 random-read IOPS on a DS2_v2 (500 GB Premium
// SSD, a P20) are the VM's 8,000 cached limit, not "inflation".
func TestCatalogCeilingCSIDefaultCache(t *testing.T) {
	r := &result.Result{Status: "ok", Test: result.TestSpec{Name: "randread", RW: "randread", BlockSize: 4096, IODepth: 64, NumJobs: 1, Direct: true},
		Read: &result.DirResult{IOPS: 8159, BWBytes: 8159 * 4096, Lat: result.Latency{MeanNs: 64 / 8159.0 * 1e9}},
		Target: result.Target{Labels: map[string]string{"k8s.catalog-disk": "azure:P20", "k8s.provisioner": "disk.csi.azure.com",
			"k8s.sc.skuName": "Premium_LRS", "k8s.node.node.kubernetes.io/instance-type": "Standard_DS2_v2"}}}
	CatalogCeiling(r)
	if len(r.Findings) != 1 {
		t.Fatalf("findings %+v", r.Findings)
	}
	f := r.Findings[0]
	if f.Code != result.CodeVMCap || !strings.Contains(f.Summary, "102% of azure:Standard_DS2_v2's cached limit at 4 KiB (8,000 IOPS") ||
		!strings.Contains(f.Summary, "the readonly host cache serves these reads") || f.Evidence["cache_hit_iops"] != 8000 {
		t.Errorf("8,159 IOPS on a DS2_v2: %s %v", f.Summary, f.Evidence)
	}
	// With cachingMode None the same figure is far above what the disk
	// and the VM allow uncached.
	r.Target.Labels["k8s.sc.cachingMode"] = "None"
	r.Findings = nil
	CatalogCeiling(r)
	if f := r.Findings[0]; f.Code != result.CodeAboveCeiling {
		t.Errorf("cachingMode None: %s", f.Summary)
	}
}

// IBM: the node's other volumes and the run's siblings split the VSI's
// volume bandwidth (seed 002: two 300 GB volumes on a bx2-16x64 get 475
// MB/s each, not the 786 MB/s of one alone), and share the VM's caps.
func TestCatalogCeilingOnTheNode(t *testing.T) {
	res := func(labels map[string]string) *result.Result {
		return &result.Result{Status: "ok", Test: result.TestSpec{Name: "read-256k", RW: "read", BlockSize: 256 << 10, IODepth: 64, NumJobs: 1, Direct: true},
			Read:   &result.DirResult{IOPS: 1800, BWBytes: 1800 * 262144, Lat: result.Latency{MeanNs: 35e6}},
			Target: result.Target{Labels: labels}}
	}
	base := func() map[string]string {
		return map[string]string{"k8s.catalog-disk": "ibm:10iops-tier:300GB", "k8s.provisioner": "vpc.block.csi.ibm.io",
			"k8s.node.node.kubernetes.io/instance-type": "bx2.16x64"}
	}
	ceilingMBps := func(r *result.Result) float64 {
		t.Helper()
		if len(r.Findings) == 0 {
			t.Fatal("no finding")
		}
		return r.Findings[0].Evidence["ceiling_bw_bytes"] / 1e6
	}
	alone := res(base())
	CatalogCeiling(alone)
	if got := ceilingMBps(alone); !near(got, 786.432, 0.01) {
		t.Errorf("alone: %.1f MB/s, want 786.4", got)
	}
	l := base()
	l[LabelGroupSize] = "2"
	two := res(l)
	CatalogCeiling(two)
	if got := ceilingMBps(two); !near(got, 475.4375, 0.01) || two.Findings[0].Code != result.CodeNodeShare {
		t.Errorf("--volumes-per-node 2: %.1f MB/s (%s), want 475.4", got, two.Findings[0].Summary)
	}
	// The node's attached volumes, as recorded, win over the group size:
	// one sibling and one volume of an unmapped class.
	l = base()
	l[LabelGroupSize] = "2"
	l[LabelAttachedDisks] = "ibm:10iops-tier:300GB" + AttachedSep + "?"
	node := res(l)
	CatalogCeiling(node)
	if got := ceilingMBps(node); !near(got, 475.4375, 0.01) || !strings.Contains(node.Findings[0].Summary, "fewer volumes") {
		t.Errorf("attached: %.1f MB/s: %s", got, node.Findings[0].Summary)
	}
	// Azure: two volumes running at once get half the VM's caps each.
	az := res(map[string]string{"k8s.catalog-disk": "azure:P30", "k8s.provisioner": "disk.csi.azure.com", "k8s.sc.cachingMode": "None",
		"k8s.node.node.kubernetes.io/instance-type": "Standard_DS2_v2", LabelGroupSize: "2"})
	CatalogCeiling(az)
	if got := ceilingMBps(az); !near(got, 48, 0.01) {
		t.Errorf("P30 with a sibling on a DS2_v2: %.1f MB/s, want 48 (half of 96)", got)
	}
}
