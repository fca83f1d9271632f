package k8s

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// A volume bound before its pod is placed (a class with Immediate binding)
// is created wherever the provisioner chooses, often in another zone than
// the node a benchmark is pinned to; the pod then never schedules, with
// the scheduler's terse "volume node affinity conflict". Seed 001 lost
// runs to this. These functions name the volume's zone and the nodes that
// could host it.

// zoneKey reports whether a label key names a zone: the well-known ones,
// and CSI drivers' own topology keys (topology.ebs.csi.aws.com/zone).
func zoneKey(k string) bool {
	return k == corev1.LabelTopologyZone || k == corev1.LabelFailureDomainBetaZone || strings.HasSuffix(k, "/zone")
}

// nodeZone is a node's zone, "" if it has no zone label.
func nodeZone(n *corev1.Node) string {
	if z := n.Labels[corev1.LabelTopologyZone]; z != "" {
		return z
	}
	for k, v := range n.Labels {
		if zoneKey(k) {
			return v
		}
	}
	return ""
}

// volumePlace describes where a PV's node affinity lets it be used:
// "zone z2" for a zonal volume, "node n1" for a local one, else the
// affinity's terms.
func volumePlace(pv *corev1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	var zones, hosts, other []string
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, r := range term.MatchExpressions {
			switch {
			case zoneKey(r.Key) && r.Operator == corev1.NodeSelectorOpIn:
				zones = append(zones, r.Values...)
			case r.Key == corev1.LabelHostname && r.Operator == corev1.NodeSelectorOpIn:
				hosts = append(hosts, r.Values...)
			default:
				other = append(other, fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(r.Values, ",")))
			}
		}
	}
	switch {
	case len(zones) > 0:
		return "zone " + strings.Join(uniq(zones), ", ")
	case len(hosts) > 0:
		return "node " + strings.Join(uniq(hosts), ", ")
	case len(other) > 0:
		return "nodes where " + strings.Join(other, "; ")
	}
	return ""
}

func uniq(ss []string) []string {
	sort.Strings(ss)
	out := ss[:0]
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// nodesFor lists the ready nodes a PV's node affinity admits, sorted.
func nodesFor(ctx context.Context, cs kubernetes.Interface, pv *corev1.PersistentVolume) ([]string, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for i := range list.Items {
		n := &list.Items[i]
		if pv.Spec.NodeAffinity != nil && pv.Spec.NodeAffinity.Required != nil {
			ok, err := corev1helpers.MatchNodeSelectorTerms(n, pv.Spec.NodeAffinity.Required)
			if err != nil || !ok {
				continue
			}
		}
		if NodeReady(n) && !n.Spec.Unschedulable {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// immediateAdvice is the advice for a class that binds at once.
func immediateAdvice(sc *storagev1.StorageClass) string {
	if sc == nil || sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate {
		return ""
	}
	return fmt.Sprintf("class %s binds Immediate: its volumes are made before their pods are placed, in whatever zone the provisioner picks. "+
		"Use a copy of the class with volumeBindingMode: WaitForFirstConsumer, so that each volume is made in its pod's zone", sc.Name)
}

// zoneConflict explains a pod that cannot be scheduled because its bound
// volume lives elsewhere: which zone (or node) the volume is in, which
// nodes could host it, and where the pod was asked to go.
func zoneConflict(ctx context.Context, cs kubernetes.Interface, pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass, node string) (cause, hint string) {
	if pvc == nil || pvc.Spec.VolumeName == "" {
		return "", ""
	}
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return "", ""
	}
	place := volumePlace(pv)
	if place == "" {
		return "", ""
	}
	cause = fmt.Sprintf("volume %s is in %s", pv.Name, place)
	hosts, err := nodesFor(ctx, cs, pv)
	switch {
	case err != nil:
	case len(hosts) == 0:
		cause += "; no ready node is there"
	default:
		cause += "; nodes that could host it: " + strings.Join(hosts, ", ")
	}
	if node != "" {
		where := ""
		if n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err == nil {
			if z := nodeZone(n); z != "" {
				where = " (zone " + z + ")"
			}
		}
		cause += fmt.Sprintf("; the pod must run on %s%s", node, where)
	}
	var advice []string
	if a := immediateAdvice(sc); a != "" {
		advice = append(advice, a)
	}
	if strings.HasPrefix(place, "zone ") {
		zone := strings.TrimPrefix(place, "zone ")
		advice = append(advice, fmt.Sprintf("or test nodes in %s only (--node-selector %s=%s)", place, corev1.LabelTopologyZone, strings.Split(zone, ", ")[0]))
	} else if len(hosts) > 0 {
		advice = append(advice, "or test on "+strings.Join(hosts, ", ")+" (--nodes)")
	}
	return cause, strings.Join(advice, "; ")
}

// zoneNote warns before anything is created when targets are pinned to
// nodes in several zones and a class binds Immediate: some volumes will be
// made in a zone their node is not in.
func zoneNote(ctx context.Context, cs kubernetes.Interface, targets []Target, classes map[string]*storagev1.StorageClass) string {
	pinned := map[string]bool{}
	var immediate []string
	seen := map[string]bool{}
	for _, t := range targets {
		if t.Node == "" {
			continue
		}
		pinned[t.Node] = true
		if sc := classes[t.StorageClass]; immediateAdvice(sc) != "" && !seen[sc.Name] {
			seen[sc.Name] = true
			immediate = append(immediate, sc.Name)
		}
	}
	if len(immediate) == 0 {
		return ""
	}
	zones := map[string]bool{}
	for node := range pinned {
		if n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err == nil {
			if z := nodeZone(n); z != "" {
				zones[z] = true
			}
		}
	}
	if len(zones) < 2 {
		return ""
	}
	sort.Strings(immediate)
	return fmt.Sprintf("class %s binds Immediate and the nodes asked for are in %d zones: a volume made in another zone than its node leaves the pod unschedulable. "+
		"A copy of the class with volumeBindingMode: WaitForFirstConsumer makes each volume in its pod's zone", strings.Join(immediate, ", "), len(zones))
}
