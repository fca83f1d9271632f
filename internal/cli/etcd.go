package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/etcdmetrics"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/units"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// etcdTLS are the TLS flags of iolens etcd, and (prefixed) of watch
// --etcd: etcdctl's names.
type etcdTLS struct {
	cacert, cert, key string
	insecure          bool
}

func (o *etcdTLS) addFlags(f *pflag.FlagSet, prefix string) {
	f.StringVar(&o.cacert, prefix+"cacert", "", "CA certificate that signed etcd's serving certificate (kubeadm: /etc/kubernetes/pki/etcd/ca.crt)")
	f.StringVar(&o.cert, prefix+"cert", "", "client certificate, when etcd wants one (kubeadm: /etc/kubernetes/pki/etcd/healthcheck-client.crt)")
	f.StringVar(&o.key, prefix+"key", "", "the client certificate's key (kubeadm: /etc/kubernetes/pki/etcd/healthcheck-client.key)")
	markInput(f, prefix+"cacert", prefix+"cert", prefix+"key")
	f.BoolVar(&o.insecure, prefix+"insecure-skip-verify", false, "accept any server certificate (never the default; not with --"+prefix+"cacert)")
}

func (o *etcdTLS) client(prefix string, timeout time.Duration) (*etcdmetrics.Client, error) {
	if o.insecure && o.cacert != "" {
		return nil, &UsageError{Err: fmt.Errorf("--%sinsecure-skip-verify and --%scacert together", prefix, prefix),
			Help: "with a CA, verification works: drop --" + prefix + "insecure-skip-verify"}
	}
	if (o.cert == "") != (o.key == "") {
		return nil, &UsageError{Err: fmt.Errorf("--%scert and --%skey go together", prefix, prefix), Help: "give the client certificate and its key"}
	}
	return etcdmetrics.NewClient(etcdmetrics.ClientOptions{CACert: o.cacert, Cert: o.cert, Key: o.key, InsecureSkipVerify: o.insecure, Timeout: timeout})
}

func newEtcdCommand(streams IOStreams) *cobra.Command {
	var tlsOpts etcdTLS
	var failOn string
	var output *format
	interval := units.Duration(0)
	timeout := units.Duration(etcdmetrics.DefaultTimeout)
	cmd := &cobra.Command{
		Use:   "etcd URL...",
		Short: "Judge etcd's own disk latency from its /metrics: WAL fsync and backend commit p99",
		Long: `Read each etcd member's /metrics (one URL per member, as etcdctl's
--endpoints) and judge its disk from etcd's own histograms:
etcd_disk_wal_fsync_duration_seconds (p99 below 10 ms, warn from 8.5 ms:
the verdict of the fio etcd test) and
etcd_disk_backend_commit_duration_seconds (p99 below 25 ms, as etcd's docs
advise).

One scrape judges everything since each member started. --interval scrapes
twice and judges only what happened in between; a member that restarted in
between is detected and said, and judged since its restart.

The p99 is estimated from etcd's buckets (1, 2, 4, 8, 16, 32 ms...) as
Prometheus's histogram_quantile does, so it matches a dashboard, and the
bucket it lies in is shown. The buckets are coarse: when the p99's bucket
straddles the limit (8-16 ms for the WAL's 10 ms), the verdict is
"undecided" rather than a guess.

Exit status: 1 when the verdict reaches --fail-on (fail by default; warn
also fails on warn and undecided) or a member could not be read, as
'iolens analyze --fail-on'.`,
		Example: `  iolens etcd http://127.0.0.1:2381                 # kubeadm's plain-HTTP metrics listener
  iolens etcd https://10.0.0.1:2379 https://10.0.0.2:2379 https://10.0.0.3:2379 \
      --cacert /etc/kubernetes/pki/etcd/ca.crt \
      --cert /etc/kubernetes/pki/etcd/healthcheck-client.crt \
      --key /etc/kubernetes/pki/etcd/healthcheck-client.key --interval 30s
  iolens etcd http://127.0.0.1:2381 -o json | jq .verdict`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &UsageError{Err: errors.New("no etcd endpoint"), Help: "give each member's client URL, e.g. iolens etcd https://10.0.0.1:2379"}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := analysis.SeverityRank(failOn); !ok {
				return &UsageError{Err: fmt.Errorf("--fail-on %q", failOn), Help: "valid values: none, info, warn, fail"}
			}
			if interval < 0 || (interval > 0 && time.Duration(interval) < time.Second) {
				return &UsageError{Err: fmt.Errorf("--interval %s", time.Duration(interval)), Help: "use 0 (one scrape) or 1s or more; 30s gives etcd time to write"}
			}
			if timeout <= 0 {
				return &UsageError{Err: fmt.Errorf("--timeout %s", time.Duration(timeout)), Help: "a positive duration, e.g. 10s"}
			}
			for _, a := range args {
				if _, err := etcdmetrics.MetricsURL(a, true); err != nil {
					return &UsageError{Err: fmt.Errorf("%q: %w", a, err), Help: "give etcd's client URLs, e.g. https://10.0.0.1:2379"}
				}
			}
			c, err := tlsOpts.client("", time.Duration(timeout))
			if err != nil {
				return err
			}
			defer c.Close()
			if tlsOpts.insecure {
				fmt.Fprintln(streams.ErrOut, "iolens etcd: --insecure-skip-verify: the servers' certificates are not checked")
			}
			rep, err := etcdmetrics.Measure(cmd.Context(), c, etcdmetrics.Options{Endpoints: args, Interval: time.Duration(interval),
				Progress: func(msg string) { fmt.Fprintln(streams.ErrOut, "iolens etcd: "+msg) }})
			if err != nil {
				return err
			}
			if err := output.print(streams.Out, rep, func(w io.Writer) error { return etcdmetrics.WriteText(w, rep) }); err != nil {
				return err
			}
			return etcdExit(rep, failOn)
		},
	}
	f := cmd.Flags()
	f.Var(&interval, "interval", "scrape twice this far apart and judge only what happened in between (e.g. 30s); 0 judges since each member started")
	f.Var(&timeout, "timeout", "bound on each scrape")
	tlsOpts.addFlags(f, "")
	output = formatFlag(f, report.Listings, "a verdict per member and overall: ")
	f.StringVar(&failOn, "fail-on", "fail", "exit 1 when the verdict is this severe: none, info (any), warn (warn, undecided, no data), fail")
	return cmd
}

// etcdExit is the command's outcome: an error (exit 1) when a member
// could not be read, or when the verdict is as severe as --fail-on, in
// analyze's terms.
func etcdExit(rep *etcdmetrics.Report, failOn string) error {
	if bad := rep.Unreadable(); bad > 0 {
		return &hint.Error{Err: fmt.Errorf("%d of %d etcd members could not be read", bad, len(rep.Members)), Advice: "see each member's error and hint above"}
	}
	lim, _ := analysis.SeverityRank(failOn)
	if got, _ := analysis.SeverityRank(etcdmetrics.Severity(rep.Verdict)); lim > 0 && got >= lim {
		return fmt.Errorf("etcd verdict %s (--fail-on %s)", rep.Verdict, failOn)
	}
	return nil
}
