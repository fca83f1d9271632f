package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/userfile"
	"github.com/spf13/cobra"
)

// expectFlags are the flags that describe what a disk should deliver:
// --expect DISK on run/report/analyze, DISK on iolens limits.
type expectFlags struct {
	vm       string
	attached []string
	cache    string
	// volumes is --volumes-per-node: this many volumes of the disk's
	// kind run at once on the VM (the disk included).
	volumes units.Count
}

func (e *expectFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&e.vm, "vm", "", "VM size the disk is attached to (e.g. Standard_DS2_v2, aws:m5.large, ibm:bx2-4x16)")
	f.StringSliceVar(&e.attached, "attached", nil, "other data volumes on the same VM, as disk specs (IBM splits volume bandwidth across them)")
	f.StringVar(&e.cache, "cache", "none", "Azure host cache mode: none, readonly, readwrite")
	e.volumes = units.Count{N: 1, Min: 1, Max: 256}
}

func (e *expectFlags) placement() limits.Placement {
	return limits.Placement{VM: e.vm, Attached: e.attached, Cache: e.cache, Volumes: int(e.volumes.N)}
}

// specError makes the catalog's spec and price errors usage errors
// (exit 2), with their hints.
func specError(err error) error {
	var se *limits.SpecError
	var pe *limits.PriceError
	if errors.As(err, &se) || errors.As(err, &pe) {
		return &UsageError{Err: err, Help: hint.Of(err)}
	}
	return err
}

type limitsOptions struct {
	expectFlags
	ioSizes      []string
	output       *format
	targetIOPS   float64
	targetMBps   float64
	targetIOSize units.Size
	provider     string
	priceFile    string
	priceAsOf    string
	region       string
	buffered     bool
}

func newLimitsCommand(streams IOStreams) *cobra.Command {
	o := &limitsOptions{}
	cmd := &cobra.Command{
		Use:   "limits DISK [DISK...]",
		Short: "Expected IOPS and MB/s ceilings of a cloud disk or file share, which limit binds, and what it costs",
		Long: `Show what a cloud disk or file share should deliver at each IO size: the
IOPS and MB/s ceilings, the component that binds (the disk's IOPS or
throughput cap, IO-size counting, the VM's cap for the cache mode, IBM's
per-volume share of the VSI bandwidth, the VM's network for a file share),
the burst allowance and how long it lasts, and the list price with its
region, date and source ($ a month, and $ per provisioned IOPS, MB/s and GiB).

DISK is a catalog tier (azure:P15), a family at a size (azure:premium-ssd:500GiB,
aws:gp2:100GiB, ibm:10iops-tier:300GiB), a provisioned disk
(aws:gp3:iops=6000,throughput=250) or a file share (azure:netapp-premium:4TiB,
aws:efs-bursting:1TiB). Sizes take GiB or GB; a tiered disk rounds up to its
tier. Add @YYYY to the name for the limits documented then (azure:ultra@2019:1TiB:iops=max);
the prices in force then are used too. 'iolens catalog list' shows every
family and VM size.

With --target-iops / --target-mbps and --provider instead of DISK, list the
smallest disk of every family that reaches the target, for reads and for
writes, cheapest first: IOPS at --target-io-size (16k), bounded by the
throughput at that size, and MB/s at 1 MiB. Nothing that falls short is
listed. With --vm (and --cache), the VM's limits apply: options it carries
only while its burst credits last are listed apart, and options it cannot
carry name the smallest VM size that can.

The latency model gives the IOPS of one IO at a time (QD1), the queue depth
the cap needs, and a band for the p99 of small-write fdatasync, and so
whether etcd (p99 under 10 ms) is likely to pass; each figure says whether
it is sourced or assumed.

Prices are list prices only where a source states them, of each provider's
current era unless --price-as-of asks for another date; --price-file adds
your own (YAML or JSON: sources and prices, each with region, as_of, source).`,
		Example: `  iolens limits azure:P15
  iolens limits azure:premium-ssd:250GB --vm Standard_DS2_v2 --cache readonly
  iolens limits aws:gp3:iops=6000,throughput=250 --vm aws:m5.large -o json
  iolens limits ibm:10iops-tier:300GB --vm ibm:bx2.16x64 --attached ibm:10iops-tier:600GB
  iolens limits azure:netapp-premium:4TiB --vm Standard_DS2_v2
  iolens limits azure:premium-ssd:10TB --price-as-of 2019
  iolens limits --target-iops 5000 --target-mbps 200 --provider azure --vm D4s_v3 --cache readonly
  iolens limits ibm:10iops-tier:300GB --vm bx2.16x64 --volumes-per-node 2`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.catalog()
			switch target := o.targetIOPS > 0 || o.targetMBps > 0; {
			case err != nil:
				return err
			case target || cmd.Flags().Changed("target-iops") || cmd.Flags().Changed("target-mbps"):
				return o.sizing(streams.Out, c, target, args)
			case len(args) == 0:
				return &UsageError{Err: errors.New("which disk?"), Help: "e.g. iolens limits azure:P15; 'iolens catalog list' shows the catalog"}
			case len(args) > 1 || o.output.v == "wide" || o.output.v == "csv":
				return o.table(streams.Out, c, args, cmd.Flags().Changed("io-size"))
			}
			return o.run(streams.Out, c, args[0])
		},
	}
	o.expectFlags.add(cmd)
	f := cmd.Flags()
	f.Var(&o.volumes, "volumes-per-node", "volumes like DISK tested at the same time on the VM: they share its caps, and IBM splits its volume bandwidth over them")
	f.StringSliceVar(&o.ioSizes, "io-size", []string{"4k", "16k", "256k", "1m"}, "IO sizes to show")
	o.output = formatFlag(f, report.LimitSheets, "format (wide is one record per disk, and several disks print as one table): ")
	numberVar(f, &o.targetIOPS, "target-iops", 0, 0, 1e9, "find the smallest disk that sustains this many IOPS, reads and writes each")
	numberVar(f, &o.targetMBps, "target-mbps", 0, 0, 1e9, "find the smallest disk that sustains this many MB/s (10^6 B/s), reads and writes each")
	o.targetIOSize = units.Size(limits.DefaultTargetIOSize)
	f.Var(&o.targetIOSize, "target-io-size", "IO size the --target-iops are judged at")
	f.StringVar(&o.provider, "provider", "", "provider for --target-*: azure, aws, gcp, ibm")
	f.StringVar(&o.priceFile, "price-file", "", "your own prices (YAML or JSON), preferred to the catalog's")
	markInput(f, "price-file")
	f.StringVar(&o.priceAsOf, "price-as-of", "", "use the prices in force at this date (YYYY or YYYY-MM), not the newest")
	f.BoolVar(&o.buffered, "buffered", false, "the writes are buffered (not O_DIRECT): say what merging in the page cache does to the IO sizes the disk sees")
	f.StringVar(&o.region, "region", "", "use only the prices stored for this region (default: the newest, the provider's reference region first: azure eastus, aws us-east-1, gcp us-central1, ibm us-south)")
	return cmd
}

// catalog is the built-in catalog, with the user's prices when given.
func (o *limitsOptions) catalog() (*limits.Catalog, error) {
	c, err := limits.Default()
	if err != nil {
		return nil, err
	}
	if o.priceAsOf != "" && !limits.ValidPriceDate(o.priceAsOf) {
		return nil, &UsageError{Err: fmt.Errorf("--price-as-of %q", o.priceAsOf), Help: "a year or a month: 2019, 2023-09"}
	}
	var prices io.Reader
	if o.priceFile != "" {
		fh, err := userfile.Open(o.priceFile)
		if err != nil {
			return nil, &UsageError{Err: err, Help: "give a readable price file"}
		}
		defer fh.Close()
		prices = fh
	}
	c, err = c.Priced(prices, o.region)
	return c, specError(err)
}

func (o *limitsOptions) run(w io.Writer, c *limits.Catalog, disk string) error {
	var sizes []int64
	for _, s := range o.ioSizes {
		n, err := units.ParseSize(s)
		if err != nil || n <= 0 {
			return &UsageError{Err: fmt.Errorf("--io-size %q", s), Help: "sizes like 4k, 16k, 256k, 1m"}
		}
		sizes = append(sizes, n)
	}
	rep, err := c.Sheet(disk, o.placement(), sizes, o.priceAsOf, o.buffered)
	if err != nil {
		return specError(err)
	}
	return o.output.print(w, rep, rep.WriteText)
}

func (o *limitsOptions) sizing(w io.Writer, c *limits.Catalog, target bool, disks []string) error {
	switch {
	case !target:
		return &UsageError{Err: errors.New("--target-iops and --target-mbps are 0: no target"), Help: "e.g. iolens limits --target-iops 5000 --provider azure"}
	case len(disks) > 0:
		return &UsageError{Err: errors.New("give DISK or --target-iops/--target-mbps, not both"), Help: "iolens limits --target-iops 5000 --provider azure"}
	case o.provider == "":
		return &UsageError{Err: errors.New("--target-* needs --provider"), Help: "providers: " + strings.Join(c.ProviderNames(), ", ")}
	case o.targetIOSize <= 0:
		return &UsageError{Err: errors.New("--target-io-size must be above 0"), Help: "e.g. --target-io-size 4k"}
	}
	sz, err := c.Smallest(o.provider, limits.Target{IOPS: o.targetIOPS, BWBytes: o.targetMBps * 1e6,
		IOSize: int64(o.targetIOSize), VM: o.vm, Cache: o.cache, PriceDate: o.priceAsOf})
	if err != nil {
		return specError(err)
	}
	return o.output.write(w, report.Listing{Value: sz, Forms: map[string]func(io.Writer) error{
		"text": func(w io.Writer) error { return limits.WriteSizingText(w, sz) },
		"wide": func(w io.Writer) error { return c.SizingTable(sz).WriteWide(w) },
		"csv":  func(w io.Writer) error { return c.SizingTable(sz).WriteCSV(w) },
	}})
}

// table compares several disks on one VM: a row per disk, at one
// --io-size when given.
func (o *limitsOptions) table(w io.Writer, c *limits.Catalog, disks []string, ioSizeGiven bool) error {
	size := int64(o.targetIOSize)
	if ioSizeGiven {
		n, err := units.ParseSize(o.ioSizes[0])
		if err != nil || n <= 0 || len(o.ioSizes) > 1 {
			return &UsageError{Err: fmt.Errorf("--io-size %q for a table of disks", strings.Join(o.ioSizes, ",")), Help: "one size for a table, e.g. --io-size 4k"}
		}
		size = n
	}
	t, err := c.Table(disks, o.placement(), size, o.priceAsOf)
	if err != nil {
		return specError(err)
	}
	return o.output.write(w, report.Listing{Value: t, Forms: map[string]func(io.Writer) error{"text": t.WriteText, "wide": t.WriteWide, "csv": t.WriteCSV}})
}

func newCatalogCommand(streams IOStreams) *cobra.Command {
	var output *format
	cmd := &cobra.Command{
		Use:   "catalog [list|show ID]",
		Short: "Browse the built-in catalog of cloud disk, share and VM limits and prices, with sources",
		Example: `  iolens catalog list
  iolens catalog show azure:premium-ssd
  iolens catalog show azure:Standard_DS2_v2 -o json
  iolens catalog show aws:gp3`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := limits.Default()
			if err != nil {
				return err
			}
			switch {
			case len(args) == 0 || args[0] == "list":
				return output.print(streams.Out, c, c.WriteCatalogList)
			case args[0] == "show" && len(args) == 2:
				ce := c.Entry(args[1])
				if ce == nil {
					return &UsageError{Err: fmt.Errorf("no catalog entry %q", args[1]), Help: "'iolens catalog list' shows the ids"}
				}
				return output.print(streams.Out, ce, ce.WriteText)
			}
			return &UsageError{Err: fmt.Errorf("unknown catalog command %q", strings.Join(args, " ")), Help: "iolens catalog list | iolens catalog show ID"}
		},
	}
	output = formatFlag(cmd.Flags(), report.Listings, "format: ")
	return cmd
}

// expectOptions is --expect DISK with --vm, --attached and --cache, for
// run and report: results get "ceiling" findings against what the disk
// should deliver.
type expectOptions struct {
	disk string
	expectFlags
}

func (e *expectOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&e.disk, "expect", "", "compare results with what this disk should deliver (a catalog spec: azure:P15, aws:gp3:iops=6000; see 'iolens limits')")
	e.expectFlags.add(cmd)
}

// diagnoser returns a function adding ceiling findings to a result, nil
// without --expect.
func (e *expectOptions) diagnoser(cmd *cobra.Command) (func(*result.Result), error) {
	if e.disk == "" {
		for _, n := range []string{"vm", "attached", "cache"} {
			if cmd.Flags().Changed(n) {
				return nil, &UsageError{Err: fmt.Errorf("--%s needs --expect", n), Help: "say which disk: --expect azure:P15 --vm Standard_DS2_v2"}
			}
		}
		return nil, nil
	}
	c, err := limits.Default()
	if err != nil {
		return nil, err
	}
	x, err := c.Expect(e.disk, e.placement())
	if err != nil {
		return nil, specError(err)
	}
	return func(r *result.Result) { limits.Apply(r, x) }, nil
}
