package k8s

import (
	"fmt"
	"strings"

	"github.com/iolens/iolens/internal/hint"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Target is one volume to benchmark: a PVC of a class and size, placed on
// a node (or wherever the scheduler puts it), plus the Job that tests it.
type Target struct {
	// ID is unique within a run and short enough for a label value:
	// "t3" and so on, in matrix order.
	ID           string
	StorageClass string
	Size         resource.Quantity
	// Node is where the pod must run; empty lets the scheduler choose.
	Node string
	// Group gathers the targets that run at the same time on one node
	// (--volumes-per-node); Slot is the target's 1-based place in it.
	Group string
	Slot  int
	// GroupSize is how many targets run at once in the group.
	GroupSize int
	// VolumeMode is the target's own (--target CLASS:SIZE:MODE); empty
	// takes the run's.
	VolumeMode corev1.PersistentVolumeMode
}

// Name is a human label for progress lines: class/size[@node][#slot].
func (t Target) Name() string {
	var b strings.Builder
	if t.StorageClass == "" {
		// A host path target (node-check) has no volume.
		b.WriteString("hostpath")
	} else {
		fmt.Fprintf(&b, "%s/%s", t.StorageClass, t.Size.String())
		if t.VolumeMode == corev1.PersistentVolumeBlock {
			b.WriteString("/Block")
		}
	}
	if t.Node != "" {
		b.WriteString("@" + t.Node)
	}
	if t.Slot > 0 {
		fmt.Fprintf(&b, "#%d", t.Slot)
	}
	return b.String()
}

// Volume is one class and size to test, with its own volume mode or the
// run's (empty).
type Volume struct {
	StorageClass string
	Size         resource.Quantity
	Mode         corev1.PersistentVolumeMode
}

// Matrix is what to expand into targets.
type Matrix struct {
	// StorageClasses × Sizes is the product to test.
	StorageClasses []string
	Sizes          []resource.Quantity
	// Volumes are tested beside the product, each as given, for uneven
	// matrices (--target CLASS:SIZE[:MODE]).
	Volumes []Volume
	// Nodes pins targets to these nodes; empty lets the scheduler pick.
	Nodes []string
	// VolumesPerNode runs this many volumes at once on one node (at least 1).
	VolumesPerNode int
}

// CheckNames refuses class and node names the API server would refuse,
// before anything asks it (the classes and nodes known so far: a command
// may add nodes it discovers later, and Expand checks again).
func (m Matrix) CheckNames() error {
	for _, sc := range m.StorageClasses {
		if err := CheckName("storage class", sc); err != nil {
			return err
		}
	}
	for _, v := range m.Volumes {
		if err := CheckName("storage class", v.StorageClass); err != nil {
			return err
		}
	}
	for _, n := range m.Nodes {
		if err := CheckName("node", n); err != nil {
			return err
		}
	}
	return nil
}

// Expand returns the targets of the matrix: classes × sizes, then the
// extra volumes not already in that product, each × nodes × volumes per
// node, in that nesting order, so that a sequential run goes through one
// class at a time as seed 001 compares them.
func (m Matrix) Expand() ([]Target, error) {
	if err := m.CheckNames(); err != nil {
		return nil, err
	}
	var vols []Volume
	if len(m.StorageClasses) > 0 || len(m.Volumes) == 0 {
		if len(m.StorageClasses) == 0 {
			return nil, fmt.Errorf("no storage class given")
		}
		if len(m.Sizes) == 0 {
			return nil, fmt.Errorf("no size given")
		}
		for _, sc := range m.StorageClasses {
			for _, size := range m.Sizes {
				vols = append(vols, Volume{StorageClass: sc, Size: size})
			}
		}
	}
	seen := map[string]bool{}
	key := func(v Volume) string { return v.StorageClass + "\x00" + v.Size.String() + "\x00" + string(v.Mode) }
	for _, v := range vols {
		seen[key(v)] = true
	}
	for _, v := range m.Volumes {
		if v.StorageClass == "" || v.Size.Sign() <= 0 {
			return nil, fmt.Errorf("volume %q/%s: a class and a positive size are needed", v.StorageClass, v.Size.String())
		}
		if !seen[key(v)] {
			seen[key(v)] = true
			vols = append(vols, v)
		}
	}
	per := m.VolumesPerNode
	if per < 1 {
		per = 1
	}
	nodes := m.Nodes
	if len(nodes) == 0 {
		nodes = []string{""}
	}
	var out []Target
	group := 0
	for _, v := range vols {
		for _, node := range nodes {
			group++
			for slot := 1; slot <= per; slot++ {
				t := Target{ID: fmt.Sprintf("t%d", len(out)+1), StorageClass: v.StorageClass, Size: v.Size, Node: node,
					Group: fmt.Sprintf("g%d", group), GroupSize: per, VolumeMode: v.Mode}
				if per > 1 {
					t.Slot = slot
				}
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// ParseVolume reads a --target value: CLASS:SIZE[:MODE], MODE being
// Filesystem or Block (any case).
func ParseVolume(s string) (Volume, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
		return Volume{}, fmt.Errorf("%q: want CLASS:SIZE[:MODE], such as managed-premium:256Gi or raw:1Ti:Block", s)
	}
	sizes, err := ParseSizes(parts[1:2])
	if err != nil || len(sizes) != 1 {
		if err == nil {
			err = fmt.Errorf("no size")
		}
		return Volume{}, fmt.Errorf("%q: %w", s, err)
	}
	if err := CheckName("storage class", parts[0]); err != nil {
		return Volume{}, fmt.Errorf("%q: %w", s, err)
	}
	v := Volume{StorageClass: parts[0], Size: sizes[0]}
	if len(parts) == 3 {
		switch strings.ToLower(parts[2]) {
		case "filesystem", "fs":
			v.Mode = corev1.PersistentVolumeFilesystem
		case "block":
			v.Mode = corev1.PersistentVolumeBlock
		default:
			return Volume{}, fmt.Errorf("%q: mode %q, want Filesystem or Block", s, parts[2])
		}
	}
	return v, nil
}

// Groups splits targets into the sets that must run together, in order.
func Groups(ts []Target) [][]Target {
	var out [][]Target
	idx := map[string]int{}
	for _, t := range ts {
		i, ok := idx[t.Group]
		if !ok {
			i = len(out)
			idx[t.Group] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], t)
	}
	return out
}

// ParseSizes reads "300Gi,1Ti".
func ParseSizes(list []string) ([]resource.Quantity, error) {
	var out []resource.Quantity
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, fmt.Errorf("size %q: %w", s, err)
		}
		if q.Sign() <= 0 {
			return nil, fmt.Errorf("size %q must be positive", s)
		}
		if limit := maxVolumeSize(); q.Cmp(limit) > 0 {
			return nil, fmt.Errorf("size %q is larger than any volume (at most %s)", s, limit.String())
		}
		out = append(out, q)
	}
	return out, nil
}

// maxVolumeSize bounds a size flag: no cloud volume comes near 1 EiB.
func maxVolumeSize() resource.Quantity { return resource.MustParse("1Ei") }

// CheckName refuses a name the API server would refuse (what names a
// storage class or a node: a DNS subdomain; a namespace: a DNS label),
// before any call, with the reason.
func CheckName(what, name string) error {
	var errs []string
	if what == "namespace" {
		errs = validation.IsDNS1123Label(name)
	} else {
		errs = validation.IsDNS1123Subdomain(name)
	}
	if len(errs) == 0 {
		return nil
	}
	return &hint.Error{Err: fmt.Errorf("%s name %q is not valid: %s", what, name, errs[0]),
		Advice: "Kubernetes names are lower-case letters, digits, '-' (and '.' except for namespaces); 'kubectl get storageclass' lists the classes"}
}
