package etcdmetrics

import (
	"context"
	"fmt"
	"time"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/units"
)

// Open checks the TLS options as flags named with prefix ("" for
// 'iolens etcd', "etcd-" for watch) and builds the client. Mistakes
// are *hint.UsageError.
func (o ClientOptions) Open(prefix string) (*Client, error) {
	if o.InsecureSkipVerify && o.CACert != "" {
		return nil, hint.Usage(fmt.Errorf("--%sinsecure-skip-verify and --%scacert together", prefix, prefix),
			"with a CA, verification works: drop --"+prefix+"insecure-skip-verify")
	}
	if (o.Cert == "") != (o.Key == "") {
		return nil, hint.Usage(fmt.Errorf("--%scert and --%skey go together", prefix, prefix), "give the client certificate and its key")
	}
	return NewClient(o)
}

// Request is 'iolens etcd' as asked: the members, one scrape or two
// Interval apart, each bounded by Timeout, and the verdict that fails.
type Request struct {
	Endpoints []string
	Interval  units.Duration
	Timeout   units.Duration
	TLS       ClientOptions
	FailOn    string
	// Progress, if set, hears what is happening.
	Progress func(msg string)
}

// Run checks r, scrapes the members and judges them. Mistakes in r are
// *hint.UsageError.
func (r *Request) Run(ctx context.Context) (*Report, error) {
	if _, ok := analysis.SeverityRank(r.FailOn); !ok {
		return nil, hint.Usage(fmt.Errorf("--fail-on %q", r.FailOn), "valid values: none, info, warn, fail")
	}
	if r.Interval < 0 || (r.Interval > 0 && time.Duration(r.Interval) < time.Second) {
		return nil, hint.Usage(fmt.Errorf("--interval %s", time.Duration(r.Interval)), "use 0 (one scrape) or 1s or more; 30s gives etcd time to write")
	}
	if r.Timeout <= 0 {
		return nil, hint.Usage(fmt.Errorf("--timeout %s", time.Duration(r.Timeout)), "a positive duration, e.g. 10s")
	}
	for _, a := range r.Endpoints {
		if _, err := MetricsURL(a, true); err != nil {
			return nil, hint.Usage(fmt.Errorf("%q: %w", a, err), "give etcd's client URLs, e.g. https://10.0.0.1:2379")
		}
	}
	tls := r.TLS
	tls.Timeout = time.Duration(r.Timeout)
	c, err := tls.Open("")
	if err != nil {
		return nil, err
	}
	defer c.Close()
	progress := r.Progress
	if progress == nil {
		progress = func(string) {}
	}
	if tls.InsecureSkipVerify {
		progress("--insecure-skip-verify: the servers' certificates are not checked")
	}
	return Measure(ctx, c, Options{Endpoints: r.Endpoints, Interval: time.Duration(r.Interval), Progress: r.Progress})
}

// Exit is the outcome of a report: an error when a member could not be
// read, or when the verdict is as severe as failOn (analysis's
// severities).
func (rep *Report) Exit(failOn string) error {
	if bad := rep.Unreadable(); bad > 0 {
		return &hint.Error{Err: fmt.Errorf("%d of %d etcd members could not be read", bad, len(rep.Members)), Advice: "see each member's error and hint above"}
	}
	lim, _ := analysis.SeverityRank(failOn)
	if got, _ := analysis.SeverityRank(Severity(rep.Verdict)); lim > 0 && got >= lim {
		return fmt.Errorf("etcd verdict %s (--fail-on %s)", rep.Verdict, failOn)
	}
	return nil
}
