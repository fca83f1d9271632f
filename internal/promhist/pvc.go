package promhist

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/promhist/promql"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Volume is where a PVC's data lived: the node, the selector of that
// node's node exporter, and the device, as the cluster and Prometheus
// tell them.
type Volume struct {
	Namespace, Claim string
	PV               string
	Node             string
	Selector         promql.Selector
	// Device is the kernel name, "" when it could not be told.
	Device string
	// MountPoint is where the node exporter saw it mounted.
	MountPoint string
	// Notes say where each fact came from and what could not be told.
	Notes []string
}

// PVCError is a claim that cannot be followed to a node or device.
type PVCError struct {
	Claim string
	Why   string
	Help  string
}

func (e *PVCError) Error() string { return fmt.Sprintf("PVC %s: %s", e.Claim, e.Why) }

// Hint says what to give instead.
func (e *PVCError) Hint() string { return e.Help }

// dnsName is a Kubernetes object name.
var dnsName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

// ParsePVC reads NAMESPACE/NAME.
func ParsePVC(s string) (ns, name string, err error) {
	ns, name, ok := strings.Cut(s, "/")
	dns := dnsName
	if !ok || !dns.MatchString(ns) || !dns.MatchString(name) || len(ns) > 63 {
		return "", "", &PVCError{Claim: s, Why: "not NAMESPACE/NAME", Help: "e.g. --pvc databases/data-postgres-0"}
	}
	return ns, name, nil
}

// kubelet series that name a claim's node: the kubelet reports the
// volumes it has mounted.
const mVolumeStats = "kubelet_volume_stats_capacity_bytes"

// ResolvePVC follows a claim to its PV and the node it was on between
// from and to (kubelet's volume stats in Prometheus first, since the
// claim may have moved since; else where the cluster has it attached or
// mounted now), finds that node's node exporter in Prometheus, and the
// device from the mount the node exporter saw, or the disk's serial.
func ResolvePVC(ctx context.Context, cs kubernetes.Interface, c *Client, ns, name string, from, to time.Time) (*Volume, error) {
	claim := ns + "/" + name
	v := &Volume{Namespace: ns, Claim: name}
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, &PVCError{Claim: claim, Why: "not found", Help: "kubectl get pvc -n " + ns + " lists the claims; the cluster must be the one --kubeconfig and --context select"}
	}
	if err != nil {
		return nil, hint.Wrap(fmt.Errorf("reading PVC %s: %w", claim, err), "check --kubeconfig and --context, and that you may get PVCs and PVs")
	}
	if pvc.Spec.VolumeName == "" {
		return nil, &PVCError{Claim: claim, Why: "not bound to a volume", Help: "a claim has a disk only once bound; give --instance and --device for the node instead"}
	}
	v.PV = pvc.Spec.VolumeName
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, v.PV, metav1.GetOptions{})
	if err != nil {
		return nil, hint.Wrap(fmt.Errorf("reading PV %s of %s: %w", v.PV, claim, err), "check that you may get PVs (cluster-scoped)")
	}

	// The node.
	nodes, err := c.claimNodes(ctx, ns, name, from, to)
	if err != nil {
		return nil, err
	}
	switch {
	case len(nodes) == 1:
		v.Node = nodes[0]
		v.Notes = append(v.Notes, fmt.Sprintf("%s was on node %s in the range (kubelet's volume stats)", claim, v.Node))
	case len(nodes) > 1:
		return nil, &PVCError{Claim: claim, Why: fmt.Sprintf("mounted on several nodes in the range: %s", strings.Join(nodes, ", ")),
			Help: "narrow the range to when it was on one node, or give --instance for the node to look at"}
	default:
		node, how, err := clusterNode(ctx, cs, pv, ns, name)
		if err != nil {
			return nil, err
		}
		if node == "" {
			return nil, &PVCError{Claim: claim, Why: "no node has it attached or mounted now, and Prometheus has no kubelet volume stats of it in the range",
				Help: "give --instance for the node it was on"}
		}
		v.Node = node
		v.Notes = append(v.Notes, fmt.Sprintf("%s is on node %s (%s, now: it may have been elsewhere in the range)", claim, node, how))
	}

	// The node exporter of that node.
	sel, err := c.nodeSelector(ctx, cs, v.Node, from, to)
	if err != nil {
		return nil, err
	}
	v.Selector = sel

	// The device.
	dev, mp, how, err := c.volumeDevice(ctx, sel, pv, from, to)
	if err != nil {
		return nil, err
	}
	v.Device, v.MountPoint = dev, mp
	if dev == "" {
		v.Notes = append(v.Notes, fmt.Sprintf("the device of %s on %s could not be told (%s): every device of the node is analysed; give --device to pick one", v.PV, v.Node, how))
	} else {
		v.Notes = append(v.Notes, fmt.Sprintf("%s is %s on %s (%s)", v.PV, dev, v.Node, how))
	}
	return v, nil
}

// claimNodes lists the nodes whose kubelet reported the claim's volume in
// the range.
func (c *Client) claimNodes(ctx context.Context, ns, name string, from, to time.Time) ([]string, error) {
	sel := promql.Selector{{Name: "namespace", Op: "=", Value: ns}, {Name: "persistentvolumeclaim", Op: "=", Value: name}}
	ls, err := c.seriesLabels(ctx, sel.Of(mVolumeStats), from, to, 64)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range ls {
		n := l["node"]
		if n == "" {
			n = hostOf(l["instance"])
		}
		if n != "" && !contains(out, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

func hostOf(instance string) string {
	if h, _, err := net.SplitHostPort(instance); err == nil {
		return h
	}
	return instance
}

// clusterNode asks the cluster where the volume is now: attached
// (VolumeAttachment), mounted by a pod, or pinned by the PV's node
// affinity (local volumes).
func clusterNode(ctx context.Context, cs kubernetes.Interface, pv *corev1.PersistentVolume, ns, claim string) (node, how string, err error) {
	vas, err := cs.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, va := range vas.Items {
			if n := va.Spec.Source.PersistentVolumeName; n != nil && *n == pv.Name && va.Status.Attached {
				return va.Spec.NodeName, "VolumeAttachment " + va.Name, nil
			}
		}
	} else if !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) {
		return "", "", fmt.Errorf("listing VolumeAttachments: %w", err)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", "", hint.Wrap(fmt.Errorf("listing pods in %s: %w", ns, err), "check that you may list pods in the claim's namespace")
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			continue
		}
		for _, vol := range p.Spec.Volumes {
			if vol.PersistentVolumeClaim != nil && vol.PersistentVolumeClaim.ClaimName == claim {
				return p.Spec.NodeName, "pod " + p.Name, nil
			}
		}
	}
	if a := pv.Spec.NodeAffinity; a != nil && a.Required != nil {
		for _, t := range a.Required.NodeSelectorTerms {
			for _, e := range t.MatchExpressions {
				if e.Key == corev1.LabelHostname && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 {
					return e.Values[0], "the PV's node affinity", nil
				}
			}
		}
	}
	return "", "", nil
}

// NodeSelector finds the node exporter of a cluster node in Prometheus,
// as ResolvePVC does for a claim's node.
func (c *Client) NodeSelector(ctx context.Context, cs kubernetes.Interface, node string, from, to time.Time) (promql.Selector, error) {
	return c.nodeSelector(ctx, cs, node, from, to)
}

// nodeSelector finds the node exporter of a node in Prometheus: the
// instance whose uname reports the node's host name, or a label that
// holds the node's name or address.
func (c *Client) nodeSelector(ctx context.Context, cs kubernetes.Interface, node string, from, to time.Time) (promql.Selector, error) {
	names := []string{node}
	var ips []string
	if n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err == nil {
		for _, a := range n.Status.Addresses {
			switch a.Type {
			case corev1.NodeHostName:
				if !contains(names, a.Address) {
					names = append(names, a.Address)
				}
			case corev1.NodeInternalIP, corev1.NodeExternalIP:
				ips = append(ips, a.Address)
			}
		}
	}
	instances := func(sel promql.Selector, metric string) ([]string, error) {
		ls, err := c.seriesLabels(ctx, sel.Of(metric), from, to, 256)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, l := range ls {
			if i := l["instance"]; !contains(out, i) {
				out = append(out, i)
			}
		}
		return out, nil
	}
	// uname's nodename is the host name, which kubelets register as the
	// node's name (or its first label).
	byUname, err := instances(promql.Selector{{Name: "nodename", Op: "=~", Value: promql.Alternatives(names) + `|(` + promql.Alternatives(names) + `)\..*`}}, "node_uname_info")
	if err != nil {
		return nil, err
	}
	cands := []promql.Selector{}
	if len(byUname) == 1 {
		cands = append(cands, promql.Selector{{Name: "instance", Op: "=", Value: byUname[0]}})
	}
	for _, lbl := range []string{"node", "nodename", "kubernetes_node", "instance"} {
		cands = append(cands, promql.Selector{{Name: lbl, Op: "=", Value: node}})
	}
	hosts := append(append([]string{}, names...), ips...)
	cands = append(cands, promql.Selector{{Name: "instance", Op: "=~", Value: "(" + promql.Alternatives(hosts) + `)(:[0-9]+)?`}})
	for _, sel := range cands {
		got, err := instances(sel, mIOTime)
		if err != nil {
			return nil, err
		}
		if len(got) == 1 {
			return promql.Selector{{Name: "instance", Op: "=", Value: got[0]}}, nil
		}
		if len(got) > 1 {
			return sel, nil
		}
	}
	return nil, &PVCError{Claim: node, Why: fmt.Sprintf("no node exporter of node %s found in Prometheus (by uname, by the node, nodename or instance labels, or by its addresses %s)", node, strings.Join(ips, ", ")),
		Help: "give --match with the label that names the node in your node exporter's series, e.g. --match '{instance=\"10.0.0.5:9100\"}'"}
}

// volumeDevice finds the PV's device on the node: from the mount the
// node exporter's filesystem collector saw (the kubelet's mount of the
// volume, or the file system holding a local volume's path), else from
// the disk's serial (AWS EBS, GCE PD).
func (c *Client) volumeDevice(ctx context.Context, sel promql.Selector, pv *corev1.PersistentVolume, from, to time.Time) (dev, mount, how string, err error) {
	disks, err := c.seriesLabels(ctx, sel.Of(mIOTime), from, to, 256)
	if err != nil {
		return "", "", "", err
	}
	known := map[string]bool{}
	for _, l := range disks {
		known[l["device"]] = true
	}
	// The kernel name the disk statistics use for a file system's device.
	kernel := func(fsdev string) string {
		d := strings.TrimPrefix(fsdev, "/dev/")
		if known[d] {
			return d
		}
		for _, re := range []*regexp.Regexp{regexp.MustCompile(`^(nvme\d+n\d+)p\d+$`), regexp.MustCompile(`^((?:[shv]|xv)d[a-z]+)\d+$`)} {
			if m := re.FindStringSubmatch(d); m != nil && known[m[1]] {
				return m[1]
			}
		}
		return ""
	}
	pats := []string{`.*/` + regexp.QuoteMeta(pv.Name) + `(/mount|/globalmount)?`}
	if csi := pv.Spec.CSI; csi != nil {
		h := sha256.Sum256([]byte(csi.VolumeHandle))
		pats = append(pats, `.*/`+hex.EncodeToString(h[:])+`/globalmount`)
	}
	fs, err := c.seriesLabels(ctx, sel.With("mountpoint", "=~", strings.Join(pats, "|")).Of("node_filesystem_size_bytes"), from, to, 64)
	if err != nil {
		return "", "", "", err
	}
	for _, l := range fs {
		if d := kernel(l["device"]); d != "" {
			return d, l["mountpoint"], "the node exporter saw " + l["device"] + " mounted at " + l["mountpoint"], nil
		}
	}
	path := ""
	switch {
	case pv.Spec.Local != nil:
		path = pv.Spec.Local.Path
	case pv.Spec.HostPath != nil:
		path = pv.Spec.HostPath.Path
	}
	if path != "" {
		all, err := c.seriesLabels(ctx, sel.Of("node_filesystem_size_bytes"), from, to, 256)
		if err != nil {
			return "", "", "", err
		}
		best := map[string]string{}
		for _, l := range all {
			mp := l["mountpoint"]
			if (path == mp || strings.HasPrefix(path, strings.TrimSuffix(mp, "/")+"/")) && len(mp) >= len(best["mountpoint"]) {
				best = l
			}
		}
		if d := kernel(best["device"]); d != "" {
			return d, best["mountpoint"], fmt.Sprintf("%s is on the file system at %s, on %s", path, best["mountpoint"], best["device"]), nil
		}
	}
	if serial := diskSerial(pv); serial != "" {
		info, err := c.seriesLabels(ctx, sel.With("serial", "=", serial).Of("node_disk_info"), from, to, 16)
		if err != nil {
			return "", "", "", err
		}
		for _, l := range info {
			if known[l["device"]] {
				return l["device"], "", "the disk's serial " + serial, nil
			}
		}
	}
	return "", "", "no mount of it in the node exporter's file systems, and no serial to match", nil
}

// diskSerial is the serial a cloud disk shows in the guest: an EBS
// volume vol-0abc is serial vol0abc on NVMe; a GCE PD is its name.
func diskSerial(pv *corev1.PersistentVolume) string {
	handle := ""
	switch {
	case pv.Spec.CSI != nil:
		handle = pv.Spec.CSI.VolumeHandle
	case pv.Spec.AWSElasticBlockStore != nil:
		handle = pv.Spec.AWSElasticBlockStore.VolumeID
	case pv.Spec.GCEPersistentDisk != nil:
		return pv.Spec.GCEPersistentDisk.PDName
	}
	if i := strings.LastIndex(handle, "/"); i >= 0 {
		handle = handle[i+1:]
	}
	if strings.HasPrefix(handle, "vol-") {
		return "vol" + strings.TrimPrefix(handle, "vol-")
	}
	if pv.Spec.CSI != nil && pv.Spec.CSI.Driver == "pd.csi.storage.gke.io" {
		return handle
	}
	return ""
}
