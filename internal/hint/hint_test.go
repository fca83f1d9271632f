package hint

import (
	"errors"
	"fmt"
	"testing"
)

type usage struct{ error }

func (usage) Hint() string { return "call it right" }

func TestWrapAndOf(t *testing.T) {
	base := errors.New("disk gone")
	if Wrap(nil, "x") != nil {
		t.Fatal("Wrap(nil) is not nil")
	}
	err := fmt.Errorf("run: %w", Wrap(base, "attach it again"))
	if got := Of(err); got != "attach it again" {
		t.Fatalf("Of = %q", got)
	}
	if !errors.Is(err, base) {
		t.Fatal("the wrapped error is lost")
	}
	if err.Error() != "run: disk gone" {
		t.Fatalf("message = %q: the hint must not be in it", err.Error())
	}
	if got := Of(fmt.Errorf("x: %w", usage{base})); got != "call it right" {
		t.Fatalf("Of(another Hint type) = %q", got)
	}
	if got := Of(base); got != "" {
		t.Fatalf("Of(no hint) = %q", got)
	}
}

func TestUsage(t *testing.T) {
	base := errors.New("--since with --from")
	err := fmt.Errorf("window: %w", Usage(base, "give one of them"))
	var u *UsageError
	if !errors.As(err, &u) || !errors.Is(err, base) || Of(err) != "give one of them" || u.Error() != base.Error() {
		t.Fatalf("Usage: %v, hint %q", err, Of(err))
	}
}
