package cli

import (
	"strings"

	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/pflag"
)

// formatsAnnotation marks an -o flag with the kind of the report registry
// it offers, which completion and the tests read.
const formatsAnnotation = "iolens/report-formats"

// outputFlag is -o of a command that writes a report: its formats, its
// help and its completion are the registry's.
func outputFlag(f *pflag.FlagSet, p *string, reg report.Registry, usage string) {
	f.StringVarP(p, "output", "o", "text", usage+strings.Join(reg.Names(), ", "))
	_ = f.SetAnnotation("output", formatsAnnotation, []string{reg.Kind})
}

// registryOf is the report registry an -o flag offers, if it is one.
func registryOf(fl *pflag.Flag) (report.Registry, bool) {
	kinds := fl.Annotations[formatsAnnotation]
	if len(kinds) != 1 {
		return report.Registry{}, false
	}
	for _, r := range report.Registries() {
		if r.Kind == kinds[0] {
			return r, true
		}
	}
	return report.Registry{}, false
}
