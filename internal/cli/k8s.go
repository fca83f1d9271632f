package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/iolens/iolens/internal/etcdmetrics"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/image"
	"github.com/iolens/iolens/internal/metrics"
	"github.com/iolens/iolens/internal/pipeline"
	"github.com/iolens/iolens/internal/progress"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"

	"github.com/iolens/iolens/internal/agent"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/runner"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
)

// DefaultImage is the agent image matching this build.
func DefaultImage() string { return image.Reference(Version) }

// kubeFlags holds the cluster connection flags of one command tree.
type kubeFlags struct {
	cf *genericclioptions.ConfigFlags
}

func (k *kubeFlags) client() (*k8s.Client, string, string, error) {
	c, ns, ctxName, err := k8s.ConnectFlags(k.cf)
	return c, ns, ctxName, requestErr("", err)
}

func newK8sCommand(streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s",
		Short: "Benchmark Kubernetes volumes: storage classes × sizes × nodes, in parallel, leaving nothing behind",
		Long: `Benchmark PersistentVolumeClaims of any storage class on any nodes. Each target
is a PVC plus a Job whose pod runs the iolens agent (iolens + fio) on the volume;
results come back through the pod log and are merged into the local result
stream. Everything iolens creates carries app.kubernetes.io/managed-by=iolens
and a run id, and is deleted on success, failure, timeout and Ctrl-C.`,
	}
	kf := &kubeFlags{cf: genericclioptions.NewConfigFlags(true)}
	kf.cf.AddFlags(cmd.PersistentFlags())
	markInput(cmd.PersistentFlags(), "kubeconfig", "certificate-authority", "client-certificate", "client-key")
	cmd.AddCommand(newK8sClassesCommand(streams, kf), newK8sRunCommand(streams, kf), newK8sDiagnoseCommand(streams, kf),
		newK8sNodeCheckCommand(streams, kf), newK8sCleanupCommand(streams, kf), newK8sAgentCommand(streams), newK8sNodeDirCommand(), newK8sWatchCommand(streams, kf))
	return cmd
}

// NewKubectlPluginCommand is the root of the kubectl-iolens plugin:
// 'kubectl iolens run' is 'iolens k8s run'.
func NewKubectlPluginCommand(streams IOStreams) *cobra.Command {
	written := filterStreams(&streams)
	cmd := newK8sCommand(streams)
	cmd.Use = "kubectl-iolens"
	asRoot(cmd, streams, written)
	return cmd
}

func k8sUsage(cmd string, format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...), Help: "see 'iolens k8s " + cmd + " --help'"}
}

// ---- classes ----

func newK8sClassesCommand(streams IOStreams, kf *kubeFlags) *cobra.Command {
	var sizeFlag string
	var output *format
	cmd := &cobra.Command{
		Use:   "classes",
		Short: "List storage classes with the parameters that decide performance",
		Long: `List the storage classes with the parameters that decide performance, and
the cloud catalog disk each provisions at --pvc-size ('iolens limits' shows its
ceilings; cloud disks get faster as they get larger).`,
		Example: `  iolens k8s classes
  iolens k8s classes --pvc-size 1Ti
  iolens k8s classes -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sizeDeprecated(cmd, streams, "use --pvc-size")
			size, err := resource.ParseQuantity(sizeFlag)
			if err != nil || size.Sign() <= 0 {
				return k8sUsage("classes", "--pvc-size %q: want a quantity such as 100Gi", sizeFlag)
			}
			c, _, _, err := kf.client()
			if err != nil {
				return err
			}
			cls, err := k8s.Classes(cmd.Context(), c.CS, k8s.CatalogDiskAt(size))
			if err != nil {
				return err
			}
			return output.print(streams.Out, cls, func(w io.Writer) error {
				if len(cls) == 0 {
					fmt.Fprintln(streams.ErrOut, "no storage classes: the cluster has no dynamic provisioning")
				}
				return k8s.WriteClasses(w, cls, size.String())
			})
		},
	}
	output = formatFlag(cmd.Flags(), report.Tables, "format: ")
	cmd.Flags().StringVar(&sizeFlag, "pvc-size", "100Gi", "volume size for the catalog disk column (the SKU depends on it)")
	// The old name, kept for scripts: it sized the volume here and the
	// test file in 'iolens run'.
	cmd.Flags().StringVar(&sizeFlag, "size", "100Gi", "")
	_ = cmd.Flags().MarkHidden("size")
	return cmd
}

// sizeDeprecated notes the old name of --pvc-size on stderr (cobra's own
// note would go to stdout, into a result stream).
func sizeDeprecated(cmd *cobra.Command, streams IOStreams, what string) {
	if cmd.Flags().Changed("size") {
		fmt.Fprintf(streams.ErrOut, "Flag --size has been deprecated, %s\n", what)
	}
}

// ---- run ----

type k8sRunOptions struct {
	req       k8s.Request
	agent     k8s.AgentOptions
	pod       k8s.PodOptions
	suite     string
	jobFile   string
	output    string
	files     outputFiles
	quiet     bool
	runAsUser int64
	// render, if set, writes the report instead of the -o renderer.
	render report.Renderer
	save   runSaveOptions
	expect expectOptions
	push   string
	// diag adds ceiling findings to a result (from --expect), set when
	// the command starts.
	diag func(*result.Result)
}

func (o *k8sRunOptions) addCommonFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.jobFile, "job", "", "fio job file to run instead of a suite")
	markInput(f, "job")
	f.Var(&o.agent.Runtime, "runtime", "time per time-based test, e.g. 30s or 30 (default: the suite's own)")
	f.Var(&o.agent.Ramp, "ramp", "warm-up before measuring, e.g. 2s (default: each suite's own)")
	f.BoolVar(&o.agent.UntilSteady, "until-steady", false, "end each time-based test once its 1 s IOPS are steady (SNIA PTS criteria over 20 s)")
	o.agent.MinRuntime = units.Duration(20 * time.Second)
	f.Var(&o.agent.MinRuntime, "min-runtime", "with --until-steady: the least each test runs")
	f.Var(&o.agent.MaxRuntime, "max-runtime", "with --until-steady: the most each test runs (default: the test's runtime)")
	f.IntVar(&o.agent.Repeat, "repeat", 1, "run every test N times")
	f.StringVar(&o.agent.FileSize, "file-size", "", "test file size in the volume (default: 1 GiB or a tenth of the free space)")
	f.Var((*units.Duration)(&o.pod.Timeouts.Run), "run-timeout", "how long the tests may run (default: twice the suite's planned time plus 5m)")
	outputFlag(f, &o.output, report.Results, "report format: ")
	o.addPodFlags(f)
	o.expect.addFlags(cmd)
	f.StringVar(&o.push, "push", "", "push the results to this Prometheus Pushgateway (http://host:9091), one group per storage class")
}

// addPodFlags adds the flags of every command that runs agent pods on
// volumes: the pods, their timeouts, and where results go.
func (o *k8sRunOptions) addPodFlags(f *pflag.FlagSet) {
	f.StringSliceVar(&o.pod.Tolerate, "tolerate", nil, "tolerate a taint: KEY[=VALUE][:EFFECT] (repeatable)")
	f.StringVar(&o.pod.Image, "image", DefaultImage(), "agent image (iolens + fio), pinned to this version")
	f.StringVar(&o.pod.PullPolicy, "pull-policy", "IfNotPresent", "image pull policy: IfNotPresent, Always or Never")
	f.BoolVar(&o.pod.Keep, "keep", false, "keep the PVCs, Jobs and pods for debugging (remove later with 'iolens k8s cleanup')")
	o.pod.Timeouts = k8s.DefaultTimeouts() // Run stays 0: from the suite
	t := &o.pod.Timeouts
	f.Var((*units.Duration)(&t.Bind), "bind-timeout", "how long a PVC may take to bind")
	f.Var((*units.Duration)(&t.Schedule), "schedule-timeout", "how long a pod may wait for a node")
	f.Var((*units.Duration)(&t.Start), "start-timeout", "how long a scheduled pod may take to start (image pull, attach, mount)")
	f.Var((*units.Duration)(&t.Cleanup), "cleanup-timeout", "how long deleting everything may take")
	o.files.addFlags(f, "also append every result to this NDJSON file as it arrives")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	f.Var(checkedString{&o.pod.RunID, func(s string) error { return k8s.CheckRunID("--run-id", s) }}, "run-id", "run id (default: generated)")
	f.StringVar(&o.pod.ServiceAccount, "agent-service-account", k8s.DefaultAgentServiceAccount, "service account of agents that wait for a start gate (may only read ConfigMaps; deploy/rbac.yaml)")
	o.save.addFlags(f)
}

func newK8sRunCommand(streams IOStreams, kf *kubeFlags) *cobra.Command {
	o := &k8sRunOptions{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Benchmark PVCs: storage classes × sizes × nodes × volumes per node",
		Example: `  iolens k8s run --storage-class managed-premium --pvc-size 256Gi --suite quick
  iolens k8s run --storage-class premium,standard --pvc-size 300Gi,1Ti --parallel
  iolens k8s run --target premium:1Ti --target standard:300Gi --target raw:1Ti:Block -n iolens-privileged
  iolens k8s run --storage-class fast --all-nodes --parallel --until-steady --max-runtime 300
  iolens k8s run --storage-class fast --nodes n1,n2 --volumes-per-node 4 --parallel
  iolens k8s run --storage-class fast --all-nodes --tolerate dedicated=storage:NoSchedule
  iolens k8s run --storage-class raw --volume-mode Block -n iolens-privileged`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.diag, err = o.expect.diagnoser(cmd); err != nil {
				return err
			}
			if cmd.Flags().Changed("size") && cmd.Flags().Changed("pvc-size") {
				return k8sUsage("run", "--size is the old name of --pvc-size: give only --pvc-size")
			}
			sizeDeprecated(cmd, streams, "use --pvc-size for the volume (--file-size for the test file)")
			o.req.SizesGiven = cmd.Flags().Changed("size") || cmd.Flags().Changed("pvc-size")
			_, err = o.run(cmd, streams, kf, &o.req)
			return err
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.req.Classes, "storage-class", nil, "storage classes to test, comma-separated (default: the default class)")
	f.StringSliceVar(&o.req.Sizes, "pvc-size", []string{"10Gi"}, "PVC sizes, comma-separated (cloud disks are faster when larger); the test file's is --file-size")
	// The old name, kept for scripts: 'iolens run --size' sizes the test
	// file, so the volume's has a name of its own.
	f.StringSliceVar(&o.req.Sizes, "size", []string{"10Gi"}, "")
	_ = f.MarkHidden("size")
	f.StringArrayVar(&o.req.Volumes, "target", nil, "one more volume to test, CLASS:SIZE[:MODE] (repeatable), beside --storage-class × --pvc-size: for matrices that are not a product")
	f.StringVar(&o.suite, "suite", "quick", "built-in suite ('iolens suites' lists them)")
	f.StringVar(&o.req.VolumeMode, "volume-mode", "Filesystem", "Filesystem or Block (Block runs as root; see docs/k8s.md)")
	f.StringVar(&o.req.AccessMode, "access-mode", "ReadWriteOnce", "ReadWriteOnce, ReadWriteOncePod, ReadWriteMany or ReadOnlyMany")
	f.StringSliceVar(&o.req.Nodes, "nodes", nil, "run on these nodes, comma-separated")
	f.BoolVar(&o.req.AllNodes, "all-nodes", false, "run on every ready, schedulable node (matching --node-selector)")
	f.Var(checkedString{&o.req.NodeSelector, k8s.CheckNodeSelector}, "node-selector", "only nodes with these labels: k=v[,k=v]")
	f.IntVar(&o.req.VolumesPerNode, "volumes-per-node", 1, "volumes tested at the same time on one node, their tests starting together, to see how it splits bandwidth")
	f.BoolVar(&o.req.Parallel, "parallel", false, "run every target at once, their tests starting together (default: one class/size/node group after another)")
	o.addCommonFlags(cmd)
	return cmd
}

// baseConfig checks the flags every target shares, the job file included,
// before anything talks to the cluster.
func (o *k8sRunOptions) baseConfig(ctx context.Context, streams IOStreams, suiteSet bool) (k8s.Config, error) {
	a, err := o.agent.Args()
	if err != nil {
		return k8s.Config{}, requestErr("see 'iolens k8s run --help'", err)
	}
	cfg, err := o.podConfig("run")
	if err != nil {
		return cfg, err
	}
	suite, job, err := suiteFor(ctx, streams, o.suite, o.jobFile, suiteSet)
	jobName := o.jobFile
	if jobName == "-" || jobName == "/dev/stdin" {
		jobName = "stdin"
	}
	cfg.Agent = a.ForSuite(suite, jobName, job)
	return cfg, err
}

// podConfig checks the flags that shape every pod (tolerations, image,
// pull policy) and gives the run its id.
func (o *k8sRunOptions) podConfig(cmd string) (k8s.Config, error) {
	// Everything the run writes and every id it sends is checked before
	// the first call to the API.
	if err := checkOutputs(reads{inputs: []string{o.jobFile}, db: o.save.db}, [2]string{"--out", o.files.out}, [2]string{"--html", o.files.html}); err != nil {
		return k8s.Config{}, err
	}
	cfg, err := o.pod.Config(DefaultImage(), runner.NewRunID)
	return cfg, requestErr("see 'iolens k8s "+cmd+" --help'", err)
}

// run checks the flags, connects, resolves q's targets and runs them:
// what 'k8s run' and 'k8s node-check' share once --expect is read. It
// returns the results.
func (o *k8sRunOptions) run(cmd *cobra.Command, streams IOStreams, kf *kubeFlags, q targetRequest) ([]result.Result, error) {
	o.agent.RampSet = cmd.Flags().Changed("ramp")
	if err := o.recipe().checkFormat(); err != nil {
		return nil, err
	}
	cfg, err := o.baseConfig(cmd.Context(), streams, cmd.Flags().Changed("suite"))
	if err != nil {
		return nil, err
	}
	return o.runRequest(cmd.Context(), streams, kf, cfg, cmd.Name(), q)
}

// targetRequest is what a run asks the cluster for: a k8s.Request, or
// node-check's k8s.NodeRequest.
type targetRequest interface {
	Check(cfg *k8s.Config) error
	Targets(ctx context.Context, cs kubernetes.Interface, cfg *k8s.Config) ([]k8s.Target, error)
}

// runRequest checks q, connects, resolves q's targets and runs them,
// draws progress, writes results and turns the outcome into the exit
// status: what 'k8s run', 'k8s node-check' and 'k8s diagnose' share once
// cfg is set. It returns the results.
func (o *k8sRunOptions) runRequest(ctx context.Context, streams IOStreams, kf *kubeFlags, cfg k8s.Config, cmd string,
	q targetRequest) ([]result.Result, error) {
	if err := q.Check(&cfg); err != nil {
		return nil, requestErr("see 'iolens k8s "+cmd+" --help'", err)
	}
	c, ns, ctxName, err := kf.client()
	if err != nil {
		return nil, err
	}
	cfg.Namespace, cfg.Context = ns, ctxName
	targets, err := q.Targets(ctx, c.CS, &cfg)
	if err != nil {
		return nil, requestErr("see 'iolens k8s "+cmd+" --help'", err)
	}

	if o.push != "" {
		if err := metrics.CheckPushURL(o.push); err != nil {
			return nil, &UsageError{Err: err, Help: "e.g. --push http://pushgateway.monitoring:9091"}
		}
	}
	prog := &progress.Log{W: streams.ErrOut, Quiet: o.quiet, Start: time.Now()}
	var sum k8s.Summary
	out, runErr, err := o.recipe().run(ctx, streams, prog, cfg.RunID, cfg.Agent.SuiteName(), map[string]string{"k8s.run-id": cfg.RunID}, func() {
		prog.Line("%s", cfg.Header(len(targets)))
	}, func(snk *pipeline.Sink, _ *pipeline.Run) (diagnosis.Outcome, error) {
		return pipeline.Feed(ctx, snk, func(emit func(result.Result) error) error {
			r := &k8s.Runner{Client: c, Config: cfg, Emit: emit, Progress: func(e k8s.Event) { prog.Line("%s", e) }}
			var err error
			sum, err = r.Run(ctx, targets)
			return err
		})
	})
	results := out.Results
	for _, l := range sum.Lines() {
		prog.Line("%s", l)
	}
	n, pushErr := metrics.PushByStorageClass(ctx, o.push, buildOf(), results)
	if n > 0 && pushErr == nil {
		fmt.Fprintf(streams.ErrOut, "pushed %d results to %s (job %s, %d storage classes)\n", len(results), o.push, metrics.PushJob, n)
	}
	return results, cmp.Or(err, sum.Status(ctx, runErr, len(results), ErrPartial), pushErr)
}

// requestErr makes a request's mistake (a *k8s.RequestError) a usage
// error, with its own hint or help.
func requestErr(help string, err error) error {
	var re *k8s.RequestError
	if !errors.As(err, &re) {
		return err
	}
	if h := hint.Of(err); h != "" {
		help = h
	}
	return &UsageError{Err: err, Help: help}
}

// recipe is a Kubernetes run's share of the flags every run has. The
// agents analysed each result in their pods; here each is compared with
// what its disk should deliver: --expect, or the catalog disk the class
// provisions.
func (o *k8sRunOptions) recipe() *recipe {
	return &recipe{output: o.output, formats: report.Results, files: &o.files, save: &o.save,
		reads: reads{inputs: []string{o.jobFile}, db: o.save.db}, untilSteady: o.agent.UntilSteady, expect: o.diag,
		defaultExpect: func() func(*result.Result) { return limits.CatalogCeiling }, render: o.render}
}

// ---- node-check ----

func newK8sNodeCheckCommand(streams IOStreams, kf *kubeFlags) *cobra.Command {
	o := &k8sRunOptions{}
	var path string
	cmd := &cobra.Command{
		Use:   "node-check NODE",
		Short: "Test a directory on a node itself, such as etcd's disk, and print the etcd verdict",
		Long: `Run a suite (etcd by default) in a host directory of NODE, as 'oc debug node'
plus fio would. The pod is pinned to the node and tolerates control-plane
taints. The agent sees only a subdirectory that the pod creates in --path and
removes when it ends; the root and system directories are refused. It needs a
hostPath volume and root (see docs/k8s.md), so the namespace must allow
privileged pods: creating Jobs there is as strong as creating privileged pods.`,
		Example: `  iolens k8s node-check master-0 --path /var/lib/etcd -n iolens-privileged
  iolens k8s node-check worker-3 --path /var/lib/containers --suite quick`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.diag, err = o.expect.diagnoser(cmd); err != nil {
				return err
			}
			q := k8s.NodeRequest{Node: args[0], Path: path}
			if cmd.Flags().Changed("run-as-user") {
				q.RunAsUser = &o.runAsUser
			}
			results, err := o.run(cmd, streams, kf, q)
			if v := etcdmetrics.FioVerdict(results); v != "" {
				fmt.Fprintln(streams.ErrOut, v)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&path, "path", "/var/lib/etcd", "directory on the node to test (a subdirectory is created and removed)")
	cmd.Flags().StringVar(&o.suite, "suite", "etcd", "built-in suite")
	cmd.Flags().Int64Var(&o.runAsUser, "run-as-user", 0, "uid to run as, when the directory belongs to another user than root")
	o.addCommonFlags(cmd)
	// A host directory binds no PVC, and its one result is no class's.
	_ = cmd.Flags().MarkHidden("bind-timeout")
	_ = cmd.Flags().MarkHidden("push")
	return cmd
}

// ---- cleanup ----

func newK8sCleanupCommand(streams IOStreams, kf *kubeFlags) *cobra.Command {
	q := k8s.CleanupRequest{Timeout: 5 * time.Minute}
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Delete what iolens runs left behind (after a crash or --keep)",
		Long: `Delete the Jobs, pods, PVCs and ConfigMaps of one iolens run (--run ID), or of
every run (--all). Only objects that carry both app.kubernetes.io/managed-by=iolens
and an iolens.dev/run-id label are touched. Across all namespaces (-A), --all
lists what it would delete and asks for --yes.`,
		Example: `  iolens k8s cleanup --run 20260101-120000-abc123
  iolens k8s cleanup --all -n iolens
  iolens k8s cleanup --all -A --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := q.Check(); err != nil {
				return requestErr("see 'iolens k8s cleanup --help'", err)
			}
			c, ns, _, err := kf.client()
			if err != nil {
				return err
			}
			err = q.Run(cmd.Context(), c, ns, streams.Out, func(s string) { fmt.Fprintln(streams.ErrOut, s) })
			return requestErr("see 'iolens k8s cleanup --help'", err)
		},
	}
	cmd.Flags().StringVar(&q.RunID, "run", "", "delete the objects of this run id")
	cmd.Flags().BoolVar(&q.All, "all", false, "delete the objects of every iolens run")
	cmd.Flags().BoolVarP(&q.AllNamespaces, "all-namespaces", "A", false, "in every namespace")
	cmd.Flags().BoolVar(&q.Yes, "yes", false, "with --all -A: delete without listing first")
	cmd.Flags().Var((*units.Duration)(&q.Timeout), "timeout", "how long to wait for everything to go")
	return cmd
}

// ---- agent (in the pod) ----

func newK8sAgentCommand(streams IOStreams) *cobra.Command {
	a := agent.New(Version)
	var target string
	cmd := &cobra.Command{
		Use:    "agent",
		Short:  "Run inside the benchmark pod: run the tests and write framed results to stdout",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.RampSet = cmd.Flags().Changed("ramp")
			// The frames are data: past the terminal filter.
			return a.Run(cmd.Context(), rawOf(streams.Out))
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.Dir, "dir", "", "directory to test (the mounted volume)")
	f.StringVar(&a.Device, "device", "", "block device to test (Block mode)")
	f.StringVar(&a.Suite, "suite", "quick", "built-in suite")
	f.StringVar(&a.JobEnv, "job-env", "", "environment variable holding a fio job file")
	f.StringVar(&a.JobName, "job-name", "job", "name of that job file")
	f.Var((*units.Seconds)(&a.RuntimeS), "runtime", "time per time-based test")
	f.Var((*units.Seconds)(&a.RampS), "ramp", "warm-up before measuring")
	f.IntVar(&a.Repeat, "repeat", 1, "repetitions")
	f.BoolVar(&a.UntilSteady, "until-steady", false, "end each time-based test once its IOPS are steady")
	f.Var((*units.Seconds)(&a.MinRuntimeS), "min-runtime", "with --until-steady: the least each test runs")
	f.Var((*units.Seconds)(&a.MaxRuntimeS), "max-runtime", "with --until-steady: the most each test runs")
	f.StringVar(&a.FileSize, "file-size", "", "test file size")
	f.StringVar(&a.RunID, "run-id", "", "run id")
	f.StringVar(&target, "target", "", "target id (in the pod's arguments for people reading them; unused)")
	f.StringVar(&a.GateConfigMap, "gate-configmap", "", "ConfigMap of the run that receives the start time; wait for it before the first test")
	f.StringVar(&a.GateKey, "gate-key", "", "key of the start time in that ConfigMap")
	f.Var((*units.Duration)(&a.GateTimeout), "gate-timeout", "start alone when the start time has not come after this long")
	f.BoolVar(&a.Diagnose, "diagnose", false, "run diagnose's adaptive plan instead of a suite")
	f.Var((*units.Duration)(&a.Budget), "budget", "with --diagnose: time for the whole plan")
	f.Var((*units.Precision)(&a.Precision), "precision", "with --diagnose: relative precision of each figure (e.g. 2%, 0.05)")
	return cmd
}

// ---- node-dir (the node-check sidecar) ----

func newK8sNodeDirCommand() *cobra.Command {
	var parent, name, runID string
	var check bool
	cmd := &cobra.Command{
		Use:    "node-dir",
		Short:  "Run inside the node-check pod: create the pod's own directory on the node, and remove it when stopped",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if check {
				return k8s.CheckNodeDir(parent, name)
			}
			// The kubelet stops the sidecar with SIGTERM once the agent
			// has ended; main turns it into the end of the context.
			return k8s.ServeNodeDir(cmd.Context(), parent, name, runID)
		},
	}
	f := cmd.Flags()
	f.StringVar(&parent, "parent", "", "the host directory, as mounted in the pod")
	f.StringVar(&name, "name", "", "the subdirectory to create and remove")
	f.StringVar(&runID, "run-id", "", "run id, written into the directory's marker")
	f.BoolVar(&check, "check", false, "succeed only once the directory is ready (the startup probe)")
	return cmd
}
