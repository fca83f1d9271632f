package k8s

import (
	"fmt"

	"github.com/iolens/iolens/internal/hint"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
)

// KubeconfigError is a kubeconfig that gives no cluster to talk to.
type KubeconfigError struct{ Err error }

func (e *KubeconfigError) Error() string { return fmt.Sprintf("kubeconfig: %v", e.Err) }
func (e *KubeconfigError) Unwrap() error { return e.Err }

// Hint says where the kubeconfig comes from.
func (e *KubeconfigError) Hint() string { return "pass --kubeconfig or set KUBECONFIG" }

// Connect makes the client of the cluster the kubeconfig flags select,
// and says which namespace and context they select; context is the one
// asked for, "" for the current one.
func Connect(kf genericclioptions.RESTClientGetter, context string) (c *Client, ns, ctxName string, err error) {
	rc, err := kf.ToRESTConfig()
	if err != nil {
		return nil, "", "", &KubeconfigError{Err: err}
	}
	loader := kf.ToRawKubeConfigLoader()
	// Many targets poll at once; the client-go default of 5 QPS would
	// throttle them.
	rc.QPS, rc.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, "", "", err
	}
	if ns, _, err = loader.Namespace(); err != nil {
		return nil, "", "", err
	}
	ctxName = context
	if ctxName == "" {
		if raw, err := loader.RawConfig(); err == nil {
			ctxName = raw.CurrentContext
		}
	}
	return &Client{CS: cs}, ns, ctxName, nil
}

// ConnectFlags is Connect for a command's kubeconfig flags, the context
// they name and their namespace, checked first: a namespace no object
// could be in is a *RequestError.
func ConnectFlags(cf *genericclioptions.ConfigFlags) (c *Client, ns, ctxName string, err error) {
	if cf.Namespace != nil && *cf.Namespace != "" {
		if err := CheckName("namespace", *cf.Namespace); err != nil {
			return nil, "", "", &RequestError{Err: hint.Wrap(err, "a namespace is lower-case letters, digits and '-', e.g. -n iolens")}
		}
	}
	if cf.Context != nil {
		ctxName = *cf.Context
	}
	return Connect(cf, ctxName)
}
