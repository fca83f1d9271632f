package k8s

import (
	"errors"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/hint"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// A namespace no object could be in is the user's mistake, found before
// the kubeconfig is read.
func TestConnectFlagsChecksTheNamespace(t *testing.T) {
	cf := genericclioptions.NewConfigFlags(false)
	ns, kc := "Bad_NS!", "/nonexistent/kubeconfig"
	cf.Namespace, cf.KubeConfig = &ns, &kc
	_, _, _, err := ConnectFlags(cf)
	var re *RequestError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "Bad_NS!") || !strings.Contains(hint.Of(err), "-n iolens") {
		t.Errorf("%v (hint %q)", err, hint.Of(err))
	}
}
