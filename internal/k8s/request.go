package k8s

import (
	"context"
	"errors"
	"fmt"

	"github.com/iolens/iolens/internal/limits"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
)

// Request is what a run asks for, as the command line gives it: storage
// classes × PVC sizes × nodes, plus volumes outside that product. Check
// refuses a malformed request before any API call and sets what it
// decides in the run's Config; Targets asks the cluster what the request
// leaves open (the default class, the nodes of AllNodes) and expands it.
type Request struct {
	Classes []string
	Sizes   []string // PVC sizes, quantities such as 100Gi
	// SizesGiven says Sizes came from the user: with only Volumes and no
	// Classes, a default size makes no product.
	SizesGiven     bool
	Volumes        []string // CLASS:SIZE[:MODE], beside the product
	VolumeMode     string   // Filesystem or Block
	AccessMode     string   // ReadWriteOnce when ""
	Nodes          []string
	AllNodes       bool
	NodeSelector   string // k=v[,k=v]
	VolumesPerNode int    // at least 1
	Parallel       bool

	sizes []resource.Quantity
	extra []Volume
}

// RequestError is a request that cannot run as given: the user's to fix.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

func badRequest(format string, args ...any) error {
	return &RequestError{Err: fmt.Errorf(format, args...)}
}

// Check refuses a malformed request (every error is a *RequestError) and
// sets cfg's volume and access modes, node selector and parallelism, and
// the catalog disk each class provisions.
func (q *Request) Check(cfg *Config) error {
	var err error
	if q.sizes, err = ParseSizes(q.Sizes); err != nil {
		return badRequest("--pvc-size: %v", err)
	}
	if err := (Matrix{StorageClasses: q.Classes, Nodes: q.Nodes}).CheckNames(); err != nil {
		return &RequestError{Err: err}
	}
	q.extra = nil
	for _, s := range q.Volumes {
		v, err := ParseVolume(s)
		if err != nil {
			return badRequest("--target %v", err)
		}
		q.extra = append(q.extra, v)
	}
	if cfg.VolumeMode, err = ParseVolumeMode(q.VolumeMode); err != nil {
		return &RequestError{Err: err}
	}
	access := q.AccessMode
	if access == "" {
		access = "ReadWriteOnce"
	}
	if cfg.AccessMode, err = ParseAccessMode(access); err != nil {
		return &RequestError{Err: err}
	}
	if q.SizesGiven && len(q.sizes) == 0 {
		return badRequest("--pvc-size: no size given")
	}
	if q.VolumesPerNode < 1 {
		return badRequest("--volumes-per-node must be at least 1")
	}
	if q.AllNodes && len(q.Nodes) > 0 {
		return badRequest("--nodes and --all-nodes are exclusive")
	}
	if cfg.NodeSelector, err = ParseNodeSelector(q.NodeSelector); err != nil {
		return &RequestError{Err: err}
	}
	cfg.Parallel = q.Parallel
	cfg.Disk = limits.FromStorageClass
	return nil
}

// Targets resolves what the request leaves to the cluster and expands it.
// With AllNodes the nodes are named, so cfg's node selector is cleared.
// No default class, when one is needed, is a *RequestError.
func (q *Request) Targets(ctx context.Context, cs kubernetes.Interface, cfg *Config) ([]Target, error) {
	classes, sizes := q.Classes, q.sizes
	if len(classes) == 0 && len(q.extra) > 0 && !q.SizesGiven {
		// Only volumes: no product, and no default class.
		sizes = nil
	}
	if len(classes) == 0 && (len(q.extra) == 0 || q.SizesGiven) {
		def, err := DefaultClass(ctx, cs)
		if errors.Is(err, ErrNoDefaultClass) {
			return nil, &RequestError{Err: err}
		}
		if err != nil {
			return nil, err
		}
		classes = []string{def}
	}
	nodes := q.Nodes
	if q.AllNodes {
		var err error
		if nodes, err = SchedulableNodes(ctx, cs, cfg.NodeSelector, cfg.Tolerations); err != nil {
			return nil, err
		}
		cfg.NodeSelector = nil
	}
	ts, err := Matrix{StorageClasses: classes, Sizes: sizes, Volumes: q.extra, Nodes: nodes, VolumesPerNode: q.VolumesPerNode}.Expand()
	if err != nil {
		return nil, &RequestError{Err: err}
	}
	return ts, nil
}
