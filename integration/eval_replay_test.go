package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/eval/report"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/runwire"
)

// TestEvalReplay records 10 runs of an agent workflow (a search step, then an agent that calls
// search) with model m1, then changes the tool (a live search now answers fact-v2) and replays
// the 10 runs with weft eval --model m2: the model turns run against m2, while the search step's
// output and the agent's search results come from the record (the tool is not called once, the
// model reads fact-v1). m2 answers cases 3 and 7 wrongly (a model regression: their answers are
// listed as changed and their graders fail) and asks case 5's search with other arguments (tool
// drift: not run, the model told so, listed as drift). Trajectory graders grade every case.
func TestEvalReplay(t *testing.T) {
	queue := "eval-replay"
	var version, searches atomic.Int32
	version.Store(1)
	question := regexp.MustCompile(`Question (\d+)\.`)
	fake := fakellm.New()
	defer fake.Close()
	fake.Respond = func(r fakellm.Request) fakellm.Reply {
		all := fmt.Sprint(r.Messages)
		m := question.FindStringSubmatch(all)
		if m == nil {
			return fakellm.Text("no question")
		}
		n, _ := strconv.Atoi(m[1])
		if !strings.Contains(all, "role:tool") {
			query := n
			if r.Model == "m2" && n == 5 {
				query = 50
			}
			return fakellm.ToolCall("c1", "search", fmt.Sprintf(`{"query":"fact %d"}`, query))
		}
		if r.Model == "m2" && (n == 3 || n == 7) {
			return fakellm.Text("unsure")
		}
		if strings.Contains(all, "Be brief.") {
			return fakellm.Text(fmt.Sprintf("brief %d", n))
		}
		return fakellm.Text(fmt.Sprintf("answer %d", n))
	}
	cfg := activities.Config{OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "m1"}
	startWorkerWithConfig(t, queue, cfg, map[string]activities.Handler{
		"search": func(_ context.Context, in map[string]any) (any, *toolspec.Usage, error) {
			searches.Add(1)
			return map[string]any{"results": []any{map[string]any{"text": fmt.Sprintf("fact-v%d about %v", version.Load(), in["query"])}}}, nil, nil
		},
	})

	dir := t.TempDir()
	file := filepath.Join(dir, "replayqa.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name": "replayqa", "inputs": {"n": {"type": "number", "required": true}},
  "defaults": {"collection": "docs"},
  "steps": [
    {"id": "background", "tool": "search", "inputs": {"query": "background {{ inputs.n }}"}},
    {"id": "helper", "tool": "agent", "inputs": {"prompt": "Question {{ inputs.n }}. Background: {{ background.output }}", "tools": ["search"], "maxIterations": 4}}],
  "output": {"text": "{{ helper.output.text }}"}}`), 0o644))
	var lines []string
	for n := 1; n <= 10; n++ {
		lines = append(lines, fmt.Sprintf(`{"name":"q%02d","inputs":{"n":%d},"expect":{"path":"text","equals":"answer %d","tools":["search"],"maxToolCalls":1}}`, n, n, n))
	}
	data := filepath.Join(dir, "record.jsonl")
	require.NoError(t, os.WriteFile(data, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	recorded := filepath.Join(dir, "recorded.json")
	code, out, errOut := weft(t, queue, "eval", file, "--dataset", data, "--report", recorded, "--reports-dir", "off", "--concurrency", "5")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "10/10 passed")
	var rec report.Report
	b, err := os.ReadFile(recorded)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rec))
	require.EqualValues(t, 20, searches.Load(), "a search step and one agent call per case")

	// The tool changes: a live search would now answer fact-v2. The replay reads the record.
	version.Store(2)
	before, requests := searches.Load(), fake.Count()
	lines = lines[:0]
	ids := map[string]string{}
	for _, cs := range rec.Cases {
		ids[cs.Name] = cs.RunID
		n, _ := strconv.Atoi(strings.TrimPrefix(cs.Name, "q"))
		lines = append(lines, fmt.Sprintf(`{"name":%q,"replay":%q,"expect":{"path":"text","equals":"answer %d","tools":["search"],"toolOrder":["search"],"maxToolCalls":1}}`, cs.Name, cs.RunID, n))
	}
	replays := filepath.Join(dir, "replay.jsonl")
	require.NoError(t, os.WriteFile(replays, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	start := time.Now()
	code, out, errOut = weft(t, queue, "eval", file, "--dataset", replays, "--model", "m2", "--reports-dir", "off", "--concurrency", "5", "--report", filepath.Join(dir, "replayed.json"))
	took := time.Since(start)
	t.Logf("10 recorded cases replayed with model m2 in %v:\n%s", took, out)
	require.Equal(t, 1, code, out+errOut)
	require.Contains(t, errOut, "2 of 10 cases failed")
	require.Contains(t, out, "8/10 passed")
	require.Contains(t, out, "replays: 10, model answers changed in 2, tool drift in 1")
	require.Equal(t, before, searches.Load(), "no search ran: the step's output and the agent's results came from the record")
	var rep report.Report
	b, err = os.ReadFile(filepath.Join(dir, "replayed.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Equal(t, 10, rep.Summary.Replayed)
	require.Equal(t, 2, rep.Summary.ModelChanged)
	require.Equal(t, 1, rep.Summary.Drifted)
	for _, cs := range rep.Cases {
		r := cs.Replay
		require.NotNil(t, r, cs.Name)
		require.Equal(t, ids[cs.Name], r.From)
		require.Equal(t, "m2", r.Model)
		require.Equal(t, []string{"background"}, r.Reused, cs.Name)
		require.Equal(t, []report.ReplayStep{{ID: "helper", Why: "a model step"}}, r.Live)
		require.Equal(t, 1, r.RecordedCalls)
		require.Contains(t, cs.RunID, ids[cs.Name]+"-replay-")
		switch cs.Name {
		case "q03", "q07":
			require.False(t, cs.Pass)
			require.Len(t, r.Changed, 1)
			require.Equal(t, "helper", r.Changed[0].Step)
			require.Equal(t, "answer "+strings.TrimPrefix(strings.TrimPrefix(cs.Name, "q"), "0"), r.Changed[0].Was)
			require.Equal(t, "unsure", r.Changed[0].Now)
			require.Empty(t, r.Drift, "a model regression, not drift")
			require.Equal(t, 1, r.FromRecord)
		case "q05":
			require.True(t, cs.Pass, "the graders pass; the drift is reported: %+v", cs.Grades)
			require.Empty(t, r.Changed)
			require.Len(t, r.Drift, 1)
			require.Equal(t, report.Drift{Step: "helper", Tool: "search", Arguments: map[string]any{"query": "fact 50"}, Why: runwire.ToolDrift}, r.Drift[0])
			require.Equal(t, 0, r.FromRecord)
		default:
			require.True(t, cs.Pass, "%s: %+v", cs.Name, cs.Grades)
			require.Empty(t, r.Changed)
			require.Empty(t, r.Drift)
			require.Equal(t, 1, r.FromRecord)
		}
		graders := []string{}
		for _, g := range cs.Grades {
			graders = append(graders, g.Grader)
		}
		require.Equal(t, []string{"equals", "tools", "toolOrder", "maxToolCalls"}, graders)
	}
	// The model read the recorded results (fact-v1), and the drift as the tool's error.
	var m2 int
	for _, r := range fake.Requests()[requests:] {
		require.Equal(t, "m2", r.Model)
		m2++
		all := fmt.Sprint(r.Messages)
		require.NotContains(t, all, "fact-v2")
		if strings.Contains(all, "role:tool") && !strings.Contains(all, "Question 5.") {
			require.Contains(t, all, "fact-v1 about fact")
		}
		if strings.Contains(all, "Question 5.") && strings.Contains(all, "role:tool") {
			require.Contains(t, all, "error: "+runwire.ToolDrift)
		}
	}
	require.Equal(t, 20, m2, "two model turns per case, all against m2")

	// Without FILE: the runs' own definitions; the same model answers as recorded.
	code, out, errOut = weft(t, queue, "eval", "--replay-runs", ids["q01"]+","+ids["q02"], "--reports-dir", "off")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "eval replayqa on replays: 2 cases")
	require.Contains(t, out, "replay of "+ids["q01"]+": 1 step from the record, 1 live; 1 of 1 recorded tool call answered")
	require.Contains(t, out, "model answers: unchanged")
	require.Equal(t, before, searches.Load())

	// A changed prompt: FILE is the new definition, its steps matched with the record's by id.
	changed := filepath.Join(dir, "replayqa-brief.json")
	def, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(changed, []byte(strings.Replace(string(def), `Background: {{ background.output }}`, `Background: {{ background.output }} Be brief.`, 1)), 0o644))
	code, out, errOut = weft(t, queue, "eval", changed, "--replay-runs", ids["q04"], "--reports-dir", "off")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, `model answer of helper changed: "answer 4" -> "brief 4"`)
	require.Equal(t, before, searches.Load())

	// --replay-since: the workflow's runs that completed lately, newest first, replays left out.
	code, out, errOut = weft(t, queue, "eval", file, "--replay-since", "1h", "--replay-limit", "3", "--reports-dir", "off", "--json")
	require.Equal(t, 0, code, out+errOut)
	var since report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &since))
	require.Len(t, since.Cases, 3)
	for _, cs := range since.Cases {
		require.NotContains(t, cs.Replay.From, "-replay-")
		require.NotEmpty(t, nameOf(ids, cs.Replay.From), "%s is one of the recorded runs", cs.Replay.From)
	}
	require.Equal(t, before, searches.Load())
}

// nameOf is the case name whose recorded run is id ("" when none).
func nameOf(ids map[string]string, id string) string {
	for name, run := range ids {
		if run == id {
			return name
		}
	}
	return ""
}
