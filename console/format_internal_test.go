package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FormatExamples are the examples console.js's fmtAgo and fmtDuration are held to as well
// (TestFormatsAgreeInBrowser, through export_test.go).
var agoExamples = []struct {
	ago  time.Duration // how long before now
	want string
}{
	{0, "just now"},
	{4900 * time.Millisecond, "just now"},
	{5 * time.Second, "5 s ago"},
	{59 * time.Second, "59 s ago"},
	{60 * time.Second, "1 min ago"},
	{3*time.Minute + 59*time.Second, "3 min ago"},
	{59 * time.Minute, "59 min ago"},
	{time.Hour, "1 h ago"},
	{23*time.Hour + 59*time.Minute, "23 h ago"},
	{24 * time.Hour, "1 d ago"},
	{6 * 24 * time.Hour, "6 d ago"},
	{-10 * time.Minute, "in 10 min"},
	{-2 * time.Hour, "in 2 h"},
}

var durationExamples = []struct {
	d    time.Duration
	want string
}{
	{0, "0 ms"},
	{-time.Second, "0 ms"},
	{850 * time.Millisecond, "850 ms"},
	{999*time.Millisecond + 900*time.Microsecond, "999 ms"},
	{time.Second, "1.0 s"},
	{1234 * time.Millisecond, "1.2 s"},
	{1300 * time.Millisecond, "1.3 s"},
	{59970 * time.Millisecond, "59.9 s"},
	{time.Minute, "1 min"},
	{3*time.Minute + 4*time.Second, "3 min 4 s"},
	{3*time.Minute + 4*time.Second + 900*time.Millisecond, "3 min 4 s"},
	{time.Hour, "1 h"},
	{2*time.Hour + 5*time.Minute + 59*time.Second, "2 h 5 min"},
	{27 * time.Hour, "1 d 3 h"},
	{48 * time.Hour, "2 d"},
}

func TestFormats(t *testing.T) {
	now := time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)
	for _, c := range agoExamples {
		t.Run("ago "+c.want, func(t *testing.T) {
			require.Equal(t, c.want, relTime(now.Add(-c.ago), now))
		})
	}
	// past a week: the date
	old := time.Date(2025, 3, 2, 12, 0, 0, 0, time.Local)
	require.Equal(t, "2 Mar 2025", relTime(old, now))
	for _, c := range durationExamples {
		t.Run("duration "+c.want, func(t *testing.T) {
			require.Equal(t, c.want, duration(c.d))
		})
	}
	// the tag: relative text, absolute tooltip, the instant for the script
	at := time.Now().Add(-3 * time.Minute)
	tag := string(timeTag(at))
	require.Contains(t, tag, ">3 min ago</time>")
	require.Contains(t, tag, `title="`+absTime(at)+`"`)
	require.Contains(t, tag, `datetime="`+at.UTC().Format(time.RFC3339Nano)+`"`)
	require.Empty(t, string(timeTag(time.Time{})))
}
