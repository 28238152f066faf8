package console_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/templates"
)

// TestBuilderBackgroundPansEverywhere: a drag that starts anywhere on the canvas's background
// pans the view (Drawflow's translate moves by the drag), over a grid of points on approval-demo
// as opened, a 100-step file at Fit, that file zoomed in and approval-demo zoomed out. Drawflow
// tells a press on the background by the target's first class; the canvas's own class came first,
// so only presses on the precanvas's transformed box panned (57% of approval-demo's background,
// 8% of the 100-step file's at Fit, 0% at 81%).
func TestBuilderBackgroundPansEverywhere(t *testing.T) {
	tpl, err := templates.Get("approval-demo")
	require.NoError(t, err)
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil))
	for _, tc := range []struct {
		name, file string
		zoom       string // a button pressed after Fit, twice
	}{
		{"approval-demo", string(tpl.Data), ""},
		{"100 steps at Fit", hundredStepFile(), ""},
		{"100 steps zoomed in", hundredStepFile(), "#b-zoom-in"},
		{"approval-demo zoomed out", string(tpl.Data), "#b-zoom-out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run(t, ctx, "import", chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'f.json')`, mustJS(tc.file)), nil),
				chromedp.Click(`#b-fit`))
			if tc.zoom != "" {
				run(t, ctx, "zoom", chromedp.Click(tc.zoom), chromedp.Click(tc.zoom))
			}
			// 30 points, 60 px in from the sides and 50 from the top and bottom: a drag of (±40, ±25)
			// starts and ends on the canvas
			var grid [][2]float64
			run(t, ctx, "grid", chromedp.Evaluate(`(() => {
			  const c = document.getElementById('b-canvas').getBoundingClientRect(), out = [];
			  for (let i = 0; i < 6; i++) for (let j = 0; j < 5; j++) out.push([c.left + 60 + (c.width - 120) * i / 5, c.top + 50 + (c.height - 100) * j / 4]);
			  return out; })()`, &grid))
			var view struct{ Zoom, X, Y float64 }
			run(t, ctx, "view", chromedp.Evaluate(`window.__weftBuilder.view()`, &view))
			zoom := view.Zoom
			tried, panned := 0, 0
			for i, p := range grid {
				var background bool
				run(t, ctx, "what is there", chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.elementFromPoint(%f, %f), c = document.getElementById('b-canvas');
				  return e === c || e === c.querySelector(':scope > .drawflow'); })()`, p[0], p[1]), &background))
				if !background {
					continue // a step or a link: a drag there moves it
				}
				dx, dy := 40.0, 25.0
				if i%2 == 1 {
					dx, dy = -40, -25 // back again, so the view stays about where Fit put it
				}
				var before, after struct{ Zoom, X, Y float64 }
				run(t, ctx, "drag the background", chromedp.Evaluate(`window.__weftBuilder.view()`, &before),
					dragMouse(p[0], p[1], p[0]+dx, p[1]+dy), chromedp.Evaluate(`window.__weftBuilder.view()`, &after))
				tried++
				if math.Abs(after.X-before.X-dx) < 1 && math.Abs(after.Y-before.Y-dy) < 1 {
					panned++
				} else {
					t.Logf("a drag from (%.0f, %.0f) moved the view by (%.1f, %.1f), not (%.0f, %.0f)", p[0], p[1], after.X-before.X, after.Y-before.Y, dx, dy)
				}
			}
			t.Logf("%s at %.0f%%: %d of %d background points pan", tc.name, zoom*100, panned, tried)
			require.Greater(t, tried, len(grid)/3, "most of the grid is background")
			require.Equal(t, tried, panned, "a drag anywhere on the background pans")
		})
	}
}

// TestBuilderEnterOpensTheFormWithoutRenaming: Enter on a focused step opens its form with the
// focus on the form's heading (the step's name), not in the id field: keys typed next rename
// nothing, and Tab goes on to the id field.
func TestBuilderEnterOpensTheFormWithoutRenaming(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	file := `{"name":"two","steps":[{"id":"first","tool":"template","inputs":{"text":"a"}},{"id":"second","tool":"template","inputs":{"text":"{{ first.output.text }}"}}]}`
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'two.json')`, mustJS(file)), nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="second"]`))
	var active struct{ ID, Tag, Text string }
	const activeJS = `(() => { const a = document.activeElement; return { ID: a.id, Tag: a.tagName, Text: a.textContent }; })()`
	run(t, ctx, "Enter on a step", chromedp.Focus(`.drawflow-node[data-step="second"]`), chromedp.KeyEvent("\r"),
		chromedp.Poll(`document.activeElement && document.activeElement.closest('#b-inspector') !== null`, nil),
		chromedp.Evaluate(activeJS, &active))
	require.Equal(t, "f-heading", active.ID, "the focus is on the form's heading, not in a field")
	require.Equal(t, "H2", active.Tag)
	require.Equal(t, "second", active.Text, "which names the step")
	run(t, ctx, "type, then Tab", chromedp.KeyEvent("xyz"), chromedp.KeyEvent("\t"), chromedp.Evaluate(activeJS, &active))
	require.Equal(t, "f-step-id", active.ID, "Tab goes on to the id field")
	var ids []string
	run(t, ctx, "ids", chromedp.Evaluate(`JSON.parse(window.__weftBuilder.exportText()).steps.map((s) => s.id)`, &ids))
	require.Equal(t, []string{"first", "second"}, ids, "typing after Enter renamed no step")
}

// TestBuilderArrangeLaysTheStepsOut: after steps are dragged about, Arrange puts every step back
// where opening the file laid it out (columns by dependency depth) and fits the view to them; Undo
// takes the arrangement back.
func TestBuilderArrangeLaysTheStepsOut(t *testing.T) {
	tpl, err := templates.Get("approval-demo")
	require.NoError(t, err)
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	const where = `Object.fromEntries([...document.querySelectorAll('#b-canvas .drawflow-node')].map((n) => [n.dataset.step, [parseFloat(n.style.left), parseFloat(n.style.top)]]))`
	var opened, moved, arranged, undone map[string][2]float64
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'f.json')`, mustJS(string(tpl.Data))), nil),
		chromedp.Click(`#b-fit`), chromedp.Evaluate(where, &opened))
	require.Greater(t, len(opened), 2)
	// drag the first two steps to the canvas's lower left and upper right
	var ids []string
	run(t, ctx, "ids", chromedp.Evaluate(`[...document.querySelectorAll('#b-canvas .drawflow-node')].map((n) => n.dataset.step)`, &ids))
	var box struct{ Left, Top, Right, Bottom float64 }
	run(t, ctx, "canvas", chromedp.Evaluate(`(() => { const r = document.getElementById('b-canvas').getBoundingClientRect(); return { Left: r.left, Top: r.top, Right: r.right, Bottom: r.bottom }; })()`, &box))
	for i, to := range [][2]float64{{box.Left + 120, box.Bottom - 60}, {box.Right - 130, box.Top + 60}} {
		x, y := center(t, ctx, fmt.Sprintf(`.drawflow-node[data-step=%q] .b-node-title`, ids[i]))
		run(t, ctx, "move "+ids[i], dragMouse(x, y, to[0], to[1]))
	}
	run(t, ctx, "moved", chromedp.Evaluate(where, &moved))
	require.NotEqual(t, opened, moved, "the drags moved steps")

	var outside int
	run(t, ctx, "Arrange", chromedp.Click(`#b-arrange`),
		chromedp.Poll(fmt.Sprintf(`(() => { const w = %s, o = %s; return Object.keys(o).every((k) => w[k] && w[k][0] === o[k][0] && w[k][1] === o[k][1]); })()`, where, jsonOf(t, opened)), nil),
		chromedp.Evaluate(where, &arranged),
		chromedp.Evaluate(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => {
		  const c = document.getElementById('b-canvas').getBoundingClientRect(); let out = 0;
		  document.querySelectorAll('#b-canvas .drawflow-node').forEach((n) => { const b = n.getBoundingClientRect();
		    if (b.left < c.left - 1 || b.right > c.right + 1 || b.top < c.top - 1 || b.bottom > c.bottom + 1) out++; });
		  r(out); })))`, &outside, awaitPromise))
	require.Equal(t, opened, arranged, "Arrange lays the steps out as opening the file did")
	require.Zero(t, outside, "and fits them on the canvas")
	run(t, ctx, "undo", chromedp.Click(`#b-undo`), chromedp.Evaluate(where, &undone))
	require.Equal(t, moved, undone, "Undo takes the arrangement back")
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestBuilderSelectCopyPaste: Shift+click selects a second step with the open one; Ctrl+C copies
// them and Ctrl+V adds copies with new ids, the copy of the second reading the copy of the first
// (and a step outside the copy as before), all as one undo step; a plain click on the background
// clears the selection; Ctrl+A on the canvas selects every step; Shift+Enter on a focused step
// selects it; Delete on a selected step removes every selected one.
func TestBuilderSelectCopyPaste(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	file := `{"name":"three","steps":[{"id":"a","tool":"template","inputs":{"text":"start"}},` +
		`{"id":"b","tool":"template","inputs":{"text":"{{ a.output.text }}"}},` +
		`{"id":"c","tool":"template","inputs":{"text":"{{ b.output.text }} {{ a.output.text }}"}}]}`
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'three.json')`, mustJS(file)), nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="c"]`))
	picked := func() []string {
		var ids []string
		run(t, ctx, "picked", chromedp.Evaluate(`[...document.querySelectorAll('#b-canvas .drawflow-node.b-picked')].map((n) => n.dataset.step)`, &ids))
		return ids
	}
	inputsOf := func() map[string]string {
		out := map[string]string{}
		for _, s := range exported(t, ctx)["steps"].([]any) {
			m := s.(map[string]any)
			out[m["id"].(string)] = m["inputs"].(map[string]any)["text"].(string)
		}
		return out
	}
	bx, by := center(t, ctx, `.drawflow-node[data-step="b"] .b-node-title`)
	cx, cy := center(t, ctx, `.drawflow-node[data-step="c"] .b-node-title`)
	run(t, ctx, "click b, Shift+click c", chromedp.MouseClickXY(bx, by), chromedp.WaitVisible(`#f-heading`),
		chromedp.MouseClickXY(cx, cy, chromedp.ButtonModifiers(input.ModifierShift)))
	require.ElementsMatch(t, []string{"b", "c"}, picked(), "Shift+click adds c to b, whose form was open")
	var label string
	run(t, ctx, "c's name", chromedp.AttributeValue(`.drawflow-node[data-step="c"]`, "aria-label", &label, nil))
	require.Contains(t, label, "in the selection", "the selection is in a step's accessible name, not only its outline")

	run(t, ctx, "Ctrl+C, Ctrl+V", chromedp.KeyEvent("c", chromedp.KeyModifiers(input.ModifierCtrl)),
		chromedp.KeyEvent("v", chromedp.KeyModifiers(input.ModifierCtrl)),
		chromedp.WaitVisible(`.drawflow-node[data-step="c_2"]`))
	require.Equal(t, map[string]string{
		"a": "start", "b": "{{ a.output.text }}", "c": "{{ b.output.text }} {{ a.output.text }}",
		"b_2": "{{ a.output.text }}", "c_2": "{{ b_2.output.text }} {{ a.output.text }}",
	}, inputsOf(), "the copy of c reads the copy of b, and a as c does")
	require.ElementsMatch(t, []string{"b_2", "c_2"}, picked(), "the pasted steps are the selection")
	var moved bool
	run(t, ctx, "offset", chromedp.Evaluate(`(() => { const p = window.__weftBuilder.positions(); return p.b_2.x === p.b.x + 40 && p.c_2.y === p.c.y + 40; })()`, &moved))
	require.True(t, moved, "pasted 40 px right and down of the copied steps")

	run(t, ctx, "undo the paste", chromedp.Click(`#b-undo`), chromedp.WaitNotPresent(`.drawflow-node[data-step="b_2"]`))
	require.Len(t, inputsOf(), 3, "the paste is one undo step")
	run(t, ctx, "redo", chromedp.Click(`#b-redo`), chromedp.WaitVisible(`.drawflow-node[data-step="c_2"]`))

	// a click on the background clears the selection
	var bg [2]float64
	run(t, ctx, "a background point", chromedp.Evaluate(`(() => { const c = document.getElementById('b-canvas').getBoundingClientRect();
	  for (let y = c.top + 20; y < c.bottom - 20; y += 10) for (let x = c.left + 20; x < c.right - 20; x += 10) {
	    const e = document.elementFromPoint(x, y); if (e === document.getElementById('b-canvas') || e.classList.contains('drawflow')) return [x, y]; }
	  return [0, 0]; })()`, &bg))
	require.NotZero(t, bg[0])
	run(t, ctx, "click the background", chromedp.MouseClickXY(bg[0], bg[1]))
	require.Empty(t, picked(), "a click on the background clears the selection")
	run(t, ctx, "c's name", chromedp.AttributeValue(`.drawflow-node[data-step="c"]`, "aria-label", &label, nil))
	require.NotContains(t, label, "in the selection")

	// Ctrl+A on the canvas selects every step; a click on the background clears them again
	run(t, ctx, "Ctrl+A", chromedp.Focus(`.drawflow-node[data-step="a"]`), chromedp.KeyEvent("a", chromedp.KeyModifiers(input.ModifierCtrl)))
	require.ElementsMatch(t, []string{"a", "b", "c", "b_2", "c_2"}, picked(), "Ctrl+A on the canvas selects every step")
	run(t, ctx, "click the background", chromedp.MouseClickXY(bg[0], bg[1]))
	require.Empty(t, picked())

	// Shift+Enter on a focused step selects it too; Delete on one of several selected removes them all
	run(t, ctx, "Shift+Enter on b_2", chromedp.Focus(`.drawflow-node[data-step="b_2"]`), chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(input.ModifierShift)))
	require.Equal(t, []string{"b_2"}, picked(), "Shift+Enter selects the focused step")
	c2x, c2y := center(t, ctx, `.drawflow-node[data-step="c_2"] .b-node-title`)
	run(t, ctx, "Shift+click c_2, Delete", chromedp.MouseClickXY(c2x, c2y, chromedp.ButtonModifiers(input.ModifierShift)),
		chromedp.Poll(`document.querySelectorAll('#b-canvas .drawflow-node.b-picked').length === 2`, nil),
		chromedp.KeyEvent(kb.Delete), chromedp.WaitNotPresent(`.drawflow-node[data-step="b_2"]`), chromedp.WaitNotPresent(`.drawflow-node[data-step="c_2"]`))
	require.Len(t, inputsOf(), 3, "Delete removed both selected steps")
}

// TestBuilderPanReleasedOffTheCanvas: a background drag released off the canvas (over the
// palette) ends there: the view keeps the whole drag, and moving the mouse over the canvas
// afterwards, no button pressed, does not pan it further.
func TestBuilderPanReleasedOffTheCanvas(t *testing.T) {
	tpl, err := templates.Get("approval-demo")
	require.NoError(t, err)
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'f.json')`, mustJS(string(tpl.Data))), nil),
		chromedp.Click(`#b-fit`))
	var p struct{ X, Y, PaletteX float64 }
	run(t, ctx, "a background point", chromedp.Evaluate(`(() => { const c = document.getElementById('b-canvas').getBoundingClientRect();
	  const pal = document.querySelector('.b-palette').getBoundingClientRect();
	  for (let y = c.top + 20; y < c.bottom - 20; y += 10) for (let x = c.left + 20; x < c.left + 200; x += 10) {
	    const e = document.elementFromPoint(x, y); if (e === document.getElementById('b-canvas') || e.classList.contains('drawflow')) return { X: x, Y: y, PaletteX: pal.left + pal.width / 2 }; }
	  return { X: 0, Y: 0, PaletteX: 0 }; })()`, &p))
	require.NotZero(t, p.X)
	type view struct{ Zoom, X, Y float64 }
	const drawn = `(() => { const m = /translate\(([-\d.e]+)px, ([-\d.e]+)px\)/.exec(document.querySelector('#b-canvas > .drawflow').style.transform); return { Zoom: 0, X: +m[1], Y: +m[2] }; })()`
	var before, after, shown, later view
	run(t, ctx, "drag onto the palette", chromedp.Evaluate(`window.__weftBuilder.view()`, &before),
		dragMouse(p.X, p.Y, p.PaletteX, p.Y+30), chromedp.Evaluate(`window.__weftBuilder.view()`, &after), chromedp.Evaluate(drawn, &shown))
	require.InDelta(t, p.PaletteX-p.X, after.X-before.X, 1, "the view keeps the whole drag")
	require.InDelta(t, 30, after.Y-before.Y, 1)
	require.InDelta(t, after.X, shown.X, 1, "and is what is drawn")
	run(t, ctx, "move over the canvas, no button", chromedp.MouseEvent(input.MouseMoved, p.X+100, p.Y+50), chromedp.MouseEvent(input.MouseMoved, p.X+150, p.Y+80),
		chromedp.Evaluate(drawn, &later))
	require.InDelta(t, after.X, later.X, 1, "a move without a button does not pan")
	require.InDelta(t, after.Y, later.Y, 1)
}

// TestBuilderSelectedStepsMoveTogether: of several selected steps, dragging one moves them all as
// far, and a step not selected stays.
func TestBuilderSelectedStepsMoveTogether(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	file := `{"name":"three","steps":[{"id":"a","tool":"template","inputs":{"text":"start"}},` +
		`{"id":"b","tool":"template","inputs":{"text":"{{ a.output.text }}"}},` +
		`{"id":"c","tool":"template","inputs":{"text":"{{ b.output.text }}"}}]}`
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'three.json')`, mustJS(file)), nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="c"]`))
	type xy struct{ X, Y float64 }
	var before, after map[string]xy
	var zoom float64
	const drawn = `Object.fromEntries([...document.querySelectorAll('#b-canvas .drawflow-node')].map((n) => [n.dataset.step, { X: parseFloat(n.style.left), Y: parseFloat(n.style.top) }]))`
	bx, by := center(t, ctx, `.drawflow-node[data-step="b"] .b-node-title`)
	cx, cy := center(t, ctx, `.drawflow-node[data-step="c"] .b-node-title`)
	run(t, ctx, "select b and c", chromedp.MouseClickXY(bx, by), chromedp.WaitVisible(`#f-heading`),
		chromedp.MouseClickXY(cx, cy, chromedp.ButtonModifiers(input.ModifierShift)),
		chromedp.Poll(`document.querySelectorAll('#b-canvas .drawflow-node.b-picked').length === 2`, nil),
		chromedp.Evaluate(`window.__weftBuilder.positions()`, &before), chromedp.Evaluate(`window.__weftBuilder.view().zoom`, &zoom))
	run(t, ctx, "drag b", dragMouse(bx, by, bx+60, by+40), chromedp.Evaluate(`window.__weftBuilder.positions()`, &after))
	moved := func(id string) xy { return xy{after[id].X - before[id].X, after[id].Y - before[id].Y} }
	require.InDelta(t, 60/zoom, moved("b").X, 1, "b moved with the mouse")
	require.InDelta(t, 40/zoom, moved("b").Y, 1)
	require.Equal(t, moved("b"), moved("c"), "c, selected with it, moved as far")
	require.Equal(t, xy{}, moved("a"), "a, not selected, stayed")
	var shown map[string]xy
	run(t, ctx, "drawn", chromedp.Evaluate(drawn, &shown))
	require.Equal(t, after, shown, "where the steps are drawn is where the builder keeps them")
}

// TestBuilderUndoAMove: a step moved by dragging is an undo step of its own: Undo puts it back
// (and leaves the file as it was), Redo moves it again.
func TestBuilderUndoAMove(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	file := `{"name":"two","steps":[{"id":"a","tool":"template","inputs":{"text":"start"}},{"id":"b","tool":"template","inputs":{"text":"{{ a.output.text }}"}}]}`
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'two.json')`, mustJS(file)), nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="b"]`))
	type xy struct{ X, Y float64 }
	var opened, moved, undone, redone map[string]xy
	run(t, ctx, "where", chromedp.Evaluate(`window.__weftBuilder.positions()`, &opened))
	bx, by := center(t, ctx, `.drawflow-node[data-step="b"] .b-node-title`)
	run(t, ctx, "move b", dragMouse(bx, by, bx+50, by+70), chromedp.Evaluate(`window.__weftBuilder.positions()`, &moved))
	require.NotEqual(t, opened["b"], moved["b"])
	run(t, ctx, "undo", chromedp.Click(`#b-undo`), chromedp.Evaluate(`window.__weftBuilder.positions()`, &undone))
	require.Equal(t, opened, undone, "Undo puts the step back")
	require.Len(t, exported(t, ctx)["steps"], 2, "and leaves the file as it was")
	run(t, ctx, "redo", chromedp.Click(`#b-redo`), chromedp.Evaluate(`window.__weftBuilder.positions()`, &redone))
	require.Equal(t, moved, redone, "Redo moves it again")
}
