package diagnosis

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// IOErrors are the tests in which the disk returned an IO error: the
// most important thing a disk check can find, said before any figure.
type IOErrors struct {
	// Tests is how many tests failed with an IO error, Of how many ran.
	Tests int `json:"tests"`
	Of    int `json:"of"`
	// Failed are those tests, in the order they ran.
	Failed []IOErrorTest `json:"failed"`
	// Kernel is the kernel's own record of the errors where the host
	// showed it (its log, a SCSI device's error count), as the results
	// carry it.
	Kernel []string `json:"kernel"`
}

// IOErrorTest is one test that failed with an IO error.
type IOErrorTest struct {
	Test  string `json:"test"`
	Error string `json:"error"`
	// Ops are the IOs fio named as failed: the operation and its offset
	// in the test's file or device, in bytes.
	Ops []IOErrorOp `json:"ops"`
}

// IOErrorOp is one failed IO fio named.
type IOErrorOp struct {
	Op          string `json:"op"`
	OffsetBytes int64  `json:"offset_bytes"`
}

// failedOp is fio's line for an IO that failed ("io_u error on file F:
// Input/output error: read offset=1048576, buflen=4096").
var failedOp = regexp.MustCompile(`\b(read|write|trim|sync|datasync) offset=([0-9]{1,19})`)

// maxOps bounds the failed IOs kept per test: fio names each one, and a
// dead disk fails them all.
const maxOps = 8

// ioErrorsOf finds the tests of rs that failed with an IO error, and the
// kernel's record the results carry; nil when none did.
func ioErrorsOf(rs []result.Result) *IOErrors {
	var e IOErrors
	for i := range rs {
		r := &rs[i]
		for _, n := range r.Notes {
			if k, ok := strings.CutPrefix(n, result.NoteKernel); ok && !contains(e.Kernel, k) {
				e.Kernel = append(e.Kernel, k)
			}
		}
		if !r.IOFailed() {
			continue
		}
		t := IOErrorTest{Test: r.Test.Name, Error: firstLine(r.Error), Ops: []IOErrorOp{}}
		seen := map[IOErrorOp]bool{}
		for _, m := range failedOp.FindAllStringSubmatch(r.FioStderr+"\n"+r.Error, -1) {
			off, err := strconv.ParseInt(m[2], 10, 64)
			op := IOErrorOp{Op: m[1], OffsetBytes: off}
			if err != nil || seen[op] {
				continue
			}
			seen[op] = true
			if len(t.Ops) < maxOps {
				t.Ops = append(t.Ops, op)
			}
		}
		e.Failed = append(e.Failed, t)
	}
	if len(e.Failed) == 0 {
		return nil
	}
	e.Tests, e.Of = len(e.Failed), len(rs)
	if e.Kernel == nil {
		e.Kernel = []string{}
	}
	return &e
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// ioErrorLines say the IO errors: the first line of the verdict, and the
// kernel's record after it.
func ioErrorLines(e *IOErrors) []string {
	var names []string
	byOp := map[string][]string{}
	var ops []string
	for _, t := range e.Failed {
		names = append(names, t.Test)
		for _, o := range t.Ops {
			if _, ok := byOp[o.Op]; !ok {
				ops = append(ops, o.Op)
			}
			if off := units.Commas(o.OffsetBytes); !contains(byOp[o.Op], off) {
				byOp[o.Op] = append(byOp[o.Op], off)
			}
		}
	}
	if len(names) > 4 {
		names = append(names[:4], fmt.Sprintf("%d more", len(names)-4))
	}
	s := fmt.Sprintf("IO errors: the disk returned IO errors in %d of %d tests (%s)", e.Tests, e.Of, strings.Join(names, ", "))
	for _, op := range ops {
		offs := byOp[op]
		if len(offs) > 3 {
			offs = append(offs[:3], fmt.Sprintf("%d more", len(offs)-3))
		}
		s += fmt.Sprintf("; %ss at offsets %s", op, strings.Join(offs, ", "))
	}
	if len(ops) == 0 {
		s += "; fio named no offset"
	}
	out := []string{s + ": the figures below leave those tests out"}
	if len(e.Kernel) > 0 {
		k := e.Kernel
		more := ""
		if len(k) > 2 {
			k, more = k[:2], fmt.Sprintf(" (and %d more)", len(e.Kernel)-2)
		}
		out = append(out, "kernel: "+strings.Join(k, "; ")+more)
	}
	return out
}
