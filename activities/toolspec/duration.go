package toolspec

import (
	"fmt"
	"math"
	"regexp"
	"time"
)

// durationSyntax is Go's duration syntax: numbers each with a unit ("30s", "1h30m", "1.5h").
var durationSyntax = regexp.MustCompile(`^[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`)

// MaxDuration is the longest duration a step can name ("2562047h", about 292 years).
const MaxDuration = time.Duration(math.MaxInt64)

// ParseDuration reads a duration a file or a tool's input gives ("30s", "5m", "1h30m"). Its
// error says what is wrong with it: not a duration (and what to write), negative, or longer than
// MaxDuration (naming the bound, where Go only says "invalid duration").
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil && durationSyntax.MatchString(s) && s != "0" && s != "":
		return 0, fmt.Errorf("%q is longer than the longest duration, %dh (about 292 years): write a shorter one, e.g. \"720h\" for 30 days", s, int64(MaxDuration/time.Hour))
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration: write a number with a unit, e.g. \"30s\", \"5m\", \"1h30m\"", s)
	case d < 0:
		return 0, fmt.Errorf("%q is negative: write a duration of 0 or more, e.g. \"30s\"", s)
	}
	return d, nil
}
