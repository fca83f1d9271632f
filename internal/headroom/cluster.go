package headroom

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// MaxClaims bounds the claims read from a cluster.
const MaxClaims = 5000

// Inventory is what the cluster says of its volumes: a rule per bound
// claim whose node and device were found (its cap from its class and
// size through the catalog, or unknown with why), the VM size of each
// node exporter's node, and what could not be told.
type Inventory struct {
	Rules []Rule
	VMs   map[string]string
	Notes []string
}

// Add puts what the cluster says into o, after what the user said:
// --expect and the mapping file's rules come first (capOf ranks rules by
// source), and a VM size given for an instance stands.
func (o *Options) Add(inv *Inventory) {
	o.Rules = append(o.Rules, inv.Rules...)
	if o.VMs == nil {
		o.VMs = map[string]string{}
	}
	for inst, vm := range inv.VMs {
		if _, ok := o.VMs[inst]; !ok {
			o.VMs[inst] = vm
		}
	}
}

// Claims picks the claims of a cluster: a namespace ("" for all), a
// label selector, one claim's name.
type Claims struct {
	Namespace string
	Selector  string
	Name      string
}

// FromCluster takes every bound claim pick selects and
// resolves each as analyze --pvc does (its node in the range, that
// node's exporter, its device), and its cap from its storage class: as
// iolens measured the class (o.Measured), else from the class's
// provisioner, parameters and size through the catalog (the CSI
// drivers' documented defaults where a parameter is missing); the
// nodes' instance-type labels give their VM sizes.
func FromCluster(ctx context.Context, cs kubernetes.Interface, c *promhist.Client, cat *limits.Catalog, pick Claims, o Options) (*Inventory, error) {
	inv := &Inventory{VMs: map[string]string{}}
	pvcs, err := cs.CoreV1().PersistentVolumeClaims(pick.Namespace).List(ctx, metav1.ListOptions{Limit: MaxClaims + 1, LabelSelector: pick.Selector})
	if err != nil {
		return nil, hint.Wrap(fmt.Errorf("listing PVCs: %w", err), "check --kubeconfig and --context, and that you may list PVCs and get PVs, storage classes and nodes")
	}
	if len(pvcs.Items) > MaxClaims {
		return nil, hint.Wrap(fmt.Errorf("more than %d claims", MaxClaims), "give --namespace to judge one namespace at a time")
	}
	items := pvcs.Items
	if pick.Name != "" {
		var one []corev1.PersistentVolumeClaim
		for _, p := range items {
			if p.Name == pick.Name {
				one = append(one, p)
			}
		}
		if len(one) == 0 {
			return nil, &promhist.PVCError{Claim: pick.Namespace + "/" + pick.Name, Why: "not found",
				Help: "kubectl get pvc -n " + pick.Namespace + " lists the claims; the cluster must be the one --kubeconfig and --context select"}
		}
		items = one
	}
	sort.Slice(items, func(i, j int) bool {
		return items[i].Namespace+"/"+items[i].Name < items[j].Namespace+"/"+items[j].Name
	})
	classes := map[string]*classInfo{}
	nodeVM := map[string]string{}
	for i, pvc := range items {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		claim := pvc.Namespace + "/" + pvc.Name
		if o.Progress != nil && i%50 == 0 {
			o.Progress(fmt.Sprintf("resolving claim %d of %d (%s)", i+1, len(items), claim))
		}
		if pvc.Spec.VolumeName == "" {
			inv.Notes = append(inv.Notes, claim+": not bound to a volume")
			continue
		}
		v, err := promhist.ResolvePVC(ctx, cs, c, pvc.Namespace, pvc.Name, o.From, o.To)
		var pe *promhist.PVCError
		if errors.As(err, &pe) {
			inv.Notes = append(inv.Notes, claim+": "+pe.Why)
			continue
		}
		if err != nil {
			return nil, err
		}
		inst := ""
		for _, m := range v.Selector {
			if m.Name == "instance" && m.Op == "=" {
				inst = m.Value
			}
		}
		if inst == "" || v.Device == "" {
			inv.Notes = append(inv.Notes, fmt.Sprintf("%s: on node %s, but its node exporter instance or device could not be told (give it with --expect INSTANCE/DEVICE=SPEC)", claim, v.Node))
			continue
		}
		if _, ok := nodeVM[v.Node]; !ok {
			nodeVM[v.Node] = ""
			if n, err := cs.CoreV1().Nodes().Get(ctx, v.Node, metav1.GetOptions{}); err == nil {
				if it := n.Labels[corev1.LabelInstanceTypeStable]; it != "" {
					if vm := cat.VM(it); vm != nil {
						nodeVM[v.Node] = vm.ID
					} else {
						inv.Notes = append(inv.Notes, fmt.Sprintf("node %s is a %s, not in the catalog: its VM caps are unknown", v.Node, it))
					}
				}
			}
		}
		if vm := nodeVM[v.Node]; vm != "" {
			inv.VMs[inst] = vm
		}
		r := Rule{Instance: inst, Device: v.Device, Claim: claim}
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, v.PV, metav1.GetOptions{})
		if err != nil {
			return nil, hint.Wrap(fmt.Errorf("reading PV %s: %w", v.PV, err), "check that you may get PVs")
		}
		if csi := pv.Spec.CSI; csi != nil && csi.Driver == "ebs.csi.aws.com" {
			r.VolumeID = csi.VolumeHandle
		}
		ci := classes[pv.Spec.StorageClassName]
		if ci == nil {
			ci = &classInfo{name: pv.Spec.StorageClassName}
			if ci.name != "" {
				if sc, err := cs.StorageV1().StorageClasses().Get(ctx, ci.name, metav1.GetOptions{}); err == nil {
					ci.provisioner, ci.params = sc.Provisioner, sc.Parameters
				} else {
					ci.err = err.Error()
				}
			}
			if ci.name != "" && ci.err == "" && o.Measured != nil {
				m, err := o.Measured(ctx, ci.name)
				if err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					inv.Notes = append(inv.Notes, fmt.Sprintf("class %s: the history database could not be read (%v): its measured caps are not used", ci.name, err))
				}
				ci.measured = m
			}
			classes[ci.name] = ci
		}
		size := pv.Spec.Capacity.Storage().Value()
		spec, ok := limits.FromStorageClass(ci.provisioner, ci.params, size)
		switch {
		case ci.name == "":
			r.Unknown = "no storage class: measure it with iolens k8s diagnose, or give --expect"
		case ci.err != "":
			r.Unknown = "storage class " + ci.name + " could not be read (" + ci.err + ")"
		case ci.measured != nil:
			// What iolens measured of the class comes before the
			// catalog's figures; the catalog disk the class maps to, if
			// any, still gives the price and the provider's IO counting.
			cp := *ci.measured
			cp.Source = SourceHistory
			cp.Name += " (class " + ci.name + ")"
			if ok {
				if dc, err := ParseCap(spec, SourceCatalog, cat); err == nil {
					cp.Disk, cp.IOUnitBytes = dc.Disk, dc.IOUnitBytes
				}
			}
			r.Cap = &cp
		case !ok:
			r.Unknown = fmt.Sprintf("class %s (%s): no catalog entry; measure it with iolens k8s diagnose --storage-class %s, or give --expect", ci.name, ci.provisioner, ci.name)
		default:
			cp, err := ParseCap(spec, SourceCatalog, cat)
			if err != nil {
				r.Unknown = fmt.Sprintf("class %s maps to %s, which the catalog cannot resolve: %v", ci.name, spec, err)
			} else {
				cp.Name += " (class " + ci.name + ")"
				r.Cap = cp
			}
		}
		inv.Rules = append(inv.Rules, r)
	}
	// The nodes' OS disks: of every node when the whole cluster is
	// judged, else of the claims' nodes; none for one claim (--pvc).
	var nodes []string
	switch {
	case pick.Name != "":
	case pick.Namespace == "" && pick.Selector == "":
		l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: MaxClaims})
		if err != nil {
			return nil, hint.Wrap(fmt.Errorf("listing nodes: %w", err), "check that you may list nodes")
		}
		for _, n := range l.Items {
			nodes = append(nodes, n.Name)
		}
	default:
		for n := range nodeVM {
			nodes = append(nodes, n)
		}
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		if err := osDisk(ctx, cs, c, cat, n, o, inv); err != nil {
			return nil, err
		}
	}
	return inv, nil
}

// osDisk adds a node's OS disk (AKS #1311: its own cap can bind before
// the VM's or any volume's) to the inventory: the device of the root
// file system its node exporter saw. Its cap is in no label: unknown
// unless --expect or the mapping file gives it. The node's instance type
// gives its VM size, as for the claims' nodes.
func osDisk(ctx context.Context, cs kubernetes.Interface, c *promhist.Client, cat *limits.Catalog, node string, o Options, inv *Inventory) error {
	sel, err := c.NodeSelector(ctx, cs, node, o.From, o.To)
	var pe *promhist.PVCError
	if errors.As(err, &pe) {
		inv.Notes = append(inv.Notes, fmt.Sprintf("node %s: its OS disk is not judged: %s", node, pe.Why))
		return nil
	}
	if err != nil {
		return err
	}
	inst := ""
	for _, m := range sel {
		if m.Name == "instance" && m.Op == "=" {
			inst = m.Value
		}
	}
	if inst == "" {
		return nil
	}
	itype := ""
	if n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err == nil {
		itype = n.Labels[corev1.LabelInstanceTypeStable]
		if vm := cat.VM(itype); vm != nil {
			if _, ok := inv.VMs[inst]; !ok {
				inv.VMs[inst] = vm.ID
			}
		}
	}
	disks, err := c.SeriesLabels(ctx, sel.Of(mIOTime), o.From, o.To, 256)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, l := range disks {
		known[l["device"]] = true
	}
	roots, err := c.SeriesLabels(ctx, sel.With("mountpoint", "=", "/").Of("node_filesystem_size_bytes"), o.From, o.To, 16)
	if err != nil {
		return err
	}
	dev := ""
	for _, l := range roots {
		if d := kernelName(l["device"], known); d != "" {
			dev = d
			break
		}
	}
	if dev == "" {
		inv.Notes = append(inv.Notes, fmt.Sprintf("node %s: no root file system on a disk its node exporter counts (enable its filesystem collector): its OS disk is not judged", node))
		return nil
	}
	why := fmt.Sprintf("the OS disk of node %s", node)
	if itype != "" {
		why += " (a " + itype + ")"
	}
	why += ": no label gives its disk type or size; give it with --expect " + inst + "/" + dev + "=SPEC (on AKS, the node pool's OS disk, e.g. azure:P10)"
	inv.Rules = append(inv.Rules, Rule{Instance: inst, Device: dev, OSDiskOf: node, Unknown: why})
	return nil
}

// partition matches a partition's kernel name and its disk's.
var partition = []*regexp.Regexp{regexp.MustCompile(`^(nvme\d+n\d+)p\d+$`), regexp.MustCompile(`^((?:[shv]|xv)d[a-z]+)\d+$`), regexp.MustCompile(`^(mmcblk\d+)p\d+$`)}

// kernelName is the disk statistics' name of a file system's device: the
// device itself, or the disk a partition is on.
func kernelName(fsdev string, known map[string]bool) string {
	d := strings.TrimPrefix(fsdev, "/dev/")
	if known[d] {
		return d
	}
	for _, re := range partition {
		if m := re.FindStringSubmatch(d); m != nil && known[m[1]] {
			return m[1]
		}
	}
	return ""
}

type classInfo struct {
	name, provisioner string
	params            map[string]string
	err               string
	measured          *Cap
}
