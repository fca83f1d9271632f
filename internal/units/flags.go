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

func (d *Duration) String() string { return time.Duration(*d).String() }

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
