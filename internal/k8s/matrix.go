package k8s

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
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
}

// Name is a human label for progress lines: class/size[@node][#slot].
func (t Target) Name() string {
	var b strings.Builder
	if t.StorageClass == "" {
		// A host path target (node-check) has no volume.
		b.WriteString("hostpath")
	} else {
		fmt.Fprintf(&b, "%s/%s", t.StorageClass, t.Size.String())
	}
	if t.Node != "" {
		b.WriteString("@" + t.Node)
	}
	if t.Slot > 0 {
		fmt.Fprintf(&b, "#%d", t.Slot)
	}
	return b.String()
}

// Matrix is what to expand into targets.
type Matrix struct {
	StorageClasses []string
	Sizes          []resource.Quantity
	// Nodes pins targets to these nodes; empty lets the scheduler pick.
	Nodes []string
	// VolumesPerNode runs this many volumes at once on one node (at least 1).
	VolumesPerNode int
}

// Expand returns the targets of the matrix, classes × sizes × nodes ×
// volumes per node, in that nesting order, so that a sequential run goes
// through one class at a time as seed 001 compares them.
func (m Matrix) Expand() ([]Target, error) {
	if len(m.StorageClasses) == 0 {
		return nil, fmt.Errorf("no storage class given")
	}
	if len(m.Sizes) == 0 {
		return nil, fmt.Errorf("no size given")
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
	for _, sc := range m.StorageClasses {
		for _, size := range m.Sizes {
			for _, node := range nodes {
				group++
				for slot := 1; slot <= per; slot++ {
					t := Target{ID: fmt.Sprintf("t%d", len(out)+1), StorageClass: sc, Size: size, Node: node,
						Group: fmt.Sprintf("g%d", group)}
					if per > 1 {
						t.Slot = slot
					}
					out = append(out, t)
				}
			}
		}
	}
	return out, nil
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
		out = append(out, q)
	}
	return out, nil
}
