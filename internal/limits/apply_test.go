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
