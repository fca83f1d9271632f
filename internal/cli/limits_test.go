package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLimitsCommand(t *testing.T) {
	out, errOut, code := execute(t, "limits", "azure:premium-ssd:250GB", "--vm", "Standard_DS2_v2", "--io-size", "4k,1m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, s := range []string{"azure:P15", "1,100 IOPS, 125.0 MB/s", "VM throughput", "30 min", "233 GiB rounds up to P15"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	out, errOut, code = execute(t, "limits", "ibm:10iops-tier:300GiB", "--vm", "ibm:bx2-4x16", "--io-size", "256k", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Expectation struct {
			Share struct {
				AvailableMbps float64   `json:"available_mbps"`
				AllocMbps     []float64 `json:"alloc_mbps"`
			} `json:"share"`
		} `json:"expectation"`
		Ceilings []struct {
			BWBytes float64 `json:"bw_bytes"`
			Binds   struct{ Name string }
		} `json:"ceilings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Expectation.Share.AvailableMbps != 1607 || len(rep.Ceilings) != 1 || rep.Ceilings[0].Binds.Name != "volume bandwidth share" ||
		int(rep.Ceilings[0].BWBytes/1e6) != 200 {
		t.Errorf("IBM 4 vCPU: %+v", rep)
	}
	_, errOut, code = execute(t, "limits", "azure:P99")
	if code == 0 || !strings.Contains(errOut, "hint: valid:") || !strings.Contains(errOut, "P15") {
		t.Errorf("bad spec: exit %d, %s", code, errOut)
	}
	out, _, code = execute(t, "limits", "--target-iops", "5000", "--target-mbps", "200", "--provider", "azure")
	if code != 0 || !strings.Contains(out, "azure:P30") {
		t.Errorf("sizing: exit %d\n%s", code, out)
	}
}

func TestLimitsPrices(t *testing.T) {
	out, errOut, code := execute(t, "limits", "azure:P30", "--io-size", "4k")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, s := range []string{"price   $135.17 a month", "$0.0270 per provisioned IOPS", "source: "} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	// Seed 001's 2019 figures: 10 TB of Premium SSD against Premium Files.
	out, _, _ = execute(t, "limits", "azure:premium-ssd:10TB", "--price-as-of", "2019", "-o", "json")
	var rep struct {
		Cost struct {
			Price map[string]any `json:"price"`
		} `json:"cost"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Cost.Price["usd_per_month"] != 1638.0 || rep.Cost.Price["as_of"] != "2019" || rep.Cost.Price["region"] == nil || rep.Cost.Price["source"] == nil {
		t.Errorf("2019 price: %v", rep.Cost.Price)
	}
	pf := filepath.Join(t.TempDir(), "prices.yaml")
	if err := os.WriteFile(pf, []byte(`sources: {mine: {title: "our contract"}}
prices: [{family: ibm:10iops-tier, usd_per_gib_month: 0.2, region: eu-de, as_of: "2026-03", source: mine}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = execute(t, "limits", "ibm:10iops-tier:300GB", "--vm", "bx2.16x64", "--price-file", pf, "--io-size", "16k")
	if code != 0 || !strings.Contains(out, "$60.00 a month (eu-de, 2026-03)") || !strings.Contains(out, "ibm:bx2-16x64") {
		t.Errorf("--price-file: exit %d %s\n%s", code, errOut, out)
	}
	if err := os.WriteFile(pf, []byte(`prices: [{family: ibm:10iops-tier, usd_per_gib_month: 0.2}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := execute(t, "limits", "azure:P30", "--price-file", pf); code == 0 || !strings.Contains(errOut, "hint:") {
		t.Errorf("a price without a source: exit %d %s", code, errOut)
	}
	out, _, code = execute(t, "limits", "--target-iops", "5000", "--target-mbps", "200", "--provider", "azure", "--vm", "Standard_D4s_v3")
	if code != 0 || !strings.Contains(out, "$/MONTH") || !strings.Contains(out, "Standard_D8s_v5 carries it") {
		t.Errorf("sizing with a binding VM: exit %d\n%s", code, out)
	}
}

func TestCatalogCommand(t *testing.T) {
	out, _, code := execute(t, "catalog", "list")
	if code != 0 || !strings.Contains(out, "azure:premium-ssd") || !strings.Contains(out, "aws:m5.large") || !strings.Contains(out, "entries") {
		t.Errorf("catalog list: exit %d\n%s", code, out)
	}
	out, _, code = execute(t, "catalog", "show", "aws:gp3")
	if code != 0 || !strings.Contains(out, "2025..now") || !strings.Contains(out, "2020-12..2025") || !strings.Contains(out, "aws-gp:") {
		t.Errorf("catalog show: exit %d\n%s", code, out)
	}
	if _, _, code := execute(t, "catalog", "show", "azure:nothing"); code == 0 {
		t.Error("unknown id accepted")
	}
}

func TestReportExpect(t *testing.T) {
	out, errOut, code := execute(t, "report", "--expect", "azure:P15", "-o", "json", "../report/testdata/randread_4k_qd8.jsonplus.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"kind": "ceiling"`) && !strings.Contains(out, `"kind":"ceiling"`) {
		t.Errorf("no ceiling finding:\n%.2000s", out)
	}
	if _, errOut, code := execute(t, "report", "--vm", "Standard_DS2_v2", "../report/testdata/randread_4k_qd8.jsonplus.json"); code == 0 || !strings.Contains(errOut, "--expect") {
		t.Errorf("--vm without --expect: exit %d %s", code, errOut)
	}
}

// Issue 27's numbers: every float flag and spec of limits goes through
// units, so Inf, NaN and negatives are refused with a hint and exit 2,
// never printed as -9,223,372,036,854,775,808 IOPS or answered "which
// disk?".
func TestLimitsRefusesBadNumbers(t *testing.T) {
	for _, args := range [][]string{
		{"--target-iops", "Inf", "--provider", "aws"},
		{"--target-iops", "NaN", "--provider", "aws"},
		{"--target-iops", "-5", "--provider", "aws"},
		{"--target-mbps", "1e400", "--provider", "aws"},
		{"--target-iops", "0", "--provider", "aws"},
		{"--target-iops", "100", "--target-io-size", "0", "--provider", "aws"},
		{"azure:P15@abc"},
		{"azure:P15@-1"},
		{"aws:gp3:iops=NaN"},
		{"aws:gp2:-5GiB"},
		{"ibm:10iops-tier:300GB", "--vm", "bx2.16x64", "--volumes-per-node", "0"},
	} {
		out, errOut, code := execute(t, append([]string{"limits"}, args...)...)
		if code != 2 || !strings.Contains(errOut, "hint:") || strings.Contains(out+errOut, "-9,223") || strings.Contains(errOut, "which disk?") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

func TestLimitsIssue23(t *testing.T) {
	// Sizing lists nothing short of the target, and says only what was
	// asked.
	out, errOut, code := execute(t, "limits", "--target-iops", "10000", "--provider", "aws")
	if code != 0 || strings.Contains(out, "aws:gp2:3333GiB") || strings.Contains(out, "efs-bursting") || strings.Contains(out, "0 MB/s") ||
		!strings.Contains(out, "aws:gp2:3334GiB") || !strings.HasPrefix(out, "aws disks that sustain 10,000 IOPS at 16 KiB, reads and writes each") {
		t.Errorf("sizing: exit %d %s\n%s", code, errOut, out)
	}
	// gp3 without a size: rates, never $0.0000.
	out, _, _ = execute(t, "limits", "aws:gp3", "--io-size", "4k")
	if strings.Contains(out, "$0.0000") || !strings.Contains(out, "price   $0.08 per GiB-month, $0.005 per IOPS-month above 3,000, $0.04 per MiB/s-month above 125") {
		t.Errorf("gp3 price:\n%s", out)
	}
	// Short VM names; IBM's split with --volumes-per-node.
	out, errOut, code = execute(t, "limits", "ibm:10iops-tier:300GB", "--vm", "bx2.16x64", "--volumes-per-node", "2", "--io-size", "256k", "-o", "json")
	if code != 0 || !strings.Contains(out, `"alloc_mbps": [`) || !strings.Contains(out, "3803.5") {
		t.Errorf("--volumes-per-node 2: exit %d %s\n%s", code, errOut, out)
	}
	out, errOut, code = execute(t, "limits", "azure:P30", "--vm", "DS2_v2", "--io-size", "4k")
	if code != 0 || !strings.Contains(out, "vm      azure:Standard_DS2_v2") {
		t.Errorf("--vm DS2_v2: exit %d %s\n%s", code, errOut, out)
	}
	// The latency model and the host-cache arithmetic in the report.
	out, _, _ = execute(t, "limits", "azure:P4", "--vm", "D8s_v3", "--cache", "readwrite", "--io-size", "4k,1m")
	for _, s := range []string{"QD1 at 4 KiB: 120 IOPS; the 120 IOPS ceiling needs QD 1", "1 MiB writes: while the disk's burst credits last (30 min from a full bucket, as in the burst table) it drains 170 MB/s, as fast as writes enter, and no backlog builds; once they are spent, writes enter the cache at 128 MB/s and the disk drains only 25.0 MB/s: a 3 GiB backlog fills in 31 s, then IO to the disk stalls for 2.1 min",
		"the VM's 200 GiB cache is the whole VM's", "etcd (p99 under 10 ms) uncertain"} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
	out, _, _ = execute(t, "limits", "azure:P20", "--vm", "D8s_v3", "--cache", "readwrite", "--io-size", "1m")
	if !strings.Contains(out, "no backlog builds and IO does not stall") {
		t.Errorf("P20 behind D8s_v3:\n%s", out)
	}
}

// Several disks at once: one table on one VM; -o csv a record per disk;
// -o wide for a sizing; a bad format is refused with a hint.
func TestLimitsManyDisks(t *testing.T) {
	out, errOut, code := execute(t, "limits", "azure:P15", "azure:P30", "aws:gp3:100GiB", "--io-size", "4k")
	if code != 0 || !strings.Contains(out, "IOPS@4KiB") || !strings.Contains(out, "aws:gp3:100GiB:iops=3000,throughput=125") {
		t.Errorf("two providers at 4 KiB: exit %d %s\n%s", code, errOut, out)
	}
	if _, errOut, code := execute(t, "limits", "azure:P15", "azure:P30", "--io-size", "4k,1m"); code == 0 || !strings.Contains(errOut, "one size for a table") {
		t.Errorf("two sizes for a table: exit %d %s", code, errOut)
	}
	out, errOut, code = execute(t, "limits", "azure:P15", "azure:P30", "azure:E30", "--vm", "D8s_v3")
	if code != 0 || !strings.HasPrefix(out, "on azure:Standard_D8s_v3\nDISK") || strings.Count(out, "\nazure:") != 3 {
		t.Errorf("table: exit %d %s\n%s", code, errOut, out)
	}
	out, _, code = execute(t, "limits", "azure:P15", "azure:P30", "-o", "csv")
	if code != 0 || !strings.HasPrefix(out, "spec,family,size,") || strings.Count(out, "\n") != 3 {
		t.Errorf("csv: exit %d\n%s", code, out)
	}
	out, _, code = execute(t, "limits", "--target-iops", "15000", "--provider", "gcp", "--vm", "n2-standard-4", "-o", "wide")
	if code != 0 || !strings.Contains(out, "needs gcp:n2-standard-64") {
		t.Errorf("sizing -o wide: exit %d\n%s", code, out)
	}
	if _, errOut, code := execute(t, "limits", "azure:P15", "-o", "yaml"); code == 0 || !strings.Contains(errOut, "text, json, wide, csv") {
		t.Errorf("-o yaml: exit %d %s", code, errOut)
	}
}
