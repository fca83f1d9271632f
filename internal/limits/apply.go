package limits

import (
	"strings"

	"github.com/iolens/iolens/internal/result"
)

// Apply replaces a result's ceiling findings with those against x and
// labels the result with the disk and VM it was compared with.
func Apply(r *result.Result, x *Expectation) {
	keep := r.Findings[:0:0]
	for _, f := range r.Findings {
		if f.Kind != KindCeiling {
			keep = append(keep, f)
		}
	}
	r.Findings = append(keep, MustDefault().Diagnose(r, x)...)
	if r.Target.Labels == nil {
		r.Target.Labels = map[string]string{}
	}
	r.Target.Labels["expect"] = x.Disk.Spec
	if x.VM != nil {
		r.Target.Labels["expect_vm"] = x.VM.ID
	}
}

// CatalogCeiling compares a result with the catalog disk its storage
// class provisions (the k8s.catalog-disk label), on the node's VM size
// when the catalog knows it, with the class's Azure host cache mode.
// Results of classes the catalog cannot map are left alone.
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
	cache := ""
	for k, v := range l {
		if strings.EqualFold(k, "k8s.sc.cachingmode") {
			cache = strings.ToLower(v)
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
