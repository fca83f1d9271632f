package cli

import (
	"strings"
	"testing"
)

func TestK8sRunExpectFlags(t *testing.T) {
	// Checked before any cluster is contacted.
	if _, errs, code := execute(t, "k8s", "run", "--vm", "Standard_DS2_v2"); code != 2 || !strings.Contains(errs, "--expect") {
		t.Errorf("--vm without --expect: exit %d: %s", code, errs)
	}
	if _, errs, code := execute(t, "k8s", "run", "--expect", "azure:P99"); code != 2 || !strings.Contains(errs, "P15") {
		t.Errorf("unknown disk: exit %d: %s", code, errs)
	}
}
