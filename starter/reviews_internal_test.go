package starter

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/reviewfake"
)

// TestReviewsSaysWhereItWasCut: weft reviews reads the --limit newest runs waiting (100 unless
// told); when more runs wait it says so, with how many reviews wait at least and how to read
// more (under --json on stderr, so the output stays the list), and says nothing when it read them
// all.
func TestReviewsSaysWhereItWasCut(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, limit int
		asJSON   bool
		rows     int
		out, err string // what stdout and stderr contain ("" for stderr: nothing)
		not      string // what stdout must not say
	}{
		{"every run read", 50, defaultReviewRuns, false, 50, "Decide: weft review", "", "At least"},
		{"cut at the default bound", 150, defaultReviewRuns, false, 100,
			"At least 100 waiting: the reviews of the 100 newest runs waiting are listed; older runs wait too, and they may have waited longest. weft reviews --limit 1000 reads more.", "", ""},
		{"cut at the highest bound", weftclient.MaxReviewRuns + 5, weftclient.MaxReviewRuns, false, weftclient.MaxReviewRuns,
			"At least 1000 waiting: the reviews of the 1000 newest runs waiting are listed; older runs wait too, and they may have waited longest. The older ones are listed once newer ones are decided.", "", "--limit"},
		{"every run read, JSON", 50, defaultReviewRuns, true, 50, `"run": "r0"`, "", "At least"},
		{"cut, JSON", 150, defaultReviewRuns, true, 100, `"run": "r50"`,
			"weft reviews: At least 100 waiting: the reviews of the 100 newest runs waiting are listed; older runs wait too, and they may have waited longest. weft reviews --limit 1000 reads more.", "At least"},
		{"nothing waits", 0, defaultReviewRuns, false, 0, "No run is waiting for a review.", "", "At least"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			c := weftclient.New(&reviewfake.Runs{N: tc.n}, "test")
			require.NoError(t, listReviews(context.Background(), c, &out, &errOut, tc.limit, tc.asJSON))
			require.Contains(t, out.String(), tc.out)
			if tc.not != "" {
				require.NotContains(t, out.String(), tc.not)
			}
			if tc.err == "" {
				require.Empty(t, errOut.String())
			} else {
				require.Equal(t, tc.err+"\n", errOut.String())
			}
			if tc.asJSON {
				var list []map[string]any
				require.NoError(t, json.Unmarshal(out.Bytes(), &list), "the output is the list alone")
				require.Len(t, list, tc.rows)
			} else {
				require.Equal(t, tc.rows, bytes.Count(out.Bytes(), []byte("review of r")), "one row a review")
			}
		})
	}
	t.Run("a limit out of range", func(t *testing.T) {
		for _, limit := range []string{"0", "1001"} {
			cmd := newReviewsCommand()
			cmd.SetArgs([]string{"--limit", limit})
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			require.ErrorContains(t, err, "--limit "+limit+": give a number of waiting runs to read from 1 to 1000")
		}
	})
}
