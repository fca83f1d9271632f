package units

import (
	"strconv"
	"time"
)

// The flag types below implement the pflag.Value interface (Set, String,
// Type) with this package's parsers, so every flag of a kind takes the
// same spellings and refuses the same values.

// Duration is a flag value: a Go duration or plain seconds.
type Duration time.Duration

// Set parses s with ParseDuration.
func (d *Duration) Set(s string) error {
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// String is "" for zero, so that help shows no "(default 0s)".
func (d *Duration) String() string {
	if *d == 0 {
		return ""
	}
	return time.Duration(*d).String()
}

// Type names the value in help text.
func (d *Duration) Type() string { return "duration" }

// Size is a flag value: a byte size with binary units.
type Size int64

// Set parses s with ParseSize.
func (z *Size) Set(s string) error {
	v, err := ParseSize(s)
	if err != nil {
		return err
	}
	*z = Size(v)
	return nil
}

func (z *Size) String() string {
	if *z == 0 {
		return ""
	}
	return FormatSize(int64(*z))
}

// Type names the value in help text.
func (z *Size) Type() string { return "size" }

// Count is a flag value: a whole number within [Min, Max].
type Count struct {
	N        int64
	Min, Max int64
}

// Set parses s with ParseCount.
func (c *Count) Set(s string) error {
	v, err := ParseCount(s, c.Min, c.Max)
	if err != nil {
		return err
	}
	c.N = v
	return nil
}

func (c *Count) String() string { return strconv.FormatInt(c.N, 10) }

// Type names the value in help text.
func (c *Count) Type() string { return "int" }

// Number is a flag value: a number within [Min, Max] (ParseNumber), kept
// in *P.
type Number struct {
	P        *float64
	Min, Max float64
}

// Set parses s with ParseNumber.
func (n *Number) Set(s string) error {
	v, err := ParseNumber(s, n.Min, n.Max)
	if err != nil {
		return err
	}
	*n.P = v
	return nil
}

func (n *Number) String() string {
	if n.P == nil {
		return "0"
	}
	return strconv.FormatFloat(*n.P, 'f', -1, 64)
}

// Type names the value in help text.
func (n *Number) Type() string { return "number" }

// Seconds is a flag value: a duration (ParseDuration) kept as seconds,
// for the structs that hold times as float seconds.
type Seconds float64

// Set parses v with ParseDuration.
func (s *Seconds) Set(v string) error {
	d, err := ParseDuration(v)
	if err != nil {
		return err
	}
	*s = Seconds(d.Seconds())
	return nil
}

// String is "" for zero, as Duration's.
func (s *Seconds) String() string {
	if *s == 0 {
		return ""
	}
	return time.Duration(float64(*s) * float64(time.Second)).String()
}

// Type names the value in help text.
func (s *Seconds) Type() string { return "duration" }

// Precision is a flag value: a relative precision (ParsePrecision), kept
// as a fraction.
type Precision float64

// Set parses v with ParsePrecision.
func (p *Precision) Set(v string) error {
	x, err := ParsePrecision(v)
	if err != nil {
		return err
	}
	*p = Precision(x)
	return nil
}

func (p *Precision) String() string { return strconv.FormatFloat(float64(*p), 'g', -1, 64) }

// Type names the value in help text.
func (p *Precision) Type() string { return "precision" }
