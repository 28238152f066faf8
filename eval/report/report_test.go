package report_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/eval/report"
)

func sampleReport(workflow string, at time.Time, passed int) *report.Report {
	return &report.Report{Workflow: workflow, StartedAt: at, Summary: report.Summary{Cases: 2, Passed: passed},
		Cases: []report.Case{{Name: "a", Grades: []report.Grade{}}}}
}

// TestSaveListRead: reports are kept one a file, never overwritten, listed newest first without
// their cases (IDs lists them without reading, Entries reads the ids given), and read back whole; a file that is not a report is named and left out; ids that
// are not a file of the folder are not found.
func TestSaveListRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "evals")
	at := time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)
	first, err := report.Save(dir, sampleReport("qa", at, 1))
	require.NoError(t, err)
	require.Equal(t, "20261125T040000.000Z-qa", first)
	again, err := report.Save(dir, sampleReport("qa", at, 2))
	require.NoError(t, err)
	require.Equal(t, first+"-2", again, "the same second and workflow: a new name, the first kept")
	newest, err := report.Save(dir, sampleReport("my flow/v2", at.Add(time.Hour), 0))
	require.NoError(t, err)
	require.Equal(t, "20261125T050000.000Z-my-flow-v2", newest)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "20200101T000000.000Z-broken.json"), []byte("{"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644))

	list, err := report.List(dir, 0)
	require.ErrorContains(t, err, "20200101T000000.000Z-broken.json is not a weft eval report")
	var ids []string
	for _, e := range list {
		ids = append(ids, e.ID)
		require.Nil(t, e.Cases, "a listing leaves the cases out")
	}
	require.Equal(t, []string{newest, again, first}, ids)
	require.Equal(t, 2, list[1].Summary.Passed)

	limited, err := report.List(dir, 1)
	require.NoError(t, err)
	require.Len(t, limited, 1)
	require.Equal(t, newest, limited[0].ID)

	all, err := report.IDs(dir)
	require.NoError(t, err, "IDs reads no report: the broken one is listed")
	require.Equal(t, []string{newest, again, first, "20200101T000000.000Z-broken"}, all)
	part, err := report.Entries(dir, all[1:3])
	require.NoError(t, err)
	require.Len(t, part, 2, "Entries reads the ids given")
	require.Equal(t, again, part[0].ID)
	require.Equal(t, first, part[1].ID)
	require.Nil(t, part[0].Cases)
	_, err = report.Entries(dir, []string{"../" + first, "20990101T000000.000Z-gone"})
	require.ErrorIs(t, err, report.ErrNotFound, "an id out of the folder or gone is named, not read")
	none, err := report.IDs(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	require.Empty(t, none)
	for id, valid := range map[string]bool{first: true, again: true, "": false, "../x": false, ".saving-1": false, "a/b": false} {
		require.Equal(t, valid, report.ValidID(id), id)
	}

	for _, tc := range []struct {
		id, err string
	}{
		{first, ""},
		{"20990101T000000.000Z-qa", "no such eval report"},
		{"../evals/" + first, "no such eval report"},
		{"", "no such eval report"},
		{".saving-1", "no such eval report"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			r, err := report.Read(dir, tc.id)
			if tc.err != "" {
				require.ErrorIs(t, err, report.ErrNotFound)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, 1, r.Summary.Passed)
			require.Len(t, r.Cases, 1)
			require.True(t, r.StartedAt.Equal(at))
		})
	}

	noEntries, err := report.List(filepath.Join(dir, "missing"), 0)
	require.NoError(t, err)
	require.Empty(t, noEntries)
	leftovers, err := filepath.Glob(filepath.Join(dir, ".saving-*"))
	require.NoError(t, err)
	require.Empty(t, leftovers, "nothing is left aside")
}
