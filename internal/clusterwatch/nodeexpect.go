package clusterwatch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/watch"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ExpectAnnotation on a StorageClass or a PersistentVolume names the disk
// its volumes are expected to be, for classes the catalog cannot map from
// their provisioner and parameters: a catalog disk (azure:P10) or the
// figures (iops=500,bw=100MB). On a PV it wins over its class.
const ExpectAnnotation = "iolens.dev/expect"

// NodeExpect finds, through the API, what the node's volumes are
// expected to be: the node's pods, their claims, the claims' volumes and
// the volumes' classes, mapped to catalog disks (limits.FromStorageClass)
// on the node's VM size. Claims, volumes and classes barely change, so
// they are kept between calls; only the node's pods are listed each time.
type NodeExpect struct {
	cs          kubernetes.Interface
	node        string
	creditStart float64
	timeout     time.Duration

	mu     sync.Mutex
	claims map[string]string // namespace/claim -> PV name, once bound
	pvs    map[string]*corev1.PersistentVolume
	scs    map[string]scInfo
}

type scInfo struct {
	provisioner string
	params      map[string]string
	expect      string
}

// NewNodeExpect finds what node's volumes are expected to be through cs;
// creditStart is the burst credit (%) assumed when watching starts.
func NewNodeExpect(cs kubernetes.Interface, node string, creditStart float64) *NodeExpect {
	return &NodeExpect{cs: cs, node: node, creditStart: creditStart, timeout: 10 * time.Second,
		claims: map[string]string{}, pvs: map[string]*corev1.PersistentVolume{}, scs: map[string]scInfo{}}
}

// volumes lists the persistent volumes the node's pods use, with what
// each is expected to be, and the node's VM size.
func (c *NodeExpect) volumes(ctx context.Context) ([]watch.Volume, string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	node, err := c.cs.CoreV1().Nodes().Get(ctx, c.node, metav1.GetOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("node %s: %w", c.node, err)
	}
	vm := ""
	// The labels that name a node's VM size, newest first.
	for _, l := range []string{"node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"} {
		if v := node.Labels[l]; v != "" {
			vm = v
			break
		}
	}
	pods, err := c.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + c.node})
	if err != nil {
		return nil, vm, fmt.Errorf("pods on %s: %w", c.node, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	var out []watch.Volume
	var errs []error
	for _, p := range pods.Items {
		if p.Spec.NodeName != c.node || p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim == nil {
				continue
			}
			pvName, err := c.claim(ctx, p.Namespace, v.PersistentVolumeClaim.ClaimName)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if pvName == "" || seen[pvName] {
				continue
			}
			seen[pvName] = true
			pv, err := c.volume(ctx, pvName)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			vol := watch.Volume{Name: pv.Name, Class: pv.Spec.StorageClassName}
			switch {
			case pv.Spec.Local != nil:
				vol.Path = pv.Spec.Local.Path
			case pv.Spec.HostPath != nil:
				vol.Path = pv.Spec.HostPath.Path
			}
			vol.Expect, err = c.expectOf(ctx, pv)
			if err != nil {
				errs = append(errs, err)
			}
			out = append(out, vol)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, vm, errors.Join(errs...)
}

// claim returns the PV a claim is bound to ("" while pending).
func (c *NodeExpect) claim(ctx context.Context, ns, name string) (string, error) {
	key := ns + "/" + name
	if pv, ok := c.claims[key]; ok {
		return pv, nil
	}
	pvc, err := c.cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("claim %s: %w", key, err)
	}
	if pvc.Spec.VolumeName != "" {
		c.claims[key] = pvc.Spec.VolumeName
	}
	return pvc.Spec.VolumeName, nil
}

func (c *NodeExpect) volume(ctx context.Context, name string) (*corev1.PersistentVolume, error) {
	if pv, ok := c.pvs[name]; ok {
		return pv, nil
	}
	pv, err := c.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("volume %s: %w", name, err)
	}
	c.pvs[name] = pv
	return pv, nil
}

// expectOf says what a PV is expected to be: its annotation, else its
// class's annotation, else the catalog disk its class provisions at its
// capacity; "" when none of these says.
func (c *NodeExpect) expectOf(ctx context.Context, pv *corev1.PersistentVolume) (string, error) {
	if e := strings.TrimSpace(pv.Annotations[ExpectAnnotation]); e != "" {
		return e, nil
	}
	class := pv.Spec.StorageClassName
	if class == "" {
		return "", nil
	}
	sc, ok := c.scs[class]
	if !ok {
		obj, err := c.cs.StorageV1().StorageClasses().Get(ctx, class, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("storage class %s: %w", class, err)
		}
		sc = scInfo{provisioner: obj.Provisioner, params: obj.Parameters, expect: strings.TrimSpace(obj.Annotations[ExpectAnnotation])}
		c.scs[class] = sc
	}
	if sc.expect != "" {
		return sc.expect, nil
	}
	size := pv.Spec.Capacity[corev1.ResourceStorage]
	spec, ok := limits.FromStorageClass(sc.provisioner, sc.params, size.Value())
	if !ok {
		return "", nil
	}
	return spec, nil
}

// ceiling turns an expectation into the watch's ceiling, on the node's VM
// when the catalog knows it for the disk's provider.
func (c *NodeExpect) ceiling(spec, vm string) (*watch.Ceiling, error) {
	var x *watch.Ceiling
	var err error
	if vm != "" {
		x, err = watch.ParseExpect(spec, vm)
	}
	if vm == "" || err != nil {
		// An instance type the catalog does not know (or of another
		// provider): the disk's own limits still hold.
		x, err = watch.ParseExpect(spec, "")
	}
	if err != nil {
		return nil, err
	}
	x.CreditStartPct = c.creditStart
	return x, nil
}

// Discoverer returns the watch's Discover: the devices to watch (fixed
// ones when the command line named them, else every disk behind a mounted
// file system plus the disks of the node's volumes) and what each is
// expected to be. A failing API is reported with what was found anyway.
func (c *NodeExpect) Discoverer(ctx context.Context, procRoot, sysRoot string, fixed []string) func() (watch.Discovery, error) {
	return func() (watch.Discovery, error) {
		d := watch.Discovery{Ceilings: map[string]*watch.Ceiling{}}
		if len(fixed) > 0 {
			d.Devices = append(d.Devices, fixed...)
		} else {
			names, mounts, err := watch.DefaultDevices(procRoot, sysRoot)
			if err != nil {
				return d, err
			}
			d.Devices, d.Mounts = names, mounts
		}
		vols, vm, apiErr := c.volumes(ctx)
		devs, err := watch.VolumeDevices(procRoot, sysRoot, vols)
		if err != nil {
			return d, errors.Join(apiErr, err)
		}
		expect, about := watch.NodeExpectations(vols, devs)
		d.About = about
		watched := map[string]bool{}
		for _, n := range d.Devices {
			watched[n] = true
		}
		var errs []error
		for _, dev := range slices.Sorted(maps.Keys(about)) {
			if !watched[dev] {
				if len(fixed) > 0 {
					continue // the command line chose the devices
				}
				// A volume's disk is watched even where watch skips the
				// kind by default (a loop device backing a local PV).
				d.Devices = append(d.Devices, dev)
			}
			spec := expect[dev]
			if spec == "" {
				continue
			}
			x, err := c.ceiling(spec, vm)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): %w", dev, about[dev], err))
				continue
			}
			d.Ceilings[dev] = x
		}
		return d, errors.Join(append([]error{apiErr}, errs...)...)
	}
}
