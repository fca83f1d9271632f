package k8s

import (
	"context"
	"fmt"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// explainCreate turns a refused create into a cause and a hint.
func explainCreate(err error, kind string) (string, string) {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "exceeded quota"):
		return "a ResourceQuota in the namespace is full", "raise the quota, use fewer or smaller volumes (--size, --volumes-per-node), or another namespace (-n)"
	case strings.Contains(msg, "violates PodSecurity"):
		return "the namespace's Pod Security admission refused the pod", "Block mode and node-check need a namespace labelled pod-security.kubernetes.io/enforce=privileged (see docs/k8s.md)"
	case apierrors.IsForbidden(err):
		return "not allowed to create a " + kind, "apply deploy/rbac.yaml for your user or service account in this namespace"
	case apierrors.IsNotFound(err):
		return "the namespace does not exist", "create it, or pass -n with an existing namespace"
	case apierrors.IsInvalid(err):
		return "the API server rejected the object", "check --size, --access-mode and --volume-mode"
	}
	return "", ""
}

// events returns the events about an object, oldest first.
func events(ctx context.Context, cs kubernetes.Interface, ns, kind, name string) []corev1.Event {
	sel := fields.Set{"involvedObject.name": name, "involvedObject.kind": kind}.AsSelector().String()
	list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil
	}
	var out []corev1.Event
	for _, e := range list.Items {
		// Some clients ignore field selectors; filter again.
		if e.InvolvedObject.Name == name && e.InvolvedObject.Kind == kind {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { ti, tj := eventTime(out[i]), eventTime(out[j]); return ti.Before(&tj) })
	return out
}

func eventTime(e corev1.Event) metav1.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp
	case !e.EventTime.IsZero():
		return metav1.Time{Time: e.EventTime.Time}
	}
	return e.FirstTimestamp
}

// lastEvent picks the newest event, preferring warnings.
func lastEvent(evs []corev1.Event) *corev1.Event {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == corev1.EventTypeWarning {
			return &evs[i]
		}
	}
	if len(evs) > 0 {
		return &evs[len(evs)-1]
	}
	return nil
}

// diagnoseClaim explains a PVC that does not bind.
func diagnoseClaim(ctx context.Context, cs kubernetes.Interface, pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass) (string, string) {
	if pvc == nil {
		return "", ""
	}
	evs := events(ctx, cs, pvc.Namespace, "PersistentVolumeClaim", pvc.Name)
	ev := lastEvent(evs)
	cause := ""
	if ev != nil {
		cause = fmt.Sprintf("%s: %s", ev.Reason, ev.Message)
	}
	msg := cause
	switch {
	case strings.Contains(msg, "storageclass") && strings.Contains(msg, "not found"):
		return cause, "the storage class does not exist; see 'iolens k8s classes'"
	case strings.Contains(msg, "exceeded quota") || strings.Contains(msg, "QuotaExceeded") || strings.Contains(msg, "quota"):
		return cause, "the cloud or namespace quota is exhausted: raise it or ask for fewer, smaller volumes"
	case strings.Contains(msg, "topology") || strings.Contains(msg, "zone") || strings.Contains(msg, "accessible"):
		return cause, "the class cannot provision in the zone of the chosen node (WaitForFirstConsumer picks the pod's node first); choose nodes in a zone the class allows (--nodes, --node-selector topology.kubernetes.io/zone=...) or check the class's allowedTopologies"
	case ev != nil && (ev.Reason == "ExternalProvisioning" || ev.Reason == "Provisioning"):
		prov := pvc.Annotations["volume.kubernetes.io/storage-provisioner"]
		if prov == "" && sc != nil {
			prov = sc.Provisioner
		}
		return cause, fmt.Sprintf("no provisioner acted on the claim: is the CSI driver or provisioner %q installed and running? check its controller pod's logs", prov)
	case ev != nil && ev.Reason == "WaitForFirstConsumer", ev != nil && ev.Reason == "WaitForPodScheduled":
		return cause, "the volume waits for its pod to be scheduled; see why the pod is not scheduled"
	case ev != nil && ev.Reason == "ProvisioningFailed":
		return cause, "the provisioner refused the claim; its message above says why"
	}
	if sc != nil && cause == "" {
		return fmt.Sprintf("no events for the claim (provisioner %s)", sc.Provisioner),
			fmt.Sprintf("is the provisioner %q running? without it no volume is ever created", sc.Provisioner)
	}
	return cause, ""
}

// schedulingHints maps fragments of the scheduler's message to advice.
var schedulingHints = []struct{ frag, hint string }{
	{"volume node affinity conflict", "the volume can only be used in another zone or on another node than the one chosen; drop --nodes or choose nodes in the volume's zone"},
	{"untolerated taint", "the nodes are tainted: add --tolerate KEY[=VALUE][:EFFECT] for the taints you accept, or choose other nodes"},
	{"Insufficient", "the nodes lack the requested CPU or memory; free some, or run fewer targets at once (drop --parallel)"},
	{"didn't match Pod's node affinity/selector", "no node matches --nodes/--node-selector; check the node names and labels with 'kubectl get nodes --show-labels'"},
	{"unbound immediate PersistentVolumeClaims", "the volume has not bound yet; see the PVC's events"},
	{"didn't find available persistent volumes to bind", "no volume can be provisioned for the chosen node; check the class's allowedTopologies and the node's zone"},
	{"node(s) didn't match pod affinity rules", "the volumes of one group must share a node and none has room for all of them; lower --volumes-per-node"},
	{"had volume node affinity conflict", "the volume's node affinity excludes the node"},
	{"exceed max volume count", "the node cannot attach more volumes; lower --volumes-per-node"},
}

// diagnosePod explains a pod that does not schedule, start or finish.
func diagnosePod(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) (string, string) {
	if pod == nil {
		return "", ""
	}
	if c, h, fatal := fatalWaiting(pod); fatal || c != "" {
		return c, h
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			cause := c.Reason + ": " + c.Message
			for _, sh := range schedulingHints {
				if strings.Contains(c.Message, sh.frag) {
					return cause, sh.hint
				}
			}
			return cause, "the scheduler's message says which nodes were rejected and why"
		}
	}
	for _, cst := range pod.Status.ContainerStatuses {
		if t := cst.State.Terminated; t != nil && t.ExitCode != 0 {
			cause := fmt.Sprintf("agent exited with code %d (%s)", t.ExitCode, t.Reason)
			if t.Message != "" {
				cause += ": " + lastLine(t.Message)
			}
			if t.Reason == "OOMKilled" {
				return cause, "the agent ran out of memory; fewer numjobs or a smaller iodepth need less"
			}
			c2, h := explainAgentError(t.Message)
			return joinCause(cause, c2), h
		}
	}
	evs := events(ctx, cs, pod.Namespace, "Pod", pod.Name)
	if ev := lastEvent(evs); ev != nil {
		cause := fmt.Sprintf("%s: %s", ev.Reason, ev.Message)
		switch ev.Reason {
		case "FailedAttachVolume":
			return cause, "the volume could not be attached to the node; check the CSI driver's node plugin and the node's volume limit"
		case "FailedMount", "FailedMapVolume":
			return cause, "the volume could not be mounted; check the CSI driver's node plugin on that node (and --volume-mode)"
		case "FailedScheduling":
			for _, sh := range schedulingHints {
				if strings.Contains(ev.Message, sh.frag) {
					return cause, sh.hint
				}
			}
		}
		return cause, ""
	}
	return "", ""
}

// fatalWaiting reports container states that will not fix themselves.
// A transient pull back-off is reported as the cause but is not fatal
// until the start timeout.
func fatalWaiting(pod *corev1.Pod) (string, string, bool) {
	for _, cs := range append(append([]corev1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		w := cs.State.Waiting
		if w == nil {
			continue
		}
		cause := w.Reason
		if w.Message != "" {
			cause += ": " + w.Message
		}
		switch w.Reason {
		case "ErrImageNeverPull", "InvalidImageName":
			return cause, imageHint(cs.Image), true
		case "ErrImagePull", "ImagePullBackOff":
			return cause, imageHint(cs.Image), false
		case "CreateContainerConfigError", "CreateContainerError":
			return cause, "the container could not be created; the message says why", true
		}
	}
	return "", "", false
}

func imageHint(image string) string {
	return fmt.Sprintf("the nodes cannot get image %s: push it to a registry they can reach and pass --image, or load it on every node ('make image', then 'ctr -n k8s.io images import')", image)
}

func podReason(pod *corev1.Pod) string {
	if pod.Status.Reason != "" {
		return pod.Status.Reason + ": " + pod.Status.Message
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return fmt.Sprintf("exit code %d (%s)", t.ExitCode, t.Reason)
		}
	}
	return string(pod.Status.Phase)
}

// diagnoseJob explains a Job that has no pod.
func diagnoseJob(ctx context.Context, cs kubernetes.Interface, job *batchv1.Job) (string, string) {
	if job == nil {
		return "", ""
	}
	if ev := lastEvent(events(ctx, cs, job.Namespace, "Job", job.Name)); ev != nil {
		cause := fmt.Sprintf("%s: %s", ev.Reason, ev.Message)
		c, h := explainCreate(fmt.Errorf("%s", ev.Message), "Pod")
		if c != "" {
			return joinCause(cause, c), h
		}
		return cause, ""
	}
	return "the Job created no pod", "is the job controller (kube-controller-manager) running?"
}

// refusedPod reports a Job whose pods the API server refuses for good
// (Pod Security admission, RBAC): waiting for the schedule timeout would
// not change it. A full quota is not final and is left to the timeout.
func refusedPod(ctx context.Context, cs kubernetes.Interface, job *batchv1.Job) (cause, hint string, ok bool) {
	if job == nil {
		return "", "", false
	}
	for _, ev := range events(ctx, cs, job.Namespace, "Job", job.Name) {
		if ev.Reason != "FailedCreate" {
			continue
		}
		switch {
		case strings.Contains(ev.Message, "violates PodSecurity"):
			c, h := explainCreate(fmt.Errorf("%s", ev.Message), "Pod")
			return joinCause("FailedCreate: "+ev.Message, c), h, true
		case strings.Contains(ev.Message, "error looking up service account"):
			return "FailedCreate: " + ev.Message, "the agents of volumes that start together run as service account " + DefaultAgentServiceAccount +
				": kubectl apply -f deploy/rbac.yaml, or name another with --agent-service-account", true
		case strings.Contains(ev.Message, "is forbidden") && !strings.Contains(ev.Message, "exceeded quota"):
			return "FailedCreate: " + ev.Message, "the job controller may not create pods here: check the admission policies and RBAC of the namespace", true
		}
	}
	return "", "", false
}

// nodeLost checks whether the node a target runs on is gone, or no
// longer ready (its kubelet stopped posting status: crashed, rebooted,
// partitioned). It returns nil while the node is fine, or cannot be read.
func nodeLost(ctx context.Context, cs kubernetes.Interface, node string) func(Target) error {
	if node == "" {
		return nil
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return func(t Target) error {
			return &TargetError{Target: t, Phase: "run", Err: fmt.Errorf("node %s disappeared", node), NodeLost: node,
				Cause: "the node was deleted (scaled down, preempted or failed) while the target used it",
				hint:  "rerun on stable nodes (--nodes), or disable scale-down for the nodes under test"}
		}
	case err != nil:
		return nil
	}
	why := ""
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			why = fmt.Sprintf("Ready=%s", c.Status)
			if c.Reason != "" {
				why += ", " + c.Reason
			}
			if c.Message != "" {
				why += ": " + c.Message
			}
		}
	}
	if why == "" {
		// Ready, or not reporting yet: nothing to say.
		return nil
	}
	return func(t Target) error {
		return &TargetError{Target: t, Phase: "run", Err: fmt.Errorf("node %s is not ready (%s)", node, why), NodeLost: node,
			Cause: "the node's kubelet stopped answering while the target ran (stopped, crashed, or cut off the network)",
			hint:  "check the node (kubelet, container runtime, network); the other nodes' targets carry on. Its pod was force-deleted; the volume goes once the node is back"}
	}
}

// explainAgentError recognises what the agent reported.
func explainAgentError(msg string) (string, string) {
	switch {
	case strings.Contains(msg, "no space left") || strings.Contains(msg, "ENOSPC") || strings.Contains(msg, "not enough free space"):
		return "the volume is full", "the test file does not fit: ask for a larger volume (--size) or a smaller test file (--file-size)"
	case strings.Contains(msg, "permission denied") || strings.Contains(msg, "EACCES") || strings.Contains(msg, "operation not permitted"):
		return "the agent may not write there", "the volume is not writable by the pod's user; see docs/k8s.md (fsGroup, Block mode, --run-as-user for node-check)"
	case strings.Contains(msg, "does not support direct"):
		return "the file system refused O_DIRECT", "use a block-backed class, or --job with direct=0"
	}
	return "", ""
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
