package limits

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/result"
)

// Labels a Kubernetes run records about the node a volume ran on, which
// Apply and CatalogCeiling read.
const (
	// LabelGroupSize is how many of the run's volumes ran at the same
	// time on the node (--volumes-per-node), this one included.
	LabelGroupSize = "k8s.group-size"
	// LabelAttachedDisks lists the other volumes attached to the node, as
	// catalog disks ("?" for one whose class the catalog cannot map),
	// joined by AttachedSep.
	LabelAttachedDisks = "k8s.node.attached-disks"
	AttachedSep        = " + "
)

// Apply replaces a result's ceiling findings with those against x and
// labels the result with the disk and VM it was compared with. A result
// of a Kubernetes run is compared on its node: with the other volumes
// attached there (IBM splits the VSI's volume bandwidth over them) and
// the run's volumes that ran beside it (they share the VM's caps).
func Apply(r *result.Result, x *Expectation) {
	c := MustDefault()
	x = c.onNode(x, r.Target.Labels)
	keep := r.Findings[:0:0]
	for _, f := range r.Findings {
		if f.Kind != KindCeiling {
			keep = append(keep, f)
		}
	}
	r.Findings = append(keep, c.Diagnose(r, x)...)
	if r.Target.Labels == nil {
		r.Target.Labels = map[string]string{}
	}
	r.Target.Labels[LabelExpect] = x.Disk.Spec
	if x.VM != nil {
		r.Target.Labels[LabelExpectVM] = x.VM.ID
	}
}

// onNode is x on the node a Kubernetes result ran on, as its labels
// describe it; x itself when they say nothing or x already names its
// neighbours.
func (c *Catalog) onNode(x *Expectation, l map[string]string) *Expectation {
	group, _ := strconv.Atoi(l[LabelGroupSize])
	attached := l[LabelAttachedDisks]
	if x.Disk == nil || len(x.Attached) > 0 || x.Concurrent > 1 || group <= 1 && attached == "" {
		return x
	}
	y := *x
	y.Notes = append([]string(nil), x.Notes...)
	unknown := 0
	switch {
	case attached != "":
		for _, a := range strings.Split(attached, AttachedSep) {
			d, err := c.ParseDisk(strings.TrimSpace(a))
			if err != nil || d.Family.Provider != x.Disk.Family.Provider {
				unknown++
				continue
			}
			y.Attached = append(y.Attached, d)
		}
	case group > 1:
		// No record of the node's volumes: at least the run's others.
		for i := 1; i < group; i++ {
			y.Attached = append(y.Attached, x.Disk)
		}
	}
	if group > 1 {
		y.SetConcurrent(group)
	}
	if y.VM != nil && y.Disk.Family.Kind != "file" {
		y.Share = nil
		y.computeShare(c)
		if unknown > 0 && y.Share != nil {
			y.Notes = append(y.Notes, fmt.Sprintf("%d other volume(s) attached to the node are of classes the catalog cannot map: left out of the split, so this volume's share is at most what is shown", unknown))
		}
	}
	return &y
}

// CatalogCeiling compares a result with the catalog disk its storage
// class provisions (the k8s.catalog-disk label), on the node's VM size
// when the catalog knows it, with the class's Azure host cache mode, the
// CSI driver's default (ReadOnly) when the class sets none. Results of
// classes the catalog cannot map are left alone.
func CatalogCeiling(r *result.Result) {
	l := r.Target.Labels
	spec := l["k8s.catalog-disk"]
	if spec == "" {
		return
	}
	c := MustDefault()
	vm := ""
	if it := l["k8s.node.node.kubernetes.io/instance-type"]; it != "" {
		provider, _, _ := strings.Cut(spec, ":")
		if v := c.VM(provider + ":" + it); v != nil {
			vm = v.ID
		}
	}
	params := map[string]string{}
	for k, v := range l {
		if p, ok := strings.CutPrefix(k, "k8s.sc."); ok {
			params[p] = v
		}
	}
	cache := StorageClassCache(l["k8s.provisioner"], params)
	if cache == "" {
		// Results recorded without the provisioner: the class's own word.
		for k, v := range params {
			if strings.EqualFold(k, "cachingmode") {
				cache = strings.ToLower(v)
			}
		}
	}
	x, err := c.ParseExpectation(spec, vm, nil, cache)
	if err != nil {
		x, err = c.ParseExpectation(spec, vm, nil, "")
	}
	if err != nil {
		return
	}
	Apply(r, x)
}

// The labels iolens puts on a result it compared with an expectation: the
// disk, the VM and, when they came from the cloud's metadata rather than
// --expect, where from. A user's own label may not take these names: a
// record would claim an expectation no one asked for.
const (
	LabelExpect       = "expect"
	LabelExpectVM     = "expect_vm"
	LabelExpectSource = "expect_source"
)

// ReservedLabel reports whether k is one of the labels iolens sets.
func ReservedLabel(k string) bool {
	return k == LabelExpect || k == LabelExpectVM || k == LabelExpectSource
}
