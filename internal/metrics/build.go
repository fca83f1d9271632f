package metrics

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// nameBuildInfo is the build info metric every exporter carries.
const nameBuildInfo = "iolens_build_info"

// Build identifies the iolens binary that exports: iolens_build_info,
// value 1, labelled with the version, the source commit and the Go
// version, as Prometheus' own exporters do. The CLI passes what it was
// built with.
type Build struct {
	Version string
	Commit  string
}

var descBuildInfo = prometheus.NewDesc(nameBuildInfo, "A metric with a constant 1 labelled by the version, commit and Go version iolens was built from.",
	[]string{"version", "commit", "goversion"}, nil)

// buildCollector emits iolens_build_info.
type buildCollector struct{ b Build }

// buildInfo returns the collector of iolens_build_info.
func buildInfo(b Build) prometheus.Collector { return buildCollector{b} }

func (c buildCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descBuildInfo }

func (c buildCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descBuildInfo, prometheus.GaugeValue, 1, c.b.Version, c.b.Commit, runtime.Version())
}
