package console

// FormatCase is one example of the console's time and duration formats, for the browser test
// that holds console.js to the same (TestFormatsAgreeInBrowser).
type FormatCase struct {
	Ms   int64 // fmtAgo: how long ago, in ms; fmtDuration: the duration
	Want string
}

// AgoCases and DurationCases are format_internal_test.go's examples.
func AgoCases() []FormatCase {
	var out []FormatCase
	for _, c := range agoExamples {
		out = append(out, FormatCase{c.ago.Milliseconds(), c.want})
	}
	return out
}

func DurationCases() []FormatCase {
	var out []FormatCase
	for _, c := range durationExamples {
		out = append(out, FormatCase{c.d.Milliseconds(), c.want})
	}
	return out
}
