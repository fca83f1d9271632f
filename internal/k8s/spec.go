package k8s

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels every object iolens creates carries, so that a crashed run can be
// found and cleaned up later.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "iolens"
	LabelRunID     = "iolens.dev/run-id"
	LabelTarget    = "iolens.dev/target"
	LabelGroup     = "iolens.dev/group"
	LabelRole      = "iolens.dev/role"
)

// Paths inside the agent pod.
const (
	agentBinary  = "/usr/local/bin/iolens"
	dataDir      = "/data"
	blockDevice  = "/dev/iolens-volume"
	hostDir      = "/host"
	hostParent   = "/host-parent"
	jobFileEnv   = "IOLENS_JOB_FILE"
	agentUID     = 65532
	containerTag = "agent"
	nodeDirTag   = "node-dir"
)

// DefaultAgentServiceAccount is the service account deploy/rbac.yaml
// creates for agents that wait for a start gate: it may read ConfigMaps in
// its namespace, nothing else.
const DefaultAgentServiceAccount = "iolens-agent"

// Config says how to run every target of a run.
type Config struct {
	Namespace string
	// Context is the kubeconfig context, recorded in each result.
	Context string
	RunID   string
	Image   string
	// PullPolicy defaults to IfNotPresent.
	PullPolicy corev1.PullPolicy
	// VolumeMode is Filesystem (default) or Block.
	VolumeMode corev1.PersistentVolumeMode
	AccessMode corev1.PersistentVolumeAccessMode
	// NodeSelector and Tolerations apply to every pod.
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	// Parallel runs every target at once; otherwise one group after the
	// other.
	Parallel bool
	// Keep leaves the objects in place for debugging.
	Keep     bool
	Timeouts Timeouts
	Agent    AgentArgs
	// Disk, if set, maps a class and a volume size in bytes to the cloud
	// catalog disk it provisions, recorded as the label k8s.catalog-disk.
	Disk func(provisioner string, parameters map[string]string, size int64) (spec string, ok bool)
	// HostPath and RunAsUser are for node-check targets. HostPath is the
	// directory on the node; the pod sees only a subdirectory of it that
	// its node-dir container creates and removes (see NodeDirName).
	HostPath  string
	RunAsUser *int64
	// AgentServiceAccount runs the pods of gated targets, whose agents
	// read their start time from the run's gate ConfigMap. Default
	// DefaultAgentServiceAccount. Other pods mount no token at all.
	AgentServiceAccount string
}

func (c Config) agentServiceAccount() string {
	if c.AgentServiceAccount != "" {
		return c.AgentServiceAccount
	}
	return DefaultAgentServiceAccount
}

// AgentArgs is what the agent in the pod runs.
type AgentArgs struct {
	Suite    string
	JobName  string
	JobFile  string // fio job file text, instead of Suite
	RuntimeS float64
	Repeat   int
	// FileSize is the test file size in the volume ("" lets the agent
	// choose from the free space).
	FileSize string
	// RampS overrides every test's ramp when RampSet.
	RampS   float64
	RampSet bool
	// UntilSteady ends each time-based test once its IOPS are steady,
	// after MinRuntimeS and at the latest after MaxRuntimeS (0: the
	// test's runtime).
	UntilSteady              bool
	MinRuntimeS, MaxRuntimeS float64
	// Diagnose runs diagnose's adaptive plan within Budget, each figure
	// to Precision, instead of a suite.
	Diagnose  bool
	Budget    time.Duration
	Precision float64
	// Tests is the number of results a target produces (tests × repeats),
	// for progress.
	Tests int
	// Planned is how long the tests should take, for the run timeout.
	Planned time.Duration
	// FioMemoryBytes is the most memory one test's fio may hold (FioMemory),
	// which sizes the pod's memory limit (ForSuite, ForPlan).
	FioMemoryBytes int64
}

// agentMemoryBase is what an agent needs besides fio's IO buffers: iolens
// with the results it holds, fio's own memory and its logs.
const agentMemoryBase = 256 << 20

// defaultFileBytes bounds the test file the agent lays out by default
// (1 GiB, or a tenth of the volume's free space when that is less).
const defaultFileBytes = 1 << 30

// FioMemory is the most memory one test of tests may hold: each job keeps
// a buffer of the block size for every IO in flight, and a buffered test
// (direct=0) may keep its whole file in the page cache, which the
// container's memory cgroup counts. fileBytes is the test file's size (0:
// the default).
func FioMemory(tests []result.TestSpec, fileBytes int64) int64 {
	if fileBytes <= 0 {
		fileBytes = defaultFileBytes
	}
	var most int64
	for _, t := range tests {
		n := int64(max(t.NumJobs, 1)) * int64(max(t.IODepth, 1)) * max(t.BlockSize, 4096)
		if !t.Direct {
			size := t.SizeBytes
			if size <= 0 {
				size = fileBytes
			}
			n += size
		}
		most = max(most, n)
	}
	return most
}

// memoryLimit is an agent container's memory limit: its base and a
// quarter more than fio may hold, in whole MiB, so that a node keeps its
// memory whatever a job file asks for, and a buffered test still gets
// the page cache it would have on the node.
func (a AgentArgs) memoryLimit() resource.Quantity {
	m := a.FioMemoryBytes
	n := agentMemoryBase + m + m/4
	return *resource.NewQuantity((n+1<<20-1)&^(1<<20-1), resource.BinarySI)
}

// fileBytes is --file-size (0: the default, or not a size).
func (a AgentArgs) fileBytes() int64 {
	n, _ := units.ParseSize(a.FileSize)
	return n
}

// Timeouts bound each phase of a target separately: a slow provisioner and
// a long suite need different limits, and one fixed timeout fits neither.
type Timeouts struct {
	// Bind: PVC created → Bound.
	Bind time.Duration
	// Schedule: Job created → pod assigned to a node.
	Schedule time.Duration
	// Start: pod scheduled → agent running (image pull, attach, mount).
	Start time.Duration
	// Run: agent running → agent done. Zero derives it from the suite.
	Run time.Duration
	// Cleanup: deleting everything and waiting until it is gone.
	Cleanup time.Duration
}

// DefaultTimeouts are generous for cloud disks, which can take minutes to
// provision and attach.
func DefaultTimeouts() Timeouts {
	return Timeouts{Bind: 5 * time.Minute, Schedule: 5 * time.Minute, Start: 5 * time.Minute, Cleanup: 3 * time.Minute}
}

func (c Config) runTimeout() time.Duration {
	if c.Timeouts.Run > 0 {
		return c.Timeouts.Run
	}
	// Twice the plan plus five minutes covers preconditioning the test
	// file on a slow disk.
	return 2*c.Agent.Planned + 5*time.Minute
}

func (c Config) labels(t Target, role string) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedByValue,
		LabelRunID:     c.RunID,
		LabelTarget:    t.ID,
		LabelGroup:     t.Group,
		LabelRole:      role,
	}
}

func (c Config) isBlock() bool { return c.VolumeMode == corev1.PersistentVolumeBlock }

// modeOf is a target's volume mode: its own (--target CLASS:SIZE:MODE),
// else the run's.
func (c Config) modeOf(t Target) corev1.PersistentVolumeMode {
	switch {
	case t.VolumeMode != "":
		return t.VolumeMode
	case c.VolumeMode != "":
		return c.VolumeMode
	}
	return corev1.PersistentVolumeFilesystem
}

func (c Config) blockFor(t Target) bool { return c.modeOf(t) == corev1.PersistentVolumeBlock }

// pvcFor builds the claim of a target.
func (c Config) pvcFor(t Target) *corev1.PersistentVolumeClaim {
	mode := c.modeOf(t)
	access := c.AccessMode
	if access == "" {
		access = corev1.ReadWriteOnce
	}
	sc := t.StorageClass
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "iolens-" + t.ID + "-", Namespace: c.Namespace, Labels: c.labels(t, "bench")},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &sc,
			AccessModes:      []corev1.PersistentVolumeAccessMode{access},
			VolumeMode:       &mode,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: t.Size}},
		},
	}
}

// AgentArgs is the command line the agent of a target runs with, the
// binary and a start gate left out.
func (c Config) AgentArgs(t Target) []string { return c.agentArgs(t, gateRef{}) }

// agentArgs is the agent's command line.
func (c Config) agentArgs(t Target, gate gateRef) []string {
	a := []string{"k8s", "agent", "--run-id", c.RunID, "--target", t.ID}
	switch {
	case c.HostPath != "":
		a = append(a, "--dir", hostDir)
	case c.blockFor(t):
		a = append(a, "--device", blockDevice)
	default:
		a = append(a, "--dir", dataDir)
	}
	switch {
	case c.Agent.Diagnose:
		a = append(a, "--diagnose", "--budget", c.Agent.Budget.String(), "--precision", strconv.FormatFloat(c.Agent.Precision, 'f', -1, 64))
	case c.Agent.JobFile != "":
		a = append(a, "--job-env", jobFileEnv, "--job-name", c.Agent.JobName)
	case c.Agent.Suite != "":
		a = append(a, "--suite", c.Agent.Suite)
	}
	if c.Agent.RuntimeS > 0 {
		a = append(a, "--runtime", strconv.FormatFloat(c.Agent.RuntimeS, 'f', -1, 64))
	}
	if c.Agent.RampSet {
		a = append(a, "--ramp", strconv.FormatFloat(c.Agent.RampS, 'f', -1, 64))
	}
	if c.Agent.UntilSteady {
		a = append(a, "--until-steady", "--min-runtime", strconv.FormatFloat(c.Agent.MinRuntimeS, 'f', -1, 64))
		if c.Agent.MaxRuntimeS > 0 {
			a = append(a, "--max-runtime", strconv.FormatFloat(c.Agent.MaxRuntimeS, 'f', -1, 64))
		}
	}
	if c.Agent.Repeat > 1 {
		a = append(a, "--repeat", strconv.Itoa(c.Agent.Repeat))
	}
	if c.Agent.FileSize != "" {
		a = append(a, "--file-size", c.Agent.FileSize)
	}
	if gate.ConfigMap != "" {
		// The wait ends by itself, so a group whose gate is never opened
		// (a CLI that died) still runs, only not together.
		a = append(a, "--gate-configmap", gate.ConfigMap, "--gate-key", gate.Key,
			"--gate-timeout", (c.Timeouts.Bind + c.Timeouts.Schedule + c.Timeouts.Start).String())
	}
	return a
}

// podSecurity returns the least privilege a target needs. A filesystem
// volume needs nothing beyond the restricted Pod Security profile. A raw
// block device node belongs to root, so Block mode runs as uid 0, still
// with no capabilities. A host path (node-check) is owned by whoever runs
// the service there, root by default.
func (c Config) podSecurity(t Target) (*corev1.PodSecurityContext, *corev1.SecurityContext) {
	no := false
	yes := true
	uid := int64(agentUID)
	psc := &corev1.PodSecurityContext{
		RunAsNonRoot:   &yes,
		RunAsUser:      &uid,
		RunAsGroup:     &uid,
		FSGroup:        &uid,
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if c.blockFor(t) || c.HostPath != "" {
		root := int64(0)
		if c.RunAsUser != nil {
			root = *c.RunAsUser
		}
		psc.RunAsUser, psc.RunAsGroup, psc.FSGroup = &root, &root, nil
		nonRoot := root != 0
		psc.RunAsNonRoot = &nonRoot
	}
	sc := &corev1.SecurityContext{
		AllowPrivilegeEscalation: &no,
		ReadOnlyRootFilesystem:   &yes,
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	return psc, sc
}

// controlPlaneTolerations let node-check reach control-plane nodes, where
// etcd lives.
func controlPlaneTolerations() []corev1.Toleration {
	return []corev1.Toleration{
		{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
}

// jobFor builds the Job of a target; claim is empty for a host path, and
// gate names where a gated target's agent reads its start time.
func (c Config) jobFor(t Target, claim string, gate gateRef) *batchv1.Job {
	role := "bench"
	if c.HostPath != "" {
		role = "node-check"
	}
	labels := c.labels(t, role)
	psc, sc := c.podSecurity(t)
	pull := c.PullPolicy
	if pull == "" {
		pull = corev1.PullIfNotPresent
	}
	container := corev1.Container{
		Name:            containerTag,
		Image:           c.Image,
		ImagePullPolicy: pull,
		Command:         []string{agentBinary},
		Args:            c.agentArgs(t, gate),
		Env:             []corev1.EnvVar{{Name: "TMPDIR", Value: "/tmp"}, {Name: "HOME", Value: "/tmp"}},
		SecurityContext: sc,
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("100m"),
			corev1.ResourceMemory: resource.MustParse("64Mi"),
		}, Limits: corev1.ResourceList{corev1.ResourceMemory: c.Agent.memoryLimit()}},
		VolumeMounts:             []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	if c.Agent.JobFile != "" {
		container.Env = append(container.Env, corev1.EnvVar{Name: jobFileEnv, Value: c.Agent.JobFile})
	}
	volumes := []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	var initContainers []corev1.Container
	switch {
	case c.HostPath != "":
		// The agent sees only a subdirectory of the host path, which the
		// node-dir sidecar creates before the agent starts (its startup
		// probe holds the agent back) and removes when the kubelet stops
		// it, after the agent has ended or when the pod is deleted. Only
		// that sidecar, which runs no job file, sees the directory itself.
		dir := corev1.HostPathDirectory
		name := NodeDirName(c.RunID, t.ID)
		volumes = append(volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: c.HostPath, Type: &dir}}})
		container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: "host", MountPath: hostDir, SubPath: name})
		always := corev1.ContainerRestartPolicyAlways
		nodeDirArgs := []string{"k8s", "node-dir", "--parent", hostParent, "--name", name, "--run-id", c.RunID}
		initContainers = []corev1.Container{{
			Name:            nodeDirTag,
			Image:           c.Image,
			ImagePullPolicy: pull,
			Command:         []string{agentBinary},
			Args:            nodeDirArgs,
			RestartPolicy:   &always,
			SecurityContext: sc,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("10m"),
				corev1.ResourceMemory: resource.MustParse("16Mi"),
			}},
			VolumeMounts: []corev1.VolumeMount{{Name: "host", MountPath: hostParent}},
			StartupProbe: &corev1.Probe{
				ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: append([]string{agentBinary}, append(nodeDirArgs, "--check")...)}},
				PeriodSeconds:    1,
				FailureThreshold: 60,
			},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		}}
	case claim != "":
		volumes = append(volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
		if c.blockFor(t) {
			container.VolumeDevices = []corev1.VolumeDevice{{Name: "data", DevicePath: blockDevice}}
		} else {
			container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: dataDir})
		}
	}
	tolerations := append([]corev1.Toleration(nil), c.Tolerations...)
	if c.HostPath != "" {
		tolerations = append(tolerations, controlPlaneTolerations()...)
	}
	// Only an agent that waits for a start gate gets a token: that of a
	// service account allowed to read ConfigMaps in the namespace.
	automount := gate.ConfigMap != ""
	sa := ""
	if automount {
		sa = c.agentServiceAccount()
	}
	zero := int32(0)
	deadline := int64((c.Timeouts.Schedule + c.Timeouts.Start + c.runTimeout()).Seconds())
	no := false
	spec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		SecurityContext:               psc,
		InitContainers:                initContainers,
		Containers:                    []corev1.Container{container},
		Volumes:                       volumes,
		NodeSelector:                  c.NodeSelector,
		Tolerations:                   tolerations,
		ServiceAccountName:            sa,
		AutomountServiceAccountToken:  &automount,
		EnableServiceLinks:            &no,
		TerminationGracePeriodSeconds: ptr(int64(5)),
		Affinity:                      affinityFor(t, c.RunID),
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "iolens-" + t.ID + "-", Namespace: c.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			// One try: a failed benchmark is reported, not retried with a
			// half-written test file.
			BackoffLimit: &zero,
			// A safety net should the CLI die: the pod stops by itself.
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       spec,
			},
		},
	}
}

// affinityFor pins a target to its node, or keeps the volumes of one group
// together on whatever node the scheduler picks for the first of them.
func affinityFor(t Target, runID string) *corev1.Affinity {
	if t.Node != "" {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				// matchFields on the name, as DaemonSets do: the hostname
				// label does not always equal the node name.
				MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{t.Node}}},
			}}},
		}}
	}
	if t.Slot > 0 {
		return &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelRunID: runID, LabelGroup: t.Group}},
				TopologyKey:   "kubernetes.io/hostname",
			}},
		}}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// selector is the label selector of a run's objects. With runID empty it
// selects the objects of every run: those carrying a run id as well as the
// ownership label, never an object that merely says it is managed by
// iolens.
func selector(runID string) string {
	s := LabelManagedBy + "=" + ManagedByValue
	if runID != "" {
		return s + "," + LabelRunID + "=" + runID
	}
	return s + "," + LabelRunID
}

func targetSelector(runID, id string) string {
	return fmt.Sprintf("%s,%s=%s", selector(runID), LabelTarget, id)
}

// PlannedFor estimates how long suite runs with these arguments, for the
// run timeout: each time-based test's runtime (or RuntimeS, or with
// UntilSteady at most MaxRuntimeS) and ramp (or RampS when RampSet).
func (a AgentArgs) PlannedFor(s result.Suite) time.Duration {
	var d time.Duration
	for _, t := range s.Tests {
		rt := t.RuntimeS
		if a.RuntimeS > 0 && rt > 0 {
			rt = a.RuntimeS
		}
		if a.UntilSteady && a.MaxRuntimeS > 0 && rt > 0 {
			rt = a.MaxRuntimeS
		}
		if rt == 0 {
			rt = 60 // size-bound tests such as etcd's
		}
		ramp := t.RampS
		if a.RampSet {
			ramp = a.RampS
		}
		d += time.Duration((rt + ramp + 1) * float64(time.Second))
	}
	// Preconditioning writes the test file once.
	return d*time.Duration(max(a.Repeat, 1)) + time.Minute
}

// CheckTimes refuses run times that are not seconds, 0 or more: RuntimeS
// and RampS, and with UntilSteady MinRuntimeS and MaxRuntimeS, with min
// <= max (a max of 0 is the test's runtime).
func (a AgentArgs) CheckTimes() error {
	bad := func(vs ...float64) bool {
		for _, v := range vs {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return true
			}
		}
		return false
	}
	if bad(a.RuntimeS, a.RampS) {
		return errors.New("--runtime and --ramp take seconds, 0 or more")
	}
	if a.UntilSteady && (bad(a.MinRuntimeS, a.MaxRuntimeS) || a.MaxRuntimeS > 0 && a.MaxRuntimeS < a.MinRuntimeS) {
		return errors.New("--min-runtime and --max-runtime take seconds, with min <= max")
	}
	return nil
}

// ForSuite is a running suite: by its name, or, when jobName is set, the
// job file jobText it was read from; with the number of results a target
// produces and their planned time.
func (a AgentArgs) ForSuite(s result.Suite, jobName, jobText string) AgentArgs {
	a.Tests = len(s.Tests) * max(a.Repeat, 1)
	a.Planned = a.PlannedFor(s)
	a.FioMemoryBytes = FioMemory(s.Tests, a.fileBytes())
	if jobName != "" {
		a.JobFile, a.JobName = jobText, jobName
	} else {
		a.Suite = s.Name
	}
	return a
}

// ForPlan is diagnose's adaptive plan of the tests of s (plan.Suite):
// the most any of them may hold sizes the pod's memory limit.
func (a AgentArgs) ForPlan(s result.Suite) AgentArgs {
	a.Diagnose = true
	a.FioMemoryBytes = FioMemory(s.Tests, a.fileBytes())
	return a
}

// SuiteName names what the agent runs: the suite, "diagnose" or
// "job:" and the job file's name.
func (a AgentArgs) SuiteName() string {
	switch {
	case a.Diagnose:
		return "diagnose"
	case a.Suite == "":
		return "job:" + a.JobName
	}
	return a.Suite
}
