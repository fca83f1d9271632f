package k8s

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestExpand(t *testing.T) {
	sizes, err := ParseSizes([]string{"300Gi", " 1Ti", ""})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		m    Matrix
		want []string // Name() of each target, in order
		grps []int    // group sizes
	}{
		{"classes x sizes", Matrix{StorageClasses: []string{"a", "b"}, Sizes: sizes},
			[]string{"a/300Gi", "a/1Ti", "b/300Gi", "b/1Ti"}, []int{1, 1, 1, 1}},
		{"nodes", Matrix{StorageClasses: []string{"a"}, Sizes: sizes[:1], Nodes: []string{"n1", "n2"}},
			[]string{"a/300Gi@n1", "a/300Gi@n2"}, []int{1, 1}},
		{"volumes per node", Matrix{StorageClasses: []string{"a", "b"}, Sizes: sizes[:1], Nodes: []string{"n1"}, VolumesPerNode: 2},
			[]string{"a/300Gi@n1#1", "a/300Gi@n1#2", "b/300Gi@n1#1", "b/300Gi@n1#2"}, []int{2, 2}},
		{"volumes per node, scheduler picks", Matrix{StorageClasses: []string{"a"}, Sizes: sizes, VolumesPerNode: 3},
			[]string{"a/300Gi#1", "a/300Gi#2", "a/300Gi#3", "a/1Ti#1", "a/1Ti#2", "a/1Ti#3"}, []int{3, 3}},
		// Seed 001's uneven matrix: not every class at every size.
		{"targets only", Matrix{Volumes: []Volume{{StorageClass: "premium", Size: sizes[1]}, {StorageClass: "standard", Size: sizes[0]},
			{StorageClass: "raw", Size: sizes[0], Mode: corev1.PersistentVolumeBlock}}},
			[]string{"premium/1Ti", "standard/300Gi", "raw/300Gi/Block"}, []int{1, 1, 1}},
		{"targets beside the product, without repeats", Matrix{StorageClasses: []string{"a"}, Sizes: sizes[:1],
			Volumes: []Volume{{StorageClass: "a", Size: sizes[0]}, {StorageClass: "b", Size: sizes[1]}}, Nodes: []string{"n1", "n2"}},
			[]string{"a/300Gi@n1", "a/300Gi@n2", "b/1Ti@n1", "b/1Ti@n2"}, []int{1, 1, 1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts, err := c.m.Expand()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			ids := map[string]bool{}
			for _, x := range ts {
				names = append(names, x.Name())
				if ids[x.ID] {
					t.Errorf("duplicate id %s", x.ID)
				}
				ids[x.ID] = true
			}
			if strings.Join(names, " ") != strings.Join(c.want, " ") {
				t.Errorf("got %v, want %v", names, c.want)
			}
			var gs []int
			for _, g := range Groups(ts) {
				gs = append(gs, len(g))
				for _, x := range g[1:] {
					if x.Node != g[0].Node || x.StorageClass != g[0].StorageClass {
						t.Errorf("group mixes %v and %v", x, g[0])
					}
				}
			}
			if len(gs) != len(c.grps) {
				t.Fatalf("groups %v, want %v", gs, c.grps)
			}
			for i := range gs {
				if gs[i] != c.grps[i] {
					t.Errorf("groups %v, want %v", gs, c.grps)
				}
			}
		})
	}
	if _, err := (Matrix{Sizes: sizes}).Expand(); err == nil {
		t.Error("no class accepted")
	}
	if _, err := ParseSizes([]string{"lots"}); err == nil {
		t.Error("bad size accepted")
	}
	if _, err := ParseSizes([]string{"0"}); err == nil {
		t.Error("zero size accepted")
	}
	// Volumes sharing a node without --nodes are kept together by pod
	// affinity on their group.
	ts, _ := (Matrix{StorageClasses: []string{"a"}, Sizes: sizes[:1], VolumesPerNode: 2}).Expand()
	aff := affinityFor(ts[0], "r")
	if aff == nil || aff.PodAffinity == nil || aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("no pod affinity: %+v", aff)
	}
	if affinityFor(Target{ID: "t1", Size: resource.MustParse("1Gi")}, "r") != nil {
		t.Error("single target constrained")
	}
}

func TestParseVolume(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // class/size/mode, or "" for an error
	}{
		{"premium:256Gi", "premium/256Gi/"},
		{"raw:1Ti:Block", "raw/1Ti/Block"},
		{"raw:1Ti:block", "raw/1Ti/Block"},
		{"fast:10G:Filesystem", "fast/10G/Filesystem"},
		{"fast:10Gi:fs", "fast/10Gi/Filesystem"},
		{"fast", ""},
		{":10Gi", ""},
		{"fast:", ""},
		{"fast:lots", ""},
		{"fast:-1Gi", ""},
		{"fast:0", ""},
		{"fast:10Gi:Raw", ""},
		{"fast:10Gi:Block:extra", ""},
	} {
		v, err := ParseVolume(c.in)
		got := ""
		if err == nil {
			got = v.StorageClass + "/" + v.Size.String() + "/" + string(v.Mode)
		}
		if got != c.want {
			t.Errorf("ParseVolume(%q) = %q (%v), want %q", c.in, got, err, c.want)
		}
	}
}

func FuzzParseVolume(f *testing.F) {
	for _, s := range []string{"premium:256Gi", "raw:1Ti:Block", "a:1e3", "x:9999999999999999999999Ei", "a::", ":::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVolume(s)
		if err != nil {
			return
		}
		if v.StorageClass == "" || strings.Contains(v.StorageClass, ":") || v.Size.Sign() <= 0 {
			t.Fatalf("%q accepted as %+v", s, v)
		}
		if _, err := (Matrix{Volumes: []Volume{v}}).Expand(); err != nil {
			t.Fatalf("%q: accepted, then refused by Expand: %v", s, err)
		}
	})
}

// TestMatrixRefusesBadNames: names the API server would refuse, and sizes
// no volume has, are refused before any call.
func TestMatrixRefusesBadNames(t *testing.T) {
	one := []resource.Quantity{resource.MustParse("1Gi")}
	for _, m := range []Matrix{
		{StorageClasses: []string{"bad class!"}, Sizes: one},
		{StorageClasses: []string{"x;touch /tmp/p"}, Sizes: one},
		{StorageClasses: []string{"Upper"}, Sizes: one},
		{Volumes: []Volume{{StorageClass: "a/b", Size: one[0]}}},
		{StorageClasses: []string{"ok"}, Sizes: one, Nodes: []string{"node 1"}},
	} {
		if _, err := m.Expand(); err == nil || !strings.Contains(err.Error(), "is not valid") {
			t.Errorf("%+v: %v", m, err)
		}
	}
	if _, err := (Matrix{StorageClasses: []string{"managed-premium", "gp3.fast"}, Sizes: one, Nodes: []string{"ip-10-0-0-1.ec2.internal"}}).Expand(); err != nil {
		t.Errorf("valid names refused: %v", err)
	}
	if _, err := ParseSizes([]string{"99999999999999999999Ti"}); err == nil || !strings.Contains(err.Error(), "larger than any volume") {
		t.Errorf("a huge size: %v", err)
	}
	for ns, ok := range map[string]bool{"iolens": true, "Bad_NS!": false, "a.b": false, "": false} {
		if err := CheckName("namespace", ns); (err == nil) != ok {
			t.Errorf("namespace %q: %v", ns, err)
		}
	}
}
