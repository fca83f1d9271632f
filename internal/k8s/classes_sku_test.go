package k8s

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Cloud disks get faster as they get larger: the class's disk depends on
// the size it is asked for (Azure premium SSD: P15 up to 256 GiB, P20 up
// to 512 GiB).
func TestCatalogDiskAt(t *testing.T) {
	params := map[string]string{"skuName": "Premium_LRS"}
	for size, want := range map[string]string{"256Gi": "P15", "300Gi": "P20"} {
		got, ok := CatalogDiskAt(resource.MustParse(size))("disk.csi.azure.com", params)
		if !ok || got != "azure:"+want {
			t.Errorf("%s: %q %v, want azure:%s", size, got, ok, want)
		}
	}
}
