package k8s

import (
	"bytes"
	"strings"
	"testing"
)

// The classes table: a row per class, its important parameters sorted,
// a dash for what is unknown, and the catalog disk at the size asked.
func TestWriteClasses(t *testing.T) {
	var b bytes.Buffer
	err := WriteClasses(&b, []ClassInfo{
		{Name: "fast", Provisioner: "disk.csi.azure.com", Default: true, VolumeBindingMode: "WaitForFirstConsumer", ReclaimPolicy: "Delete",
			AllowExpansion: true, Important: map[string]string{"skuName": "Premium_LRS", "cachingMode": "None"}, SKU: "azure:P15"},
		{Name: "slow", Provisioner: "x", VolumeBindingMode: "Immediate", ReclaimPolicy: "Retain"},
	}, "256Gi")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], "DISK AT 256Gi") {
		t.Fatalf("table:\n%s", b.String())
	}
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != "fast disk.csi.azure.com yes WaitForFirstConsumer Delete true cachingMode=None,skuName=Premium_LRS azure:P15" {
		t.Errorf("row %q", lines[1])
	}
	if f := strings.Fields(lines[2]); strings.Join(f, " ") != "slow x - Immediate Retain false - -" {
		t.Errorf("row %q", lines[2])
	}
	b.Reset()
	Leftovers{Jobs: []string{"ns/j"}, Pods: []string{"ns/p"}, PVCs: []string{"ns/c"}, ConfigMaps: []string{"ns/m"}, Retained: []string{"pv"}}.WriteText(&b)
	if b.String() != "ns/j\nns/p\nns/c\nns/m\n" {
		t.Errorf("leftovers %q", b.String())
	}
}
