package console

import (
	"fmt"
	"html"
	"html/template"
	"time"
)

// The console shows every time and duration the same way, here for pages rendered in Go and in
// console.js (fmtAgo, fmtDuration, timeEl) for what the page script draws: a time is relative
// ("3 min ago") with the absolute local time as its tooltip; a duration is "850 ms", "1.2 s",
// "3 min 4 s", "2 h 5 min" or "1 d 3 h". The two must agree: TestFormats and the runs page's
// browser test hold them to the same examples.

// absTime is a time's tooltip: local, to the second, with its zone.
func absTime(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

// relTime says how long before now t was ("in …" for a time ahead); past a week, the date.
func relTime(t, now time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < 5*time.Second:
		return "just now"
	case d < time.Minute:
		s = fmt.Sprintf("%d s", int(d/time.Second))
	case d < time.Hour:
		s = fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 24*time.Hour:
		s = fmt.Sprintf("%d h", int(d/time.Hour))
	case d < 7*24*time.Hour:
		s = fmt.Sprintf("%d d", int(d/(24*time.Hour)))
	default:
		return t.Local().Format("2 Jan 2006")
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// duration is d for people: milliseconds under a second, tenths of a second under a minute, then
// the two largest units.
func duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		// tenths, rounded down so that 59.97 s is not shown as "60.0 s"
		tenths := d.Milliseconds() / 100
		return fmt.Sprintf("%d.%d s", tenths/10, tenths%10)
	}
	two := func(a int64, ua string, b int64, ub string) string {
		if b == 0 {
			return fmt.Sprintf("%d %s", a, ua)
		}
		return fmt.Sprintf("%d %s %d %s", a, ua, b, ub)
	}
	s := int64(d / time.Second)
	switch {
	case d < time.Hour:
		return two(s/60, "min", s%60, "s")
	case d < 24*time.Hour:
		return two(s/3600, "h", s%3600/60, "min")
	default:
		return two(s/86400, "d", s%86400/3600, "h")
	}
}

// timeTag is a <time> element for t: relative text, absolute tooltip, and the instant for
// console.js to keep the text current.
func timeTag(t time.Time) template.HTML {
	if t.IsZero() {
		return ""
	}
	return template.HTML(fmt.Sprintf(`<time datetime="%s" title="%s">%s</time>`,
		html.EscapeString(t.UTC().Format(time.RFC3339Nano)), html.EscapeString(absTime(t)), html.EscapeString(relTime(t, time.Now()))))
}
