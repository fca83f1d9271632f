package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/iolens/iolens/internal/etcdmetrics"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/units"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// etcdTLSFlags are the TLS flags of iolens etcd, and (prefixed) of
// watch --etcd: etcdctl's names.
func etcdTLSFlags(f *pflag.FlagSet, o *etcdmetrics.ClientOptions, prefix string) {
	f.StringVar(&o.CACert, prefix+"cacert", "", "CA certificate that signed etcd's serving certificate (kubeadm: /etc/kubernetes/pki/etcd/ca.crt)")
	f.StringVar(&o.Cert, prefix+"cert", "", "client certificate, when etcd wants one (kubeadm: /etc/kubernetes/pki/etcd/healthcheck-client.crt)")
	f.StringVar(&o.Key, prefix+"key", "", "the client certificate's key (kubeadm: /etc/kubernetes/pki/etcd/healthcheck-client.key)")
	markInput(f, prefix+"cacert", prefix+"cert", prefix+"key")
	f.BoolVar(&o.InsecureSkipVerify, prefix+"insecure-skip-verify", false, "accept any server certificate (never the default; not with --"+prefix+"cacert)")
}

func newEtcdCommand(streams IOStreams) *cobra.Command {
	r := etcdmetrics.Request{Timeout: units.Duration(etcdmetrics.DefaultTimeout)}
	var output *format
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
			r.Endpoints, r.Progress = args, func(msg string) { fmt.Fprintln(streams.ErrOut, "iolens etcd: "+msg) }
			rep, err := r.Run(cmd.Context())
			if err != nil {
				return err
			}
			if err := output.print(streams.Out, rep, func(w io.Writer) error { return etcdmetrics.WriteText(w, rep) }); err != nil {
				return err
			}
			return rep.Exit(r.FailOn)
		},
	}
	f := cmd.Flags()
	f.Var(&r.Interval, "interval", "scrape twice this far apart and judge only what happened in between (e.g. 30s); 0 judges since each member started")
	f.Var(&r.Timeout, "timeout", "bound on each scrape")
	etcdTLSFlags(f, &r.TLS, "")
	output = formatFlag(f, report.Listings, "a verdict per member and overall: ")
	f.StringVar(&r.FailOn, "fail-on", "fail", "exit 1 when the verdict is this severe: none, info (any), warn (warn, undecided, no data), fail")
	return cmd
}
