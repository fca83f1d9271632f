package promhist

import (
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/limits"
)

// A ceiling at a catalog disk's published limits names that disk,
// nearest first, and no more than three.
func TestCatalogFits(t *testing.T) {
	c, err := limits.Default()
	if err != nil {
		t.Fatal(err)
	}
	// azure:P10: 500 IOPS, 100 MB/s (the catalog's own figures).
	fits := CatalogFits(c)(500, 100e6)
	if len(fits) == 0 || len(fits) > 3 {
		t.Fatalf("fits %+v", fits)
	}
	found := false
	for _, f := range fits {
		found = found || strings.Contains(f.Name, "P10") && f.Distance == 0
	}
	if !found || fits[0].Distance != 0 {
		t.Errorf("fits %+v: want azure P10 at distance 0 first", fits)
	}
}
