// Package hint attaches advice to an error: what the user can do next.
// Libraries return a *Error where they know the remedy, a *UsageError
// where what they were asked is wrong; the command line prints the
// error, then its hint.
package hint

import "errors"

// Error is an error with what to do about it.
type Error struct {
	Err    error
	Advice string
}

// Wrap returns err with advice, or nil when err is nil.
func Wrap(err error, advice string) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err, Advice: advice}
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Hint says what to do next.
func (e *Error) Hint() string { return e.Advice }

// Of returns the first hint in err's chain (any error with a Hint
// method, not only *Error), or "".
func Of(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

// UsageError is a mistake in what a command was asked (a flag, an
// argument, two that do not go together), with what to give instead.
// Libraries that check a command's options return it; the command line
// exits 2 for it, as for its own usage errors.
type UsageError struct {
	Err    error
	Advice string
}

// Usage returns err as a *UsageError with advice.
func Usage(err error, advice string) error { return &UsageError{Err: err, Advice: advice} }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Hint says what to give instead.
func (e *UsageError) Hint() string { return e.Advice }
