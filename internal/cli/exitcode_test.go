package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/hint"
)

// TestExitCodeOfALibrarysMistake: a library's *hint.UsageError, however
// wrapped, is a usage error (exit 2) with its advice as the hint, as the
// command line's own are; another error with a hint is a failure (1).
func TestExitCodeOfALibrarysMistake(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{fmt.Errorf("analyze: %w", hint.Usage(errors.New("--since and --from are exclusive"), "give one of them")), 2},
		{&UsageError{Err: errors.New("bad flag"), Help: "give one of them"}, 2},
		{hint.Wrap(errors.New("no such file"), "give one of them"), 1},
	} {
		var b strings.Builder
		if got := ExitCode(c.err, false, &b); got != c.code || !strings.Contains(b.String(), "hint: give one of them") {
			t.Errorf("%v: exit %d, printed %q; want exit %d and the hint", c.err, got, b.String(), c.code)
		}
	}
}
