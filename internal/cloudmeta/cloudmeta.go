package cloudmeta

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/limits"
)

// Provider names, spelled as the limits catalog spells them.
const (
	azure = "azure"
	aws   = "aws"
	gcp   = "gcp"
	ibm   = "ibm"
)

// providerNames lists every provider Detect knows, in probe order.
func providerNames() []string { return []string{azure, aws, gcp, ibm} }

// The real metadata addresses. Every provider serves its metadata on the
// link-local address; Google also on a name that only resolves on GCE.
const (
	defaultBaseURL = "http://169.254.169.254"
	defaultGCPURL  = "http://metadata.google.internal"
)

// Default timeouts: a VM's metadata service answers in milliseconds, and
// a machine with no cloud must not wait.
const (
	defaultDialTimeout  = 250 * time.Millisecond
	defaultProbeTimeout = 600 * time.Millisecond
	defaultTimeout      = 2 * time.Second
	defaultMaxBodyBytes = 1 << 20
)

// API versions asked for. Azure's throttle fields (Ultra Disk IOPS and
// bytes per second) need 2021-05-01 or later; IBM's identity token needs
// 2022-03-01 or later.
const (
	azureAPIVersion = "2021-12-13"
	ibmAPIVersion   = "2024-11-12"
)

// Options says where and how to look. The zero value probes the real
// metadata addresses with the default timeouts and reads /sys and /dev.
type Options struct {
	// BaseURL replaces http://169.254.169.254 for every provider (tests
	// point it at a local fake).
	BaseURL string
	// GCPURL replaces http://metadata.google.internal, which Google's
	// probe tries alongside BaseURL.
	GCPURL string
	// SysRoot and DevRoot replace /sys and /dev, where disks are matched
	// to kernel devices.
	SysRoot, DevRoot string
	// Providers restricts the probe to these providers (nil: all).
	Providers []string
	// Catalog maps VM sizes and disks to catalog names (nil: the
	// catalog built into iolens).
	Catalog *limits.Catalog
	// DialTimeout bounds each TCP connect; ProbeTimeout the whole race
	// to the first provider that answers; Timeout all of Detect.
	DialTimeout, ProbeTimeout, Timeout time.Duration
	// MaxBodyBytes caps each response body.
	MaxBodyBytes int64

	// dial replaces the dialer; tests set it so that any address but
	// the loopback fails the test.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// OptionsError is an Options value Detect cannot use.
type OptionsError struct {
	Field, Value, Why string
}

func (e *OptionsError) Error() string {
	return fmt.Sprintf("cloud metadata: %s %q: %s", e.Field, e.Value, e.Why)
}

// Hint says what to do about it.
func (e *OptionsError) Hint() string {
	switch e.Field {
	case "provider":
		return "providers: " + strings.Join(providerNames(), ", ")
	default:
		return "give an http:// or https:// URL with a host, e.g. http://127.0.0.1:8080"
	}
}

func (o Options) withDefaults() (Options, error) {
	if o.BaseURL == "" {
		o.BaseURL = defaultBaseURL
	}
	if o.GCPURL == "" {
		o.GCPURL = defaultGCPURL
	}
	for _, f := range []struct{ name, v string }{{"BaseURL", o.BaseURL}, {"GCPURL", o.GCPURL}} {
		u, err := url.Parse(f.v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return o, &OptionsError{Field: f.name, Value: f.v, Why: "not an http(s) base URL"}
		}
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	o.GCPURL = strings.TrimRight(o.GCPURL, "/")
	if o.SysRoot == "" {
		o.SysRoot = "/sys"
	}
	if o.DevRoot == "" {
		o.DevRoot = "/dev"
	}
	if o.Providers == nil {
		o.Providers = providerNames()
	}
	for _, p := range o.Providers {
		if !contains(providerNames(), p) {
			return o, &OptionsError{Field: "provider", Value: p, Why: "unknown provider"}
		}
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = defaultDialTimeout
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = defaultProbeTimeout
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.ProbeTimeout > o.Timeout {
		o.ProbeTimeout = o.Timeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = defaultMaxBodyBytes
	}
	if o.Catalog == nil {
		c, err := limits.Default()
		if err != nil {
			return o, err
		}
		o.Catalog = c
	}
	return o, nil
}

// Info is what the metadata service said, mapped onto the catalog.
type Info struct {
	// Provider is "azure", "aws", "gcp" or "ibm"; "" when no metadata
	// service answered (no cloud, or one iolens cannot read).
	Provider string `json:"provider"`
	// VMSize is the size as the provider names it (Standard_D8s_v3,
	// m5.large, n2-standard-8, bx2-16x64).
	VMSize string `json:"vm_size,omitempty"`
	// VM is the catalog's id for it ("azure:Standard_D8s_v3"); "" when
	// the catalog does not have it (Notes say so).
	VM     string `json:"vm,omitempty"`
	Region string `json:"region,omitempty"`
	Zone   string `json:"zone,omitempty"`
	// Disks are the VM's disks as the metadata lists them (for AWS, the
	// NVMe devices the kernel shows), each with its kernel device when
	// one was found.
	Disks []Disk `json:"disks,omitempty"`
	// Facts say where each VM-level figure came from.
	Facts []Fact `json:"facts,omitempty"`
	// Notes are what the metadata could not say, and why.
	Notes []string `json:"notes,omitempty"`
	// Probes are every provider's outcome, in probe order.
	Probes    []Probe `json:"probes"`
	ElapsedNS int64   `json:"elapsed_ns"`
}

// Detected reports whether a provider answered.
func (i *Info) Detected() bool { return i.Provider != "" }

// Disk is one disk of the VM.
type Disk struct {
	// Role is "os" or "data" (Azure), "boot" or "data" (GCP, IBM),
	// "ebs" or "instance-store" (AWS), "scratch" (GCP local SSD).
	Role string `json:"role"`
	// Name is the provider's name for the disk (Azure disk name, GCP
	// device name, IBM volume name).
	Name string `json:"name,omitempty"`
	// ID is the provider's id (Azure managed disk resource id, EBS
	// volume id, IBM volume id).
	ID string `json:"id,omitempty"`
	// LUN is the Azure SCSI LUN of a data disk.
	LUN *int `json:"lun,omitempty"`
	// Type is the storage type as the metadata spells it (Premium_LRS,
	// PERSISTENT, ...); "" when the metadata does not say.
	Type string `json:"type,omitempty"`
	// SizeBytes is 0 when unknown; Facts say where it came from.
	SizeBytes int64 `json:"size_bytes,omitempty"`
	// Caching is the Azure host cache mode: none, readonly, readwrite.
	Caching string `json:"caching,omitempty"`
	// ProvisionedIOPS and ProvisionedBWBytes (bytes/s) are 0 when the
	// metadata does not report them.
	ProvisionedIOPS    float64 `json:"provisioned_iops,omitempty"`
	ProvisionedBWBytes float64 `json:"provisioned_bw_bytes,omitempty"`
	// Spec is the catalog disk spec ("azure:P20",
	// "azure:ultra:1024GiB:iops=65280,throughput=979.202"), set only
	// when the catalog accepts it.
	Spec string `json:"spec,omitempty"`
	// Device is the kernel name ("sdc", "nvme1n1"); "" when no device
	// could be tied to the disk. DeviceHow says how it was tied.
	Device    string   `json:"device,omitempty"`
	DeviceHow string   `json:"device_how,omitempty"`
	Facts     []Fact   `json:"facts,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

// Fact is one figure and where it came from ("Azure IMDS compute.vmSize").
type Fact struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Probe is one provider's outcome.
type Probe struct {
	Provider string `json:"provider"`
	URL      string `json:"url"`
	// Outcome: "answered", or why not ("connection refused", "no
	// answer within 600ms", "HTTP 404", "not needed: azure answered").
	Outcome   string `json:"outcome"`
	Answered  bool   `json:"answered"`
	ElapsedNS int64  `json:"elapsed_ns"`
}

// prober races to prove its provider is here; identify returns the
// function that fills Info once it has won.
type prober struct {
	provider, url string
	identify      func(ctx context.Context) (collect func(ctx context.Context, info *Info), err error)
}

// detect asks the metadata services which cloud VM this is. It probes
// the providers at once, keeps the first that proves itself, cancels the
// others and then reads the winner's VM size, location and disks.
//
// When no provider answers, detect returns an Info with Provider "" and
// each probe's outcome, and a nil error. The error is non-nil only when
// opts cannot be used (*OptionsError) or ctx was cancelled by the
// caller. detect never takes longer than opts.Timeout (2 s by default);
// with no cloud it returns after about one dial timeout (250 ms).
func detect(ctx context.Context, opts Options) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	o, err := opts.withDefaults()
	if err != nil {
		return Info{}, err
	}
	start := time.Now()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	c := newClient(&o)
	defer c.close()

	probers := o.probers(c)
	pctx, pcancel := context.WithTimeout(ctx, o.ProbeTimeout)
	defer pcancel()
	type outcome struct {
		i       int
		collect func(context.Context, *Info)
		err     error
		elapsed time.Duration
	}
	ch := make(chan outcome, len(probers))
	for i, p := range probers {
		go func() {
			t0 := time.Now()
			col, err := p.identify(pctx)
			ch <- outcome{i, col, err, time.Since(t0)}
		}()
	}
	info := Info{Probes: make([]Probe, len(probers))}
	winner := -1
	var collect func(context.Context, *Info)
	for range probers {
		r := <-ch
		p := probers[r.i]
		pr := Probe{Provider: p.provider, URL: p.url, ElapsedNS: r.elapsed.Nanoseconds()}
		switch {
		case r.err == nil && winner < 0:
			winner, collect = r.i, r.collect
			pr.Outcome, pr.Answered = "answered", true
			pcancel()
		case r.err == nil:
			pr.Outcome = "answered after " + probers[winner].provider
		case winner >= 0 && errors.Is(r.err, context.Canceled):
			pr.Outcome = "not needed: " + probers[winner].provider + " answered"
		default:
			pr.Outcome = describe(r.err, o.DialTimeout, o.ProbeTimeout)
		}
		info.Probes[r.i] = pr
	}
	if err := parent.Err(); err != nil {
		return Info{Probes: info.Probes}, err
	}
	if winner >= 0 {
		info.Provider = probers[winner].provider
		collect(ctx, &info)
		if err := parent.Err(); err != nil {
			return Info{Probes: info.Probes}, err
		}
		if ctx.Err() != nil {
			info.Notes = append(info.Notes, fmt.Sprintf("the metadata service did not finish answering within %v; what it had said is kept", o.Timeout))
		}
	}
	info.ElapsedNS = time.Since(start).Nanoseconds()
	return info, nil
}

func (o *Options) probers(c *client) []prober {
	var out []prober
	for _, p := range o.Providers {
		switch p {
		case azure:
			out = append(out, azureProber(c, o))
		case aws:
			out = append(out, awsProber(c, o))
		case gcp:
			out = append(out, gcpProber(c, o, o.BaseURL))
			if o.GCPURL != o.BaseURL {
				out = append(out, gcpProber(c, o, o.GCPURL))
			}
		case ibm:
			out = append(out, ibmProber(c, o))
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
