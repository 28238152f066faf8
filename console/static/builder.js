// weft visual builder. The canvas (drag, handles, zoom, pan) is Drawflow (static/vendor/drawflow,
// pinned, MIT); everything else is here. The workflow file is the model: the builder edits the
// parsed object in place and exports it as it is, so a file imported and exported unchanged is
// the same JSON, and fields the builder has no form for (mcp, schedule, branding, ...) survive.
// Layout positions are not part of the file. Every value is put into the page with textContent
// or setAttribute, never as HTML; the palette and the forms come from the registry the page is given (console.Tools).
(() => {
  'use strict';
  const root = document.getElementById('builder');
  if (!root) return;
  const canvas = document.getElementById('b-canvas');
  const boot = JSON.parse(root.dataset.builder || '{}');
  const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || '';
  const tools = new Map((boot.tools || []).map((t) => [t.name, t]));
  const ID = /^[a-z][a-z0-9_]*$/;
  const NODE_W = 190, NODE_H = 64, COL = 250, ROW = 100, PAD = 40;

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const k of kids.flat(Infinity)) {
      if (k === null || k === undefined || k === false) continue;
      e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    }
    return e;
  }
  // call sends a request to the console (/v1, or one of its own routes) and answers its JSON; a
  // refusal throws an Error with /v1's problem details (RFC 9457) in words (or the console's own
  // {error}), its status and its problem type.
  async function call(method, url, body) {
    const o = { method, credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf } };
    if (method !== 'GET') { o.headers['Content-Type'] = 'application/json'; o.body = JSON.stringify(body || {}); }
    const r = await fetch(url, o);
    const j = await r.json().catch(() => ({ error: r.statusText }));
    if (!r.ok) {
      const fields = (j.errors || []).map((e) => e.detail).filter((d) => d && d !== j.detail);
      const err = new Error(j.error || [j.detail || j.title, ...fields].filter(Boolean).join('; ') || r.statusText);
      err.status = r.status;
      err.type = j.type || '';
      throw err;
    }
    return j;
  }
  const post = (url, body) => call('POST', url, body);
  const get = (url) => call('GET', url);
  const clone = (v) => JSON.parse(JSON.stringify(v));
  function fill(target, ...kids) { target.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined && k !== false)); }
  const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  const types = (schema) => (schema && schema.type ? [].concat(schema.type) : []);

  // ---- the model ----
  let doc = { name: 'new-workflow', steps: [] };
  let pos = {}; // step id -> {x, y}: layout only, never exported
  let selected = null; // a step id, or null for the workflow's settings
  const picked = new Set(); // the steps selected together (Shift+click), for copy and Delete
  let clip = null, pastes = 0; // the steps copied, and how many times they were pasted
  let fileName = boot.name || 'workflow';
  let problems = []; // the last validation's diagnostics
  let checked = null; // the file as that validation read it
  const undo = [], redo = [];
  let lastCommit = { key: '', at: 0 };

  const steps = () => (Array.isArray(doc.steps) ? doc.steps : []);
  const stepById = (id) => steps().find((s) => s && s.id === id);
  const isFlow = () => !Array.isArray(doc.steps) && Array.isArray(doc.nodes);
  // orig is the text last imported and origVal its parse: the export changes only what differs
  // from it, an edit per changed path applied to that text with jsonc-parser (static/vendor,
  // Microsoft's, VS Code's), so the file's own formatting and key order stay, an unchanged file
  // is exported byte for byte, and a one-field change is a one-line diff. A file not imported
  // (a new one), or an export that would not parse back to the model, is written out afresh.
  let orig = null, origVal = null;
  function exportText() {
    const fresh = () => JSON.stringify(doc, null, 2) + '\n';
    const jp = window.jsoncParser;
    if (orig === null || !jp) return fresh();
    try {
      const out = patched(jp, orig, origVal, doc);
      return same(JSON.parse(out), doc) ? out : fresh();
    } catch (err) { return fresh(); }
  }
  function same(a, b) {
    if (a === b) return true;
    if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
    if (isObj(a)) {
      if (!isObj(b)) return false;
      const ka = Object.keys(a), kb = Object.keys(b);
      return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
    }
    return false;
  }
  function patched(jp, text, from, to) {
    const m = /\n([ \t]+)\S/.exec(text);
    const indent = m ? m[1] : '  ';
    const opts = { formattingOptions: { insertSpaces: !indent.includes('\t'), tabSize: indent.includes('\t') ? 1 : indent.length, eol: text.includes('\r\n') ? '\r\n' : '\n' } };
    const put = (path, value, insert) => { text = jp.applyEdits(text, jp.modify(text, path, value, insert ? { ...opts, isArrayInsertion: true } : opts)); };
    const ided = (arr) => arr.every((x) => isObj(x) && typeof x.id === 'string') && new Set(arr.map((x) => x.id)).size === arr.length;
    function walk(a, b, path) {
      if (same(a, b)) return;
      if (isObj(a) && isObj(b)) {
        for (const k of Object.keys(a)) if (!Object.prototype.hasOwnProperty.call(b, k)) put([...path, k], undefined);
        for (const k of Object.keys(b)) {
          if (Object.prototype.hasOwnProperty.call(a, k)) walk(a[k], b[k], [...path, k]);
          else put([...path, k], b[k]);
        }
        return;
      }
      if (Array.isArray(a) && Array.isArray(b) && path.length) {
        if (ided(a) && ided(b)) { // steps: matched by id; removed ones deleted, new ones inserted where they are
          const inB = new Set(b.map((x) => x.id)), inA = new Map(a.map((x) => [x.id, x]));
          const kept = a.filter((x) => inB.has(x.id)).map((x) => x.id);
          if (kept.join('\n') === b.filter((x) => inA.has(x.id)).map((x) => x.id).join('\n')) {
            for (let i = a.length - 1; i >= 0; i--) if (!inB.has(a[i].id)) put([...path, i], undefined);
            b.forEach((x, i) => { if (inA.has(x.id)) walk(inA.get(x.id), x, [...path, i]); else put([...path, i], x, true); });
            return;
          }
        } else {
          const n = Math.min(a.length, b.length);
          for (let i = a.length - 1; i >= n; i--) put([...path, i], undefined);
          for (let i = 0; i < n; i++) walk(a[i], b[i], [...path, i]);
          for (let i = n; i < b.length; i++) put([...path, i], b[i], true);
          return;
        }
      }
      if (!path.length) throw new Error('the file is not an object');
      put(path, b);
    }
    walk(from, to, []);
    return text;
  }

  // commit records the state before a change (for undo) and then makes it. Changes of one field
  // typed in quick succession are one undo step.
  function commit(key, change) {
    const now = Date.now();
    if (!(key && key === lastCommit.key && now - lastCommit.at < 1500)) {
      undo.push(JSON.stringify({ doc, pos }));
      if (undo.length > 200) undo.shift();
      redo.length = 0;
    }
    lastCommit = { key, at: now };
    change();
    changed();
  }
  function restore(from, to) {
    // an edge drawn and waiting in the chooser is the last thing done: Undo takes it back (and
    // nothing else); Redo drops it too, then redoes. A way picked later would link steps of a file
    // that is not there any more.
    if (cancelAsk) {
      cancelAsk();
      if (from === undo) return;
    }
    if (!from.length) return;
    to.push(JSON.stringify({ doc, pos }));
    const s = JSON.parse(from.pop());
    doc = s.doc; pos = s.pos;
    lastCommit = { key: '', at: 0 };
    if (selected && !stepById(selected)) selected = null;
    changed();
    inspect();
  }

  // ---- references: what a step reads, as the DSL writes it ({{ step.output.field }}) ----
  function strings(v, out) {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach((x) => strings(x, out));
    else if (isObj(v)) Object.values(v).forEach((x) => strings(x, out));
    return out;
  }
  function refPattern(id) { return new RegExp(`(^|[^A-Za-z0-9_.])${id}\\s*\\.\\s*(output|status|error)\\b`); }
  function reads(step, id) {
    const texts = strings([step.inputs, step.condition, step.forEach], []);
    const re = refPattern(id);
    return texts.some((t) => re.test(t));
  }
  // edges: [from, to, kind] from references, dependsOn and branches (then/else of a branching tool).
  function edges() {
    const out = [], seen = new Set();
    const ids = steps().map((s) => s && s.id).filter((x) => typeof x === 'string');
    const add = (from, to, kind) => {
      const k = `${from}>${to}`;
      if (from === to || seen.has(k) || !ids.includes(from) || !ids.includes(to)) return;
      seen.add(k);
      out.push([from, to, kind]);
    };
    for (const s of steps()) {
      if (!s || typeof s.id !== 'string') continue;
      const spec = tools.get(s.tool);
      if (spec && spec.branches && isObj(s.inputs)) {
        for (const b of ['then', 'else']) for (const t of [].concat(s.inputs[b] || [])) if (typeof t === 'string') add(s.id, t, b);
      }
    }
    for (const s of steps()) {
      if (!s || typeof s.id !== 'string') continue;
      for (const d of [].concat(s.dependsOn || [])) add(d, s.id, 'dependsOn');
      for (const id of ids) if (id !== s.id && reads(s, id)) add(id, s.id, 'data');
    }
    return out;
  }
  function layers() {
    const es = edges();
    const layer = {};
    const ids = steps().map((s) => s.id);
    for (let round = 0; round < ids.length + 1; round++) {
      let moved = false;
      for (const id of ids) {
        const l = Math.max(0, ...es.filter((e) => e[1] === id).map((e) => (layer[e[0]] ?? 0) + 1));
        if (layer[id] !== l && l <= ids.length) { layer[id] = l; moved = true; }
      }
      if (!moved) break;
    }
    return layer;
  }
  // stepsBox is the box around steps placed at ps (canvas coordinates), with the margins Fit leaves
  // (they take in the handles, which stick out of a step's box by about 25 px); null for none.
  function stepsBox(ps, mx = 40, my = 20) {
    if (!ps.length) return null;
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (const p of ps) {
      minX = Math.min(minX, p.x); minY = Math.min(minY, p.y);
      maxX = Math.max(maxX, p.x + NODE_W); maxY = Math.max(maxY, p.y + NODE_H);
    }
    return { x: minX - mx, y: minY - my, width: maxX - minX + 2 * mx, height: maxY - minY + 2 * my };
  }
  const placed = () => Object.entries(pos).filter(([id]) => stepById(id)).map(([, p]) => p);
  // fitZoom is the zoom at which the box b fills a canvas W x H (never above 1)
  const fitZoom = (b, W, H) => (b ? Math.min(1, W / b.width, H / b.height) : 1);

  // place gives every step without a position one (all: every step), on a grid of columns by
  // dependency depth folded to the canvas's shape, so that Fit shows it as large as it can: a
  // column of many steps is split into several, or a long chain of narrow columns is laid out in
  // bands, one under the other. Of the ways to fold it, the one Fit shows largest is taken; the
  // unfolded grid when it fits as well.
  function place(all) {
    const todo = steps().filter((s) => s && typeof s.id === 'string' && (all || !pos[s.id]));
    if (!todo.length) return;
    const layer = layers();
    const cols = []; // the step ids of each dependency depth
    for (const s of steps()) {
      if (!s || typeof s.id !== 'string') continue;
      const l = layer[s.id] || 0;
      (cols[l] = cols[l] || []).push(s.id);
    }
    for (let l = 0; l < cols.length; l++) cols[l] = cols[l] || [];
    const W = canvas.clientWidth || 800, H = canvas.clientHeight || 600;
    const widest = Math.max(1, ...cols.map((c) => c.length));
    // grid lays the columns out with at most rows steps a column and band dependency depths a band
    const grid = (rows, band) => {
      const at = {};
      let x = 0;
      cols.forEach((c, l) => {
        const b = Math.floor(l / band);
        if (l % band === 0) x = 0;
        c.forEach((id, i) => { at[id] = { x: PAD + (x + Math.floor(i / rows)) * COL, y: PAD + (b * (widest + 1) + (i % rows)) * ROW }; });
        x += Math.max(1, Math.ceil(c.length / rows));
      });
      return at;
    };
    const zoomOf = (at) => fitZoom(stepsBox(Object.values(at)), W, H);
    let best = { at: grid(widest, cols.length) };
    best.zoom = zoomOf(best.at);
    const better = (at) => { const zoom = zoomOf(at); if (zoom > best.zoom * 1.01) best = { at, zoom }; };
    for (let rows = 1; rows < widest; rows++) better(grid(rows, cols.length));
    for (let band = 1; band < cols.length; band++) better(grid(widest, band));
    const at = best.at;
    for (const s of todo) pos[s.id] = at[s.id];
  }

  // ---- wiring: what drawing an edge from -> to writes into the file ----
  // boot.wiring is console.Wire for every pair of tools ("from>to"): the ways an edge can be
  // written, best first, ranked from the tools' declared input and output types and the fields
  // they mark as content (the answer, the results; not a finish reason or a status text).
  const wiring = boot.wiring || {};
  // outputRef is what input c.input of a step reads for the candidate c of an edge from from: the
  // output field, the whole output, or the item of a forEach over it.
  function outputRef(from, c) {
    if (c && c.each) return '{{ item }}';
    return `{{ ${from}.output${c && c.output ? '.' + c.output : ''} }}`;
  }
  const sourceRef = (from, c) => `{{ ${from}.output${c.output ? '.' + c.output : ''} }}`;
  // openFor says whether the candidate c can still be written into step b: its input is empty
  // (a list of lists: does not hold the reference yet; each: b has no forEach yet).
  function openFor(b, from, c) {
    const cur = isObj(b.inputs) ? b.inputs[c.input] : undefined;
    if (c.append) return cur === undefined || (Array.isArray(cur) && !cur.includes(sourceRef(from, c)));
    if (c.each && b.forEach !== undefined) return false;
    return cur === undefined || cur === '';
  }
  // choices are the best-ranked ways to write an edge from -> to that are still open: several
  // means the builder asks which.
  function choices(from, to) {
    const a = stepById(from), b = stepById(to);
    if (!a || !b) return [];
    const open = (wiring[`${a.tool}>${b.tool}`] || []).filter((c) => openFor(b, from, c));
    return open.filter((c) => c.rank === open[0].rank);
  }

  // connect writes what drawing an edge from -> to means into the file: the branching step lists
  // the target; otherwise the way c (or the one best way, choices) is written: the reference into
  // the target's input (appended to a list of lists; with each, the target runs per item), and a
  // required input of the same name and type that is still empty reads from's too (also); else
  // the target waits for from (dependsOn).
  function connect(from, to, c) {
    const a = stepById(from), b = stepById(to);
    if (!a || !b || from === to) return 'pick two different steps';
    const sa = tools.get(a.tool);
    if (sa && sa.branches) {
      a.inputs = isObj(a.inputs) ? a.inputs : {};
      const then = [].concat(a.inputs.then || []), els = [].concat(a.inputs.else || []);
      if (then.includes(to) || els.includes(to)) return `${to} is already a branch of ${from}`;
      a.inputs.then = then.concat(to);
      return `${from} runs ${to} when its condition is true (then); move it to else in ${from}'s form`;
    }
    c = c || choices(from, to)[0];
    if (!c) {
      const deps = [].concat(b.dependsOn || []);
      if (!deps.includes(from)) b.dependsOn = deps.concat(from);
      return `${to} waits for ${from} (dependsOn): none of ${from}'s output fits an empty input of ${to}; write a {{ ${from}.output }} reference in ${to}'s form`;
    }
    b.inputs = isObj(b.inputs) ? b.inputs : {};
    const ref = outputRef(from, c);
    const said = [];
    if (c.append) b.inputs[c.input] = [].concat(b.inputs[c.input] || []).concat(sourceRef(from, c));
    else b.inputs[c.input] = ref;
    if (c.each) {
      b.forEach = sourceRef(from, c);
      said.push(`${to} runs once per item of ${b.forEach}, and ${to}.${c.input} reads ${ref}`);
    } else said.push(`wrote ${c.append ? sourceRef(from, c) : ref} into ${to}.${c.input}`);
    for (const o of wiring[`${a.tool}>${b.tool}`] || []) {
      if (!o.also || o.input === c.input || !openFor(b, from, o)) continue;
      b.inputs[o.input] = outputRef(from, o);
      said.push(`${to}.${o.input} reads ${outputRef(from, o)}`);
    }
    return said.join('; ');
  }

  // link connects from -> to as one change, or, when several inputs of to take from's output
  // equally well, asks which (a chooser under the toolbar) and connects when one is picked.
  const askEl = el('div', { id: 'b-ask', class: 'b-ask', role: 'group', 'aria-labelledby': 'b-ask-q', hidden: true });
  let cancelAsk = null; // set while the chooser asks
  function link(from, to) {
    const a = stepById(from);
    const many = a && !(tools.get(a.tool) || {}).branches ? choices(from, to) : [];
    if (many.length < 2) {
      let said = '';
      commit('', () => { said = connect(from, to); });
      if (selected === to || selected === from) inspect(); // the form shows what the edge wrote
      return said;
    }
    const undoBtn = document.getElementById('b-undo');
    const done = (said) => { cancelAsk = null; askEl.hidden = true; askEl.replaceChildren(); undoBtn.disabled = !undo.length; say(said); inspect(); };
    cancelAsk = () => { drawn = ''; changed(); done(`not linked: ${from} → ${to}`); };
    const q = `${to} can read ${from}'s output in ${many.length} ways: which?`;
    fill(askEl, el('span', { id: 'b-ask-q' }, q), ' ',
      many.map((c) => el('button', { type: 'button', class: 'b-ask-way', 'data-input': c.input, onclick: () => {
        let said = '';
        commit('', () => { said = connect(from, to, c); });
        done(said);
      } }, `${to}.${c.input} ← ${c.each ? `each of ${sourceRef(from, c)}` : sourceRef(from, c)}`), ' '),
      el('button', { type: 'button', class: 'b-small', id: 'b-ask-cancel', onclick: () => cancelAsk() }, 'Cancel'));
    if (!askEl.isConnected) sayEl.after(askEl);
    askEl.hidden = false;
    undoBtn.disabled = false; // Undo takes the drawn edge back, even in a file just opened
    askEl.querySelector('button').focus();
    return q;
  }

  // disconnect removes what connect writes: the branch entry, dependsOn, and inputs that are
  // exactly a reference to from. References inside longer text stay, and are reported.
  function disconnect(from, to) {
    const a = stepById(from), b = stepById(to);
    if (!a || !b) return '';
    if (isObj(a.inputs)) {
      for (const br of ['then', 'else']) {
        if (Array.isArray(a.inputs[br]) && a.inputs[br].includes(to)) a.inputs[br] = a.inputs[br].filter((x) => x !== to);
      }
    }
    if (Array.isArray(b.dependsOn)) {
      b.dependsOn = b.dependsOn.filter((x) => x !== from);
      if (!b.dependsOn.length) delete b.dependsOn;
    }
    const re = refPattern(from);
    const only = (v) => typeof v === 'string' && /^\{\{[^{}]*\}\}$/.test(v.trim()) && re.test(v);
    if (isObj(b.inputs)) {
      for (const [k, v] of Object.entries(b.inputs)) {
        if (only(v)) delete b.inputs[k];
        else if (Array.isArray(v) && v.some(only)) b.inputs[k] = v.filter((x) => !only(x));
      }
    }
    if (only(b.forEach)) { // what connect wrote for each item: the forEach and the inputs that read the item
      delete b.forEach;
      if (isObj(b.inputs)) for (const [k, v] of Object.entries(b.inputs)) if (typeof v === 'string' && /^\{\{\s*item\s*\}\}$/.test(v)) delete b.inputs[k];
    }
    return reads(b, from) ? `${to} still refers to ${from} in its text: edit its form to remove that` : `unlinked ${from} → ${to}`;
  }

  // refFixer rewrites the references to step old in a value to step id
  function refFixer(old, id) {
    const re = new RegExp(`(^|[^A-Za-z0-9_.])${old}(\\s*\\.\\s*(?:output|status|error)\\b)`, 'g');
    const fix = (v) => {
      if (typeof v === 'string') return v.replace(re, `$1${id}$2`);
      if (Array.isArray(v)) return v.map(fix);
      if (isObj(v)) { for (const k of Object.keys(v)) v[k] = fix(v[k]); return v; }
      return v;
    };
    return fix;
  }
  // readsRenamed makes step s read (references, dependsOn, branch targets) id where it read old
  function readsRenamed(s, old, id) {
    const fix = refFixer(old, id);
    for (const k of ['inputs', 'condition', 'forEach']) if (s[k] !== undefined) s[k] = fix(s[k]);
    if (Array.isArray(s.dependsOn)) s.dependsOn = s.dependsOn.map((d) => (d === old ? id : d));
    const spec = tools.get(s.tool);
    if (spec && spec.branches && isObj(s.inputs)) {
      for (const b of ['then', 'else']) if (Array.isArray(s.inputs[b])) s.inputs[b] = s.inputs[b].map((d) => (d === old ? id : d));
    }
  }
  function renameStep(old, id) {
    for (const s of steps()) {
      if (s.id === old) s.id = id;
      readsRenamed(s, old, id);
    }
    if (doc.output !== undefined) doc.output = refFixer(old, id)(doc.output);
    pos[id] = pos[old];
    delete pos[old];
    if (selected === old) selected = id;
  }

  function newId(tool) {
    const base = tool.replace(/[^a-z0-9_]/g, '_').replace(/^[^a-z]+/, '') || 'step';
    for (let i = 1; ; i++) {
      const id = i === 1 ? base : `${base}_${i}`;
      if (!stepById(id)) return id;
    }
  }
  // addStep adds a step of tool with the schema's required inputs empty, at p (canvas
  // coordinates) or below the others.
  function addStep(tool, p) {
    const spec = tools.get(tool);
    if (!spec || isFlow()) return null;
    const id = newId(tool);
    commit('', () => {
      if (!Array.isArray(doc.steps)) doc.steps = [];
      doc.steps.push({ id, tool, inputs: {} });
      if (p) pos[id] = p;
      else {
        const ys = Object.values(pos).map((q) => q.y);
        pos[id] = { x: PAD, y: ys.length ? Math.max(...ys) + ROW : PAD };
      }
      selected = id;
    });
    inspect();
    focusNode(id);
    return id;
  }
  function removeStep(id) {
    // Delete on a step of several selected removes them all, as one undo step
    const ids = picked.has(id) && picked.size > 1 ? [...picked] : [id];
    commit('', () => {
      for (const r of ids) {
        for (const s of steps()) if (s.id !== r) disconnect(r, s.id);
        doc.steps = steps().filter((s) => s.id !== r);
        delete pos[r];
        picked.delete(r);
        if (selected === r) selected = null;
      }
    });
    inspect();
    if (ids.length > 1) say(`removed ${ids.length} steps`);
  }

  // ---- the canvas ----
  // eslint-disable-next-line no-undef
  const editor = new Drawflow(canvas);
  editor.reroute = false;
  editor.zoom_min = 0.1;
  editor.zoom_max = 2;
  editor.key = () => {}; // Delete is handled below, only when a node or link has the focus
  editor.contextmenu = (ev) => ev.preventDefault(); // no floating delete button: Delete key or the form's button
  editor.start();
  // Drawflow pans when a press lands on its container or its precanvas, and it tells which by the
  // target's first class (classList[0] is 'parent-drawflow' or 'drawflow'). start() adds
  // 'parent-drawflow' after the page's own 'b-canvas', so a press on the container (all the
  // background outside the precanvas's transformed box) did not pan: put it first.
  canvas.classList.remove('parent-drawflow');
  canvas.className = `parent-drawflow ${canvas.className}`.trim();
  // Drawflow follows the mouse and ends a drag (of the background, a step or a new link) only on
  // its container: a release off the canvas left it dragging, so the view or the step went on
  // following the mouse with no button pressed, and a pan's end was not recorded. Off the canvas
  // the page passes the moves and the release on.
  const gesture = () => editor.editor_selected || editor.drag || editor.connection;
  document.addEventListener('mousemove', (ev) => { if (gesture() && !canvas.contains(ev.target)) editor.position(ev); }, true);
  document.addEventListener('mouseup', (ev) => { if (gesture() && !canvas.contains(ev.target)) editor.dragEnd(ev); }, true);
  let syncing = false;
  const dfOf = new Map(); // step id -> drawflow id
  const stepOf = new Map(); // drawflow id -> step id

  function nodeLabel(s, n) {
    const spec = tools.get(s.tool);
    const what = spec ? `${s.tool} step (${spec.category})` : `step with unknown tool ${s.tool}`;
    const name = s.name && s.name !== s.id ? `${s.name} (${s.id})` : s.id;
    return `${name}, ${what}${s.forEach ? ', forEach' : ''}${s.condition ? ', if' : ''}${n ? `, ${n} problem${n > 1 ? 's' : ''}` : ''}${picked.has(s.id) ? ', in the selection' : ''}`;
  }

  function render() {
    const focused = canvas.contains(document.activeElement) && document.activeElement.dataset.step;
    syncing = true;
    try {
      editor.clear();
      dfOf.clear(); stepOf.clear();
      for (const s of steps()) {
        if (!s || typeof s.id !== 'string') continue;
        const spec = tools.get(s.tool);
        const cat = spec ? spec.category : 'unknown';
        const p = pos[s.id] || { x: PAD, y: PAD };
        const df = editor.addNode(s.tool || 'step', 1, 1, p.x, p.y, `b-step c-${cat}`, {}, '');
        dfOf.set(s.id, df); stepOf.set(String(df), s.id);
        const node = document.getElementById(`node-${df}`);
        node.dataset.step = s.id;
        node.setAttribute('tabindex', '0');
        node.setAttribute('role', 'button');
        node.classList.toggle('selected-step', s.id === selected);
        node.classList.toggle('b-picked', picked.has(s.id));
        const content = node.querySelector('.drawflow_content_node');
        const title = s.name || s.id;
        content.replaceChildren(
          el('span', { class: 'b-band' }),
          // aria-hidden: the node's accessible name (nodeLabel) says what it shows
          el('span', { class: 'b-node-title', title, 'aria-hidden': 'true' }, title),
          el('span', { class: 'b-node-sub', 'aria-hidden': 'true' }, `${s.tool || '?'}${s.forEach ? ' · forEach' : ''}${s.condition ? ' · if' : ''}`),
          el('span', { class: 'b-badge', 'aria-hidden': 'true', hidden: true }));
        node.querySelector('.input').setAttribute('title', `what ${s.id} reads`);
        node.querySelector('.output').setAttribute('title', `drag to the step that reads ${s.id}'s output`);
      }
      // Drawflow draws a link as it is added, reading the layout for it (a forced layout per
      // link: most of the time a 100-step file took to open): the links are added undrawn, then
      // drawn together with one reading of the layout.
      editor.updateConnectionNodes = () => {};
      try {
        for (const [from, to, kind] of edges()) {
          editor.addConnection(dfOf.get(from), dfOf.get(to), 'output_1', 'input_1');
          const c = canvas.querySelector(`.connection.node_in_node-${dfOf.get(to)}.node_out_node-${dfOf.get(from)}`);
          if (c) c.classList.add(`k-${kind}`);
        }
      } finally {
        delete editor.updateConnectionNodes; // Drawflow's own again, for nodes moved by hand
      }
      drawLinks();
    } finally {
      syncing = false;
    }
    decorate();
    if (focused) focusNode(focused);
  }
  // drawLinks draws every link from its step's output handle to the other's input handle, reading
  // where every step and handle is once before it writes. A link runs in the clear gaps between
  // steps, never behind one: out of its step into the first clear gap between columns on its
  // right, along that gap to the clear gap between rows nearest the way it goes, along that to the
  // clear gap just before the other step's column, and into it (down the one gap when the two
  // columns are next to each other). A step dragged across the others can close the gaps near it:
  // the route then goes round the closed part.
  // Each link has a lane of its own within a gap (laneLinks), so that links sharing a gap are not
  // drawn on top of each other: a step's links leave along one trunk and one lane between rows,
  // and each goes down (or up) its own lane to the row it enters.
  function drawLinks() {
    const pre = editor.precanvas.getBoundingClientRect(), z = editor.zoom || 1;
    const at = (h) => {
      const r = h.getBoundingClientRect();
      return [h.offsetWidth / 2 + (r.x - pre.x) / z, h.offsetHeight / 2 + (r.y - pre.y) / z];
    };
    const boxOf = (e) => {
      const r = e.getBoundingClientRect();
      return { l: (r.left - pre.x) / z, t: (r.top - pre.y) / z, r: (r.right - pre.x) / z, b: (r.bottom - pre.y) / z };
    };
    const boxes = new Map(); // a node with its handles
    for (const n of canvas.querySelectorAll('.drawflow-node')) {
      const b = boxOf(n);
      for (const h of n.querySelectorAll('.input, .output')) {
        const hb = boxOf(h);
        b.l = Math.min(b.l, hb.l); b.t = Math.min(b.t, hb.t); b.r = Math.max(b.r, hb.r); b.b = Math.max(b.b, hb.b);
      }
      boxes.set(n.id, b);
    }
    const all = [...boxes.values()];
    const xs = clearGaps(all.map((b) => [b.l, b.r])), ys = clearGaps(all.map((b) => [b.t, b.b]));
    const lines = [];
    for (const c of canvas.querySelectorAll('.connection')) {
      const [, into, outof, out, inp] = c.classList;
      const a = document.getElementById(outof.replace('node_out_', '')), b = document.getElementById(into.replace('node_in_', ''));
      const ha = a && a.querySelector(`.outputs .${out}`), hb = b && b.querySelector(`.inputs .${inp}`);
      if (ha && hb && c.firstElementChild) lines.push([c.firstElementChild, at(ha), at(hb), boxes.get(a.id), boxes.get(b.id), `${a.id}.${out}`]);
    }
    for (const [path, pts] of laneLinks(lines, xs, ys)) path.setAttributeNS(null, 'd', roundedPath(pts(), 10));
  }
  // laneLinks routes the links [path, from, to, A, B, handle] (from and to the handles' points, A
  // and B the boxes of the two steps, handle the output's name) through the gaps xs (between
  // columns) and ys (between rows), and answers each path with its points (a function: read once
  // every lane is placed).
  // A link leaves along its step's trunk (its way from its output, in the gap right of its column,
  // to the row gaps its links follow), runs along its step's lane in the row gap next to the row
  // it enters, and goes down (or up) a lane of its own in the gap before that row's column. In a
  // gap between columns runs that overlap get lanes of their own, and at each row the lanes that
  // leave the row lie left of the lanes that enter it, so that the way out of a step and the way
  // into the step beside it never run along each other. In a gap between rows, the steps whose
  // ways along it overlap get lanes of their own.
  function laneLinks(lines, xs, ys) {
    const verts = new Map(); // column gap -> its vertical runs
    const vert = (g, v) => { if (!verts.has(g)) verts.set(g, []); verts.get(g).push(v); return v; };
    const trunks = new Map(); // column gap -> handle -> its trunk
    const rows = new Map(); // row gap -> handle -> its lane along the gap
    const out = [], after = [];
    for (const [path, [x1, y1], [x2, y2], A, B, handle] of lines) {
      const g1 = xs.find((g) => g.at > A.r), g2 = xs.filter((g) => g.at < B.l).pop();
      if (!g1 || !g2 || (g1 === g2 && Math.abs(y1 - y2) < 1)) { out.push([path, () => [[x1, y1], [x2, y2]]]); continue; }
      // into the same row of the next column (handles at other heights): across the gap
      if (g1 === g2 && !ys.some((g) => g.at > Math.min(y1, y2) && g.at < Math.max(y1, y2))) {
        const v = vert(g1, { kind: 1, lo: Math.min(y1, y2), hi: Math.max(y1, y2), leaves: y1, enters: y2 });
        out.push([path, () => [[x1, y1], [v.x, y1], [v.x, y2], [x2, y2]]]);
        continue;
      }
      // the row gap that makes the way shortest; of equals, the one nearest the row it enters, so
      // that its way down (or up) to that row is short and shares its lane with the ways to the
      // other rows
      let gy = ys[0], cost = Infinity;
      for (const g of ys) {
        const k = Math.abs(g.at - y1) + Math.abs(g.at - y2);
        if (k < cost - 0.5 || (Math.abs(k - cost) <= 0.5 && Math.abs(g.at - y2) < Math.abs(gy.at - y2))) { gy = g; cost = k; }
      }
      if (!trunks.has(g1)) trunks.set(g1, new Map());
      let t = trunks.get(g1).get(handle);
      if (!t) { t = vert(g1, { kind: 0, lo: y1, hi: y1, leaves: y1, enters: null }); trunks.get(g1).set(handle, t); }
      t.lo = Math.min(t.lo, gy.at); t.hi = Math.max(t.hi, gy.at);
      if (!rows.has(gy)) rows.set(gy, new Map());
      let r = rows.get(gy).get(handle);
      if (!r) { r = { lo: Infinity, hi: -Infinity }; rows.get(gy).set(handle, r); }
      const e = vert(g2, { kind: 2, lo: Math.min(gy.at, y2), hi: Math.max(gy.at, y2), leaves: null, enters: y2 });
      after.push(() => { r.lo = Math.min(r.lo, t.x, e.x); r.hi = Math.max(r.hi, t.x, e.x); });
      out.push([path, () => [[x1, y1], [t.x, y1], [t.x, r.y], [e.x, r.y], [e.x, y2], [x2, y2]]]);
    }
    // a gap's vertical runs in order: a run that leaves a row before the runs that enter it; else
    // the trunks, then the ways across to the same row, then the ways to a row, each by where it
    // starts. Each takes the first lane, right
    // of the lanes of the runs leaving the row it enters, that no run on it overlaps.
    const sameRow = (v, w) => v.leaves !== null && w.enters !== null && Math.abs(v.leaves - w.enters) < 1;
    for (const [g, vs] of verts) {
      const before = new Map(vs.map((v) => [v, 0]));
      for (const v of vs) for (const w of vs) if (v !== w && sameRow(v, w)) before.set(w, before.get(w) + 1);
      const order = [];
      const todo = new Set(vs);
      while (todo.size) {
        let free = [...todo].filter((v) => before.get(v) === 0);
        if (!free.length) free = [...todo]; // runs that cross each other's rows both ways: one gives way
        free.sort((a, b) => a.kind - b.kind || a.lo - b.lo);
        const v = free[0];
        todo.delete(v);
        order.push(v);
        for (const w of todo) if (sameRow(v, w)) before.set(w, before.get(w) - 1);
      }
      const lanes = []; // the runs on each lane
      for (const v of order) {
        let lane = 0;
        for (const u of order) if (u.lane !== undefined && sameRow(u, v)) lane = Math.max(lane, u.lane + 1);
        while (lane < lanes.length && lanes[lane].some((u) => v.lo < u.hi + 6 && u.lo < v.hi + 6)) lane++;
        if (lane === lanes.length) lanes.push([]);
        lanes[lane].push(v);
        v.lane = lane;
      }
      const ats = spread(g, lanes.length);
      for (const v of vs) v.x = ats[v.lane];
    }
    for (const f of after) f();
    // a row gap's lanes: a step's way along it takes the first lane that no other way overlaps
    for (const [g, byHandle] of rows) {
      const rs = [...byHandle.values()].sort((a, b) => a.lo - b.lo);
      const ends = []; // the right end of each lane's last way
      for (const r of rs) {
        let lane = ends.findIndex((e) => e < r.lo - 6);
        if (lane < 0) { lane = ends.length; ends.push(0); }
        ends[lane] = r.hi;
        r.lane = lane;
      }
      const ats = spread(g, ends.length);
      for (const r of rs) r.y = ats[r.lane];
    }
    return out;
  }
  // spread places n lanes in the gap g: around its middle, at most 8 apart, 3 clear of its sides.
  function spread(g, n) {
    const step = n > 1 ? Math.min(8, Math.max(0, g.hi - g.lo - 6) / (n - 1)) : 0;
    return Array.from({ length: n }, (_, i) => g.at + (i - (n - 1) / 2) * step);
  }
  // clearGaps are the gaps clear of every span [lo, hi], each {lo, hi, at: its middle}: each gap
  // of 6 or more between them, and one 24 wide beyond each end (inside the margins Fit leaves).
  function clearGaps(spans) {
    if (!spans.length) return [];
    const s = spans.slice().sort((p, q) => p[0] - q[0]);
    const gap = (lo, hi) => ({ lo, hi, at: (lo + hi) / 2 });
    const out = [gap(s[0][0] - 24, s[0][0])];
    let hi = s[0][1];
    for (const [lo, h] of s.slice(1)) {
      if (lo - hi >= 6) out.push(gap(hi, lo));
      hi = Math.max(hi, h);
    }
    out.push(gap(hi, hi + 24));
    return out;
  }
  // roundedPath is the SVG path through the points pts (each turn a right angle), its corners
  // rounded with radius r (less where a leg is short).
  function roundedPath(pts, r) {
    const p = [];
    for (const q of pts) {
      const last = p[p.length - 1];
      if (last && Math.abs(last[0] - q[0]) < 0.01 && Math.abs(last[1] - q[1]) < 0.01) continue;
      // a point on the straight line between its neighbours is no corner
      const prev = p[p.length - 2];
      if (prev && ((Math.abs(prev[0] - last[0]) < 0.01 && Math.abs(last[0] - q[0]) < 0.01) || (Math.abs(prev[1] - last[1]) < 0.01 && Math.abs(last[1] - q[1]) < 0.01))) p.pop();
      p.push(q);
    }
    const f = (v) => String(Math.round(v * 100) / 100);
    const xy = (q) => `${f(q[0])} ${f(q[1])}`;
    let d = `M ${xy(p[0])}`;
    for (let i = 1; i < p.length - 1; i++) {
      const [a, b, c] = [p[i - 1], p[i], p[i + 1]];
      const l1 = Math.hypot(b[0] - a[0], b[1] - a[1]), l2 = Math.hypot(c[0] - b[0], c[1] - b[1]);
      const k = Math.min(r, l1 / 2, l2 / 2);
      const s1 = [b[0] + ((a[0] - b[0]) * k) / l1, b[1] + ((a[1] - b[1]) * k) / l1];
      const s2 = [b[0] + ((c[0] - b[0]) * k) / l2, b[1] + ((c[1] - b[1]) * k) / l2];
      d += ` L ${xy(s1)} Q ${xy(b)} ${xy(s2)}`;
    }
    return `${d} L ${xy(p.length > 1 ? p[p.length - 1] : p[0])}`;
  }
  // decorate shows the last validation's problems on the nodes: a badge with a mark and the
  // count (not colour alone), and the count in the node's accessible name.
  function decorate() {
    const counts = problemCounts();
    for (const [id, df] of dfOf) {
      const node = document.getElementById(`node-${df}`);
      const s = stepById(id);
      if (!node || !s) continue;
      const c = counts[id] || { error: 0, warning: 0 };
      const n = c.error + c.warning;
      node.setAttribute('aria-label', nodeLabel(s, n));
      node.classList.toggle('b-has-error', c.error > 0);
      node.classList.toggle('b-has-warning', !c.error && c.warning > 0);
      const badge = node.querySelector('.b-badge');
      badge.hidden = !n;
      badge.className = `b-badge ${c.error ? 'error' : 'warning'}`;
      badge.textContent = n ? `${c.error ? '✕' : '!'} ${n}` : '';
    }
    stepsMoved();
  }
  function focusNode(id) {
    const df = dfOf.get(id);
    const n = df !== undefined && document.getElementById(`node-${df}`);
    if (n) n.focus({ preventScroll: true });
  }

  editor.on('nodeSelected', (df) => {
    if (syncing) return;
    const id = stepOf.get(String(df));
    if (id && id !== selected) { selected = id; markSelected(); inspect(); }
  });
  editor.on('nodeMoved', (df) => {
    const id = stepOf.get(String(df));
    const d = editor.drawflow.drawflow.Home.data[df], n = document.getElementById(`node-${df}`);
    const was = JSON.stringify({ doc, pos }); // a move is an undo step of its own
    // where the step is drawn: Drawflow's pos_x/pos_y lag it by the last mouse move (it reads
    // offsetLeft after setting style.left), so the next redraw moved the step back by that much
    if (id && d && n) { d.pos_x = parseFloat(n.style.left); d.pos_y = parseFloat(n.style.top); pos[id] = { x: d.pos_x, y: d.pos_y }; }
    if (id && picked.has(id)) { // the others selected with it moved along (below)
      for (const o of picked) {
        const on = o !== id && document.getElementById(`node-${dfOf.get(o)}`);
        if (on) pos[o] = { x: parseFloat(on.style.left), y: parseFloat(on.style.top) };
      }
    }
    if (id) {
      undo.push(was);
      if (undo.length > 200) undo.shift();
      redo.length = 0;
      lastCommit = { key: '', at: 0 };
      document.getElementById('b-undo').disabled = false;
      document.getElementById('b-redo').disabled = true;
    }
    drawLinks(); // Drawflow drew the moved step's links its way as it went
    stepsMoved();
  });
  // Drawflow tells of a link drawn or removed in the middle of its own handler: the file is
  // changed (and the canvas drawn again from it) once that handler is done.
  editor.on('connectionCreated', (c) => {
    if (syncing) return;
    const from = stepOf.get(String(c.output_id)), to = stepOf.get(String(c.input_id));
    queueMicrotask(() => {
      say(link(from, to));
      if (selected === to || selected === from) inspect();
    });
  });
  editor.on('connectionRemoved', (c) => {
    if (syncing) return;
    const from = stepOf.get(String(c.output_id)), to = stepOf.get(String(c.input_id));
    queueMicrotask(() => {
      let said = '';
      commit('', () => { said = disconnect(from, to); });
      say(said);
      if (selected === to) inspect();
    });
  });
  canvas.addEventListener('keydown', (ev) => {
    const node = ev.target.closest && ev.target.closest('.drawflow-node');
    if (ev.key === 'Delete' || ev.key === 'Backspace') {
      if (node && node.dataset.step) { ev.preventDefault(); removeStep(node.dataset.step); return; }
      if (editor.connection_selected) { ev.preventDefault(); editor.removeConnection(); }
      return;
    }
    if ((ev.key === 'Enter' || ev.key === ' ') && ev.shiftKey && node && node.dataset.step) {
      ev.preventDefault(); pick(node.dataset.step); return;
    }
    if ((ev.key === 'Enter' || ev.key === ' ') && node && node.dataset.step) {
      ev.preventDefault();
      selected = node.dataset.step; markSelected(); inspect();
      // the form's heading, not its first field: keys typed next change nothing (in the id field
      // they renamed the step), a screen reader reads the step's name, and Tab goes on to the id
      const heading = document.getElementById('f-heading');
      if (heading) heading.focus();
    }
  });
  canvas.addEventListener('focusin', (ev) => {
    const node = ev.target.closest && ev.target.closest('.drawflow-node');
    if (node && node.dataset.step && node.dataset.step !== selected) { selected = node.dataset.step; markSelected(); inspect(); }
  });
  function markSelected() {
    canvas.querySelectorAll('.drawflow-node').forEach((n) => {
      n.classList.toggle('selected-step', n.dataset.step === selected);
      n.classList.toggle('b-picked', picked.has(n.dataset.step));
    });
    decorate(); // the selection is in each step's accessible name, not only its outline
    stepsMoved();
  }
  // ---- several steps at once: select, copy, paste ----
  // Shift+click (Ctrl/⌘+click, or Shift+Enter on a focused step) adds a step to the selection or
  // takes it out, starting from the step whose form is open; Ctrl+A on the canvas selects every
  // step; a plain click on a step not among them or on the background starts again. Ctrl+C
  // copies the selected steps (or the open one), Ctrl+V adds copies with new ids, 40 px on:
  // references among the copies are to the copies, to other steps they stay. Delete on a
  // selected step removes them all; a drag of one moves them all.
  function pick(id) {
    if (!picked.size && selected && selected !== id) picked.add(selected);
    if (picked.has(id)) picked.delete(id); else picked.add(id);
    markSelected();
    say(`${picked.size} step${picked.size === 1 ? '' : 's'} selected`);
  }
  canvas.addEventListener('mousedown', (ev) => {
    const node = ev.target.closest && ev.target.closest('.drawflow-node');
    if (ev.button !== 0 || (ev.target.closest && ev.target.closest('.input, .output'))) return;
    if (node && node.dataset.step && (ev.shiftKey || ev.ctrlKey || ev.metaKey)) { pick(node.dataset.step); return; }
    if (picked.size && !(node && picked.has(node.dataset.step))) { picked.clear(); markSelected(); }
    lead = node && picked.has(node.dataset.step) && picked.size > 1 ? { node, x: parseFloat(node.style.left), y: parseFloat(node.style.top) } : null;
  }, true);
  // a step dragged of several selected takes the others along: after Drawflow has moved it, the
  // others move as far
  let lead = null;
  document.addEventListener('mousemove', () => {
    if (!lead || !editor.drag) return;
    const x = parseFloat(lead.node.style.left), y = parseFloat(lead.node.style.top), dx = x - lead.x, dy = y - lead.y;
    if (!dx && !dy) return;
    lead.x = x; lead.y = y;
    for (const o of picked) {
      const df = dfOf.get(o), on = document.getElementById(`node-${df}`), d = editor.drawflow.drawflow.Home.data[df];
      if (!on || on === lead.node || !d) continue;
      d.pos_x = parseFloat(on.style.left) + dx; d.pos_y = parseFloat(on.style.top) + dy;
      on.style.left = `${d.pos_x}px`; on.style.top = `${d.pos_y}px`;
      editor.updateConnectionNodes(`node-${df}`);
    }
  });
  function copySteps() {
    const ids = picked.size ? [...picked] : selected ? [selected] : [];
    const chosen = steps().filter((s) => s && ids.includes(s.id));
    if (!chosen.length) return false;
    clip = chosen.map((s) => ({ step: clone(s), at: pos[s.id] ? { ...pos[s.id] } : null }));
    pastes = 0;
    say(`copied ${chosen.length} step${chosen.length === 1 ? '' : 's'}: Ctrl+V pastes`);
    return true;
  }
  function pasteSteps() {
    if (!clip || !clip.length || isFlow()) return false;
    pastes++;
    const made = [];
    commit('', () => {
      if (!Array.isArray(doc.steps)) doc.steps = [];
      const ids = new Map();
      for (const { step } of clip) {
        const id = newId(step.id);
        ids.set(step.id, id);
        doc.steps.push({ ...clone(step), id }); // pushed at once, so that the next newId sees it
      }
      // no new id is an id of the copy's (those are all taken), so the rewrites do not chain
      for (const { step, at } of clip) {
        const s = stepById(ids.get(step.id));
        for (const [old, id] of ids) readsRenamed(s, old, id);
        if (at) pos[s.id] = { x: at.x + 40 * pastes, y: at.y + 40 * pastes };
        made.push(s.id);
      }
      picked.clear();
      made.forEach((id) => picked.add(id));
      selected = made[0];
    });
    inspect();
    say(`pasted ${made.length} step${made.length === 1 ? '' : 's'}: ${made.join(', ')}`);
    return true;
  }

  // zoom, pan, fit: Drawflow's transform is translate(canvas_x, canvas_y) scale(zoom) about the
  // centre of the canvas.
  function setView(zoom, cx, cy) {
    editor.zoom = zoom; editor.zoom_last_value = zoom; editor.canvas_x = cx; editor.canvas_y = cy;
    editor.precanvas.style.transform = `translate(${cx}px, ${cy}px) scale(${zoom})`;
    viewMoved();
  }
  // the minimap (static/minimap.js, the one the run graph has): the steps' boxes in canvas
  // coordinates, and the part of the canvas in view
  const zoomLevel = document.getElementById('b-zoom-level');
  const mmCanvas = {
    world: () => stepsBox(placed(), 20, 20) || { x: 0, y: 0, width: 1, height: 1 },
    nodes: () => {
      const counts = problemCounts();
      return steps().filter((s) => s && pos[s.id]).map((s) => {
        const spec = tools.get(s.tool), c = counts[s.id];
        return { ...pos[s.id], width: NODE_W, height: NODE_H,
          class: `c-${spec ? spec.category : 'unknown'}${c && c.error ? ' b-has-error' : c && c.warning ? ' b-has-warning' : ''}${s.id === selected ? ' b-selected' : ''}` };
      });
    },
    view: () => {
      const c = canvas.getBoundingClientRect(), p = editor.precanvas.getBoundingClientRect(), z = editor.zoom || 1;
      return { x: (c.left + canvas.clientLeft - p.left) / z, y: (c.top + canvas.clientTop - p.top) / z, width: canvas.clientWidth / z, height: canvas.clientHeight / z, scale: z };
    },
    centre: (x, y) => setView(editor.zoom, editor.zoom * (canvas.clientWidth / 2 - x), editor.zoom * (canvas.clientHeight / 2 - y)),
  };
  let mm = null;
  function viewMoved() {
    if (zoomLevel) zoomLevel.textContent = `${Math.round(editor.zoom * 100)}%`;
    if (mm) mm.place();
  }
  function stepsMoved() { if (mm) mm.draw(); }
  editor.on('translate', viewMoved);
  editor.on('zoom', viewMoved);
  function fit() {
    const b = stepsBox(placed());
    const W = canvas.clientWidth, H = canvas.clientHeight;
    if (!b || !W || !H) { setView(1, 0, 0); return; }
    const z = Math.max(editor.zoom_min, fitZoom(b, W, H));
    const bx = b.x + b.width / 2, by = b.y + b.height / 2;
    setView(z, z * (W / 2 - bx), z * (H / 2 - by));
  }
  canvas.addEventListener('wheel', (ev) => {
    if (ev.ctrlKey) return; // Drawflow zooms
    ev.preventDefault();
    setView(editor.zoom, editor.canvas_x - ev.deltaX, editor.canvas_y - ev.deltaY);
  }, { passive: false });
  document.getElementById('b-zoom-in').addEventListener('click', () => editor.zoom_in());
  document.getElementById('b-zoom-out').addEventListener('click', () => editor.zoom_out());
  document.getElementById('b-fit').addEventListener('click', fit);
  // Arrange lays every step out again as opening the file does (place: columns by dependency
  // depth, folded to the canvas's shape), then fits; one undo step.
  document.getElementById('b-arrange').addEventListener('click', () => {
    commit('', () => place(true));
    requestAnimationFrame(fit);
    say(`arranged ${steps().length} steps in columns by their dependencies`);
  });
  if (window.weftMinimap) mm = window.weftMinimap(document.getElementById('b-minimap'), mmCanvas);

  // canvas coordinates of a point on the screen
  function toCanvas(clientX, clientY) {
    const r = editor.precanvas.getBoundingClientRect();
    return { x: (clientX - r.x) / editor.zoom, y: (clientY - r.y) / editor.zoom };
  }

  // ---- the palette (from the registry) ----
  const paletteEl = document.getElementById('b-tools');
  function palette() {
    const q = document.getElementById('b-filter').value.trim().toLowerCase();
    const cats = {};
    for (const t of tools.values()) {
      if (q && !`${t.name} ${t.title} ${t.description} ${t.category}`.toLowerCase().includes(q)) continue;
      (cats[t.category] = cats[t.category] || []).push(t);
    }
    paletteEl.replaceChildren(...Object.keys(cats).sort().map((c) => el('section', { class: 'b-cat' },
      el('h3', {}, el('span', { class: `chip c-${c}` }, c)),
      el('ul', {}, cats[c].map((t) => el('li', {},
        el('button', { type: 'button', class: `b-tool c-${c}`, 'data-tool': t.name, title: t.description || t.title || t.name,
          // the name starts with the words the button shows (WCAG 2.5.3, label in name)
          'aria-label': `${t.name} ${t.title || ''}: add this step`.replace(/\s+:/, ':') }, el('strong', {}, t.name), ' ', el('small', {}, t.title || '')))))),
    ));
  }
  document.getElementById('b-filter').addEventListener('input', palette);
  // Dragging a tool uses pointer events (a ghost follows the pointer; dropped on the canvas it
  // adds the step there); a click or Enter adds it below the others.
  let drag = null;
  paletteEl.addEventListener('pointerdown', (ev) => {
    const b = ev.target.closest('.b-tool');
    if (!b || ev.button !== 0) return;
    drag = { tool: b.dataset.tool, x: ev.clientX, y: ev.clientY, ghost: null };
  });
  document.addEventListener('pointermove', (ev) => {
    if (!drag) return;
    if (!drag.ghost && Math.hypot(ev.clientX - drag.x, ev.clientY - drag.y) < 5) return;
    if (!drag.ghost) { drag.ghost = el('div', { class: 'b-ghost', 'aria-hidden': 'true' }, drag.tool); document.body.append(drag.ghost); }
    drag.ghost.style.left = `${ev.clientX + 6}px`;
    drag.ghost.style.top = `${ev.clientY + 6}px`;
  });
  document.addEventListener('pointerup', (ev) => {
    if (!drag) return;
    const d = drag;
    drag = null;
    if (!d.ghost) return; // a click: handled by the click listener
    d.ghost.remove();
    const r = canvas.getBoundingClientRect();
    if (ev.clientX < r.left || ev.clientX > r.right || ev.clientY < r.top || ev.clientY > r.bottom) return;
    const p = toCanvas(ev.clientX, ev.clientY);
    addStep(d.tool, { x: Math.round(p.x - NODE_W / 2), y: Math.round(p.y - NODE_H / 2) });
    d.dropped = true;
    suppressClick = true;
    setTimeout(() => { suppressClick = false; }, 0);
  });
  let suppressClick = false;
  paletteEl.addEventListener('click', (ev) => {
    const b = ev.target.closest('.b-tool');
    if (!b || suppressClick) return;
    addStep(b.dataset.tool);
  });

  // ---- the inspector: a step's form from its tool's input schema, or the workflow's settings ----
  const inspector = document.getElementById('b-inspector');
  // refsList are the references a field of the selected step (where) may use: the file's inputs
  // and defaults, the outputs of the steps it may read (never itself or a step that reads it,
  // directly or not: that would be a cycle), and in a forEach step (or a field the tool evaluates
  // per item) {{ item }}, {{ index }} and the item's fields.
  function refsList(where) {
    const out = [];
    for (const k of Object.keys(isObj(doc.inputs) ? doc.inputs : {})) out.push(`{{ inputs.${k} }}`);
    for (const k of Object.keys(isObj(doc.defaults) ? doc.defaults : {})) out.push(`{{ defaults.${k} }}`);
    const me = selected && stepById(selected);
    if (me) {
      const spec = tools.get(me.tool) || {};
      const key = where && where.startsWith('inputs.') ? where.slice(7) : '';
      const perItem = (spec.lazy || []).includes(key);
      if ((me.forEach !== undefined && where !== 'step.forEach') || perItem) {
        const item = perItem && me.tool === 'loop' && isObj(me.inputs) && typeof me.inputs.as === 'string' && me.inputs.as ? me.inputs.as : 'item';
        out.push(`{{ ${item} }}`, '{{ index }}');
        const m = typeof me.forEach === 'string' && /^\{\{\s*([a-z][a-z0-9_]*)\.output\.([A-Za-z0-9_]+)\s*\}\}$/.exec(me.forEach);
        const src = m && stepById(m[1]);
        const of = src && (tools.get(src.tool) || {}).output;
        const items = of && of.properties && of.properties[m[2]] && of.properties[m[2]].items;
        for (const f of Object.keys((items && items.properties) || {})) out.push(`{{ ${item}.${f} }}`);
      }
    }
    const later = downstream(selected);
    for (const s of steps()) {
      if (!s || s.id === selected || later.has(s.id)) continue;
      const spec = tools.get(s.tool) || {};
      out.push(`{{ ${s.id}.output }}`);
      for (const f of Object.keys((spec.output && spec.output.properties) || {})) out.push(`{{ ${s.id}.output.${f} }}`);
    }
    return out;
  }
  // downstream is every step that reads id, directly or through others (edges of any kind).
  function downstream(id) {
    const seen = new Set();
    if (!id) return seen;
    const es = edges(), todo = [id];
    while (todo.length) {
      const n = todo.pop();
      for (const [from, to] of es) if (from === n && !seen.has(to)) { seen.add(to); todo.push(to); }
    }
    return seen;
  }
  // ---- completion of {{ references }}: typing {{ in a field of a form lists the references it
  // may use (refsList) under it; a click, Enter or Tab puts the one chosen in place of what was
  // typed after {{, at the caret, the rest of the text kept; Escape closes the list ----
  const refBox = el('ul', { id: 'b-refs', role: 'listbox', class: 'b-refs', 'aria-label': 'references', hidden: true });
  let refAt = null; // the open list: { input, tok, items, active }
  function refToken(input) {
    const caret = input.selectionStart ?? input.value.length;
    const m = /\{\{\s*([A-Za-z0-9_.]*)$/.exec(input.value.slice(0, caret));
    return m ? { start: m.index, end: caret, typed: m[1].toLowerCase() } : null;
  }
  function closeRefs() {
    if (refAt) { refAt.input.removeAttribute('aria-activedescendant'); refAt.input.removeAttribute('aria-controls'); }
    refAt = null;
    refBox.hidden = true;
    refBox.replaceChildren();
  }
  function showRefs(input, where) {
    const tok = refToken(input);
    if (!tok) { closeRefs(); return; }
    const inner = (r) => r.slice(2, -2).trim().toLowerCase();
    const all = refsList(where);
    const items = [...all.filter((r) => inner(r).startsWith(tok.typed)), ...all.filter((r) => !inner(r).startsWith(tok.typed) && inner(r).includes(tok.typed))].slice(0, 50);
    if (!items.length) { closeRefs(); return; }
    refAt = { input, tok, items, active: 0 };
    fill(refBox, items.map((r, i) => el('li', { id: `b-ref-${i}`, role: 'option', 'aria-selected': String(i === 0), 'data-ref': r,
      onmousedown: (ev) => { ev.preventDefault(); takeRef(i); } }, r)));
    if (refBox.previousElementSibling !== input) input.after(refBox);
    refBox.hidden = false;
    input.setAttribute('aria-controls', 'b-refs');
    input.setAttribute('aria-activedescendant', 'b-ref-0');
  }
  function moveRef(by) {
    const n = refAt.items.length;
    refAt.active = (refAt.active + by + n) % n;
    refBox.querySelectorAll('[role=option]').forEach((o, i) => o.setAttribute('aria-selected', String(i === refAt.active)));
    const o = refBox.children[refAt.active];
    refAt.input.setAttribute('aria-activedescendant', o.id);
    o.scrollIntoView({ block: 'nearest' });
  }
  function takeRef(i) {
    const { input, tok, items } = refAt;
    const r = items[i];
    const rest = input.value.slice(tok.end).replace(/^[A-Za-z0-9_.]*\s*\}\}/, ''); // the rest of a reference being retyped
    input.value = input.value.slice(0, tok.start) + r + rest;
    const caret = tok.start + r.length;
    input.setSelectionRange(caret, caret);
    closeRefs();
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }
  function completeRefs(input, where) {
    input.setAttribute('aria-autocomplete', 'list');
    input.addEventListener('input', () => showRefs(input, where));
    input.addEventListener('blur', () => { if (refAt && refAt.input === input) closeRefs(); });
    input.addEventListener('keydown', (ev) => {
      if (!refAt || refAt.input !== input) return;
      if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') { ev.preventDefault(); moveRef(ev.key === 'ArrowDown' ? 1 : -1); }
      else if (ev.key === 'Enter' || ev.key === 'Tab') { ev.preventDefault(); takeRef(refAt.active); }
      else if (ev.key === 'Escape') { ev.preventDefault(); ev.stopPropagation(); closeRefs(); }
    });
  }
  // completions is the references' list of a form (shown under the field being typed in)
  function completions() {
    closeRefs();
    return refBox;
  }
  // fieldFor builds one input of a form; get/set read and write the value in the file (undefined:
  // not set).
  function fieldFor(key, schema, required, get, set, where) {
    schema = schema || {};
    const id = `f-${where.replace(/[^A-Za-z0-9_-]/g, '-')}`;
    const t = types(schema);
    const cur = get();
    const templated = typeof cur === 'string' && cur.includes('{{');
    const note = el('small', { class: 'b-field-error', role: 'alert' });
    const desc = [schema.description, t.length ? t.join(' | ') : 'any JSON', schema.default !== undefined ? `default ${JSON.stringify(schema.default)}` : ''].filter(Boolean).join(' · ');
    let input;
    const apply = (v) => commit(where, () => set(v));
    if (schema.enum && !templated) {
      input = el('select', { id }, el('option', { value: '' }, '(not set)'),
        schema.enum.map((v) => el('option', { value: JSON.stringify(v), selected: JSON.stringify(v) === JSON.stringify(cur) || null }, String(v))));
      input.addEventListener('change', () => apply(input.value === '' ? undefined : JSON.parse(input.value)));
    } else if (t.length === 1 && t[0] === 'boolean' && !templated) {
      input = el('select', { id }, el('option', { value: '' }, '(not set)'),
        el('option', { value: 'true', selected: cur === true || null }, 'true'), el('option', { value: 'false', selected: cur === false || null }, 'false'));
      input.addEventListener('change', () => apply(input.value === '' ? undefined : input.value === 'true'));
    } else if (!templated && (t.includes('integer') || t.includes('number')) && !t.includes('string') && !t.includes('array') && !t.includes('object')) {
      input = el('input', { id, type: 'text', inputmode: 'decimal', value: cur === undefined ? '' : String(cur), autocomplete: 'off' });
      input.addEventListener('input', () => {
        const v = input.value.trim();
        if (v === '') { note.textContent = ''; apply(undefined); return; }
        if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(v)) { note.textContent = ''; apply(Number(v)); return; }
        if (v.includes('{{')) { note.textContent = ''; apply(v); return; }
        note.textContent = 'a number, or a {{ reference }}';
      });
    } else if (t.length && t.every((x) => x === 'string' || x === 'null') || templated) {
      const long = /prompt|text|instructions|template|content|query/i.test(key) || (typeof cur === 'string' && cur.length > 60);
      input = long ? el('textarea', { id, rows: 3, spellcheck: 'false' }, cur === undefined ? '' : String(cur))
        : el('input', { id, type: 'text', value: cur === undefined ? '' : String(cur), autocomplete: 'off' });
      // a field that held a reference but takes more than text: JSON typed into it (an array, a
      // number) is saved as that value, anything else as the text
      const textOnly = t.length && t.every((x) => x === 'string' || x === 'null');
      const valueOf = (v) => {
        if (textOnly || !/^\s*([[{\-\d]|true\b|false\b|null\b)/.test(v)) return v;
        let p;
        try { p = JSON.parse(v); } catch (err) { return v; }
        const jt = Array.isArray(p) ? 'array' : p === null ? 'null' : typeof p;
        const fits = !t.length || t.includes(jt) || (jt === 'number' && (t.includes('integer') ? Number.isInteger(p) : false));
        return typeof p !== 'string' && fits ? p : v;
      };
      input.addEventListener('input', () => apply(input.value === '' ? undefined : valueOf(input.value)));
    } else {
      input = el('textarea', { id, rows: 3, spellcheck: 'false', class: 'b-json-field', placeholder: 'JSON, or a {{ reference }}' }, cur === undefined ? '' : JSON.stringify(cur, null, 1));
      input.addEventListener('input', () => {
        const v = input.value.trim();
        if (v === '') { note.textContent = ''; apply(undefined); return; }
        try { const parsed = JSON.parse(v); note.textContent = ''; apply(parsed); return; } catch (err) {
          if (/^\{\{[^{}]*\}\}$/.test(v)) { note.textContent = ''; apply(v); return; }
          note.textContent = `not valid JSON yet: ${err.message}`;
        }
      });
    }
    if (input.tagName !== 'SELECT') completeRefs(input, where);
    input.dataset.where = where;
    return el('div', { class: 'field', 'data-field': where },
      el('label', { for: id }, key, required ? el('span', { class: 'req', 'aria-label': 'required' }, ' *') : null, ' ', el('small', {}, desc)),
      input, note);
  }

  function stepForm(s) {
    const spec = tools.get(s.tool) || { input: {} };
    const schema = spec.input || {};
    const props = schema.properties || {};
    const required = schema.required || [];
    const inputs = () => (isObj(s.inputs) ? s.inputs : {});
    const setInput = (k) => (v) => {
      if (!isObj(s.inputs)) s.inputs = {};
      if (v === undefined) delete s.inputs[k]; else s.inputs[k] = v;
    };
    const keys = [...required.filter((k) => props[k]), ...Object.keys(props).filter((k) => !required.includes(k)).sort()];
    const extra = Object.keys(inputs()).filter((k) => !props[k]);
    const idInput = el('input', { id: 'f-step-id', type: 'text', value: s.id, pattern: '[a-z][a-z0-9_]*', autocomplete: 'off' });
    const idNote = el('small', { class: 'b-field-error', role: 'alert' });
    idInput.addEventListener('change', () => {
      const v = idInput.value.trim();
      if (v === s.id) return;
      if (!ID.test(v)) { idNote.textContent = 'use a lower-case letter, then letters, digits and _'; return; }
      if (stepById(v)) { idNote.textContent = `${v} is taken by another step`; return; }
      idNote.textContent = '';
      commit('', () => renameStep(s.id, v));
      inspect();
    });
    const others = steps().filter((x) => x.id !== s.id);
    const linkFrom = el('select', { id: 'f-link-from' }, others.map((x) => el('option', { value: x.id }, x.id)));
    const linkSaid = el('p', { class: 'note', role: 'status' });
    const ann = spec.annotations || {};
    const marks = [ann.readOnlyHint ? 'read-only' : 'changes things', ann.destructiveHint ? 'destructive' : '', ann.idempotentHint ? 'idempotent' : '', ann.openWorldHint ? 'reaches outside' : ''].filter(Boolean);
    const opt = (k, label, schema) => fieldFor(label, schema, false, () => s[k], (v) => { if (v === undefined) delete s[k]; else s[k] = v; }, `step.${k}`);
    fill(inspector, 
      el('h2', { id: 'f-heading', tabindex: '-1' }, s.name || s.id),
      el('p', { class: 'meta' }, el('span', { class: `chip c-${spec.category}` }, spec.category || 'unknown'), ` ${s.tool}`, spec.title ? ` — ${spec.title}` : ''),
      spec.description ? el('p', { class: 'note' }, spec.description) : null,
      marks.length ? el('p', { class: 'b-ann' }, marks.map((m) => el('span', { class: 'b-tag' }, m))) : null,
      el('div', { class: 'field' }, el('label', { for: 'f-step-id' }, 'id ', el('small', {}, 'references use it: {{ id.output }}')), idInput, idNote),
      opt('name', 'name', { type: 'string', description: 'shown instead of the id' }),
      el('h3', {}, 'Inputs'),
      keys.map((k) => fieldFor(k, props[k], required.includes(k), () => inputs()[k], setInput(k), `inputs.${k}`)),
      extra.map((k) => fieldFor(k, {}, false, () => inputs()[k], setInput(k), `inputs.${k}`)),
      el('h3', {}, 'Reads from'),
      others.length ? el('div', { class: 'b-link' }, el('label', { for: 'f-link-from' }, 'Link from '), linkFrom,
        el('button', { type: 'button', id: 'f-link', onclick: () => {
          const said = link(linkFrom.value, s.id);
          inspect(); say(said);
        } }, 'Link')) : el('p', { class: 'note' }, 'no other steps yet'),
      linkSaid,
      el('h3', {}, 'When it runs'),
      opt('condition', 'condition', { type: 'string', description: 'run only when true, e.g. {{ a.output.resultCount > 0 }}' }),
      opt('forEach', 'forEach', { type: 'string', description: 'run once per item of an array: {{ inputs.items }}' }),
      opt('dependsOn', 'dependsOn', { type: 'array', description: 'step ids to wait for without reading them' }),
      opt('continueOnError', 'continueOnError', { type: 'boolean' }),
      opt('timeout', 'timeout', { type: 'string', description: 'per attempt, e.g. "30s"' }),
      el('p', {}, el('button', { type: 'button', class: 'danger', id: 'f-delete', onclick: () => removeStep(s.id) }, `Delete ${s.id}`)),
      completions());
    markFieldProblems();
  }

  function settingsForm() {
    if (isFlow()) {
      fill(inspector, el('h2', {}, 'A Flow-format file'),
        el('p', { class: 'note' }, 'This file has nodes and edges (the Flow format). The builder edits step files: convert it with weft convert, then import the result. Export gives it back unchanged.'));
      return;
    }
    const top = (k) => ({ get: () => doc[k], set: (v) => { if (v === undefined) delete doc[k]; else doc[k] = v; } });
    const f = (k, schema) => fieldFor(k, schema, k === 'name', top(k).get, top(k).set, `workflow.${k}`);
    const inputs = isObj(doc.inputs) ? doc.inputs : {};
    const newName = el('input', { id: 'f-new-input', type: 'text', placeholder: 'name', autocomplete: 'off' });
    const newNote = el('small', { class: 'b-field-error', role: 'alert' });
    fill(inspector, 
      el('h2', {}, 'Workflow settings'),
      el('p', { class: 'note' }, 'Select a step to edit it. These are the file’s own fields.'),
      f('name', { type: 'string', description: 'lower-case letters, digits, - and _' }),
      f('description', { type: 'string' }),
      f('version', { type: 'string', description: 'semver' }),
      el('h3', {}, 'Inputs'),
      Object.keys(inputs).map((k) => el('fieldset', { class: 'b-input' }, el('legend', {}, k,
        el('button', { type: 'button', class: 'b-small', 'aria-label': `remove input ${k}`, onclick: () => { commit('', () => { delete doc.inputs[k]; if (!Object.keys(doc.inputs).length) delete doc.inputs; }); inspect(); } }, 'remove')),
        fieldFor('type', { enum: ['string', 'number', 'boolean', 'array', 'object'] }, true, () => inputs[k].type, (v) => { if (v === undefined) delete inputs[k].type; else inputs[k].type = v; }, `inputs.${k}.type`),
        fieldFor('required', { type: 'boolean' }, false, () => inputs[k].required, (v) => { if (v === undefined) delete inputs[k].required; else inputs[k].required = v; }, `inputs.${k}.required`),
        fieldFor('default', {}, false, () => inputs[k].default, (v) => { if (v === undefined) delete inputs[k].default; else inputs[k].default = v; }, `inputs.${k}.default`),
        fieldFor('description', { type: 'string' }, false, () => inputs[k].description, (v) => { if (v === undefined) delete inputs[k].description; else inputs[k].description = v; }, `inputs.${k}.description`))),
      el('div', { class: 'b-link' }, el('label', { for: 'f-new-input' }, 'New input '), newName,
        el('button', { type: 'button', id: 'f-add-input', onclick: () => {
          const k = newName.value.trim();
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) { newNote.textContent = 'use letters, digits and _'; return; }
          if (inputs[k]) { newNote.textContent = `${k} exists`; return; }
          commit('', () => { doc.inputs = isObj(doc.inputs) ? doc.inputs : {}; doc.inputs[k] = { type: 'string' }; });
          inspect();
        } }, 'Add')), newNote,
      el('h3', {}, 'Defaults and output'),
      f('defaults', { type: 'object', description: 'db, collection, model, ... as {{ defaults.x }}' }),
      f('output', { description: 'what the run returns: a {{ reference }}, or an object of them' }),
      runSection());
    markFieldProblems();
  }

  // runSection starts a run of the workflow as it is now (the exported text): the console starts
  // it as the person's own, client-origin, definition.
  function runSection() {
    const start = {};
    for (const [k, v] of Object.entries(isObj(doc.inputs) ? doc.inputs : {})) if (isObj(v) && v.default !== undefined) start[k] = v.default;
    const ins = el('textarea', { id: 'b-run-inputs', rows: 3, spellcheck: 'false' }, JSON.stringify(start, null, 1));
    const status = el('p', { class: 'card-status', role: 'status', id: 'b-run-status' });
    const go = el('button', { type: 'button', id: 'b-run', onclick: async () => {
      let inputs;
      try { inputs = JSON.parse(ins.value || '{}'); } catch (err) { status.textContent = `the inputs are not valid JSON: ${err.message}`; return; }
      status.textContent = 'starting…';
      go.disabled = true;
      try {
        const r = await post('/v1/runs', { definition: JSON.parse(exportText()), inputs });
        leaving = true; // the run's page is where the person asked to go; the draft is kept
        window.location.assign(`/runs/${encodeURIComponent(r.id)}`);
      } catch (err) { status.textContent = err.message; go.disabled = false; }
    } }, 'Start a run');
    return [el('h3', {}, 'Run it'), el('div', { class: 'field' }, el('label', { for: 'b-run-inputs' }, 'inputs ', el('small', {}, 'JSON object')), ins), go, status];
  }

  function inspect() {
    const s = selected && stepById(selected);
    if (s) stepForm(s); else { selected = null; settingsForm(); }
    markSelected();
  }

  // ---- validation (POST /v1/workflows/validate, as every surface checks a file: line:col) ----
  function problemCounts() {
    const out = {};
    for (const d of problems) {
      const m = /^steps\[(\d+)\]/.exec(d.where || '');
      const s = m && steps()[Number(m[1])];
      if (!s) continue;
      const c = (out[s.id] = out[s.id] || { error: 0, warning: 0 });
      c[d.severity === 'warning' ? 'warning' : 'error']++;
    }
    return out;
  }
  // markFieldProblems shows the last validation's problems on the selected step's fields, and
  // takes away the ones it showed before: a field whose value changed since that validation (an
  // edge filled it, or it was typed in) shows none until the next one says.
  function markFieldProblems() {
    inspector.querySelectorAll('.field.b-problem').forEach((f) => f.classList.remove('b-problem'));
    inspector.querySelectorAll('.b-field-error[data-problem]').forEach((n) => { n.textContent = ''; delete n.dataset.problem; });
    const idx = steps().findIndex((s) => s.id === selected);
    const was = (checked && Array.isArray(checked.steps) && checked.steps[idx]) || {};
    const now = steps()[idx] || {};
    const value = (step, where) => JSON.stringify(where.startsWith('inputs.') ? (isObj(step.inputs) ? step.inputs[where.slice(7)] : undefined) : step[where.slice(5)]);
    for (const d of problems) {
      const m = /^steps\[(\d+)\]\.(inputs\.[A-Za-z0-9_]+|[A-Za-z]+)/.exec(d.where || '');
      if (!m || Number(m[1]) !== idx) continue;
      let where = m[2].startsWith('inputs.') ? m[2] : `step.${m[2]}`;
      const missing = where === 'step.inputs' && /required field "([A-Za-z0-9_]+)"/.exec(d.message);
      if (missing) where = `inputs.${missing[1]}`;
      if (value(was, where) !== value(now, where)) continue; // changed since: the next validation says
      const f = inspector.querySelector(`.field[data-field="${CSS.escape(where)}"]`);
      if (!f) continue;
      const note = f.querySelector('.b-field-error');
      f.classList.add('b-problem');
      note.textContent = d.message + (d.hint ? ` (${d.hint})` : '');
      note.dataset.problem = '';
    }
  }
  const validEl = document.getElementById('b-valid');
  const diagEl = document.getElementById('b-diagnostics');
  let vTimer = null, vSeq = 0;
  function validateSoon() {
    clearTimeout(vTimer);
    validEl.textContent = 'checking…';
    validEl.className = 'b-valid';
    vTimer = setTimeout(validate, 250);
  }
  async function validate() {
    const mine = ++vSeq;
    try {
      const source = exportText();
      const r = await post('/v1/workflows/validate', { source });
      if (mine !== vSeq) return;
      problems = r.diagnostics || [];
      checked = JSON.parse(source);
      const errors = problems.filter((d) => d.severity !== 'warning').length;
      validEl.textContent = r.valid ? (problems.length ? `valid, ${problems.length} warning${problems.length > 1 ? 's' : ''}` : 'valid') : `${errors} problem${errors > 1 ? 's' : ''}`;
      validEl.className = `b-valid ${r.valid ? 'ok' : 'bad'}`;
      diagEl.replaceChildren(...problems.map((d) => {
        const m = /^steps\[(\d+)\]/.exec(d.where || '');
        const s = m && steps()[Number(m[1])];
        return el('li', { class: d.severity, tabindex: 0, 'data-step': s ? s.id : null, onclick: () => { if (s) { selected = s.id; inspect(); focusNode(s.id); } } },
          `${d.line}:${d.col} ${d.severity === 'warning' ? 'warning' : 'error'}: ${s ? s.id + ': ' : ''}${d.where ? d.where + ': ' : ''}${d.message}${d.hint ? ' (' + d.hint + ')' : ''}`);
      }));
      if (r.valid && !problems.length) diagEl.replaceChildren(el('li', { class: 'ok' }, 'no problems'));
      root.dataset.validated = String(mine);
      decorate();
      markFieldProblems();
    } catch (err) {
      if (mine !== vSeq) return;
      validEl.textContent = `could not check: ${err.message}`;
      validEl.className = 'b-valid bad';
    }
  }

  // drawn is what the canvas shows; a change that alters none of it (most keystrokes in a form)
  // does not draw the canvas again.
  let drawn = '';
  function changed() {
    place(false);
    const now = JSON.stringify([steps().map((s) => s && [s.id, s.tool, s.name, !!s.forEach, !!s.condition, pos[s.id]]), edges(), selected]);
    if (now !== drawn) { drawn = now; render(); }
    document.getElementById('b-undo').disabled = !undo.length;
    document.getElementById('b-redo').disabled = !redo.length;
    document.getElementById('b-json').textContent = exportText();
    document.getElementById('b-title').textContent = doc.name || 'a new workflow';
    keepDraft();
    validateSoon();
  }

  // ---- the draft: the file being edited is kept in localStorage on every change, so a reload, a
  // nav click and Back, or a closed tab does not lose it; /build offers it again when it opens.
  // saved is the text as last imported or downloaded/copied: while the file differs from it the
  // page asks before it is left (beforeunload).
  const DRAFT = 'weft.builder.draft';
  let saved = '', booting = true, leaving = false;
  // target is the file of the operator's workflows folder a Save writes: the one opened
  // (?from=NAME) with the version it was opened at, the base of the next Save (a Save moves it on).
  // A file imported, pasted or dropped has none: it is saved under its name.
  let target = boot.source && boot.name ? { name: boot.name, version: Number.isInteger(boot.version) ? boot.version : 0 } : null;
  const unsaved = () => exportText() !== saved;
  function keepDraft() {
    if (booting) return;
    try { localStorage.setItem(DRAFT, JSON.stringify({ v: 1, text: exportText(), name: fileName, saved, orig, target, at: Date.now() })); }
    catch (err) { say(`the draft could not be kept in this browser (${err.message}): download the file before you leave`); }
  }
  function readDraft() {
    try {
      const d = JSON.parse(localStorage.getItem(DRAFT) || 'null');
      return d && d.v === 1 && typeof d.text === 'string' ? d : null;
    } catch (err) { return null; }
  }
  function restoreDraft(d) {
    if (!importText(d.text, `${d.name || 'workflow'}.json`)) return false;
    saved = typeof d.saved === 'string' ? d.saved : '';
    if (typeof d.orig === 'string') { try { origVal = JSON.parse(d.orig); orig = d.orig; } catch (err) { /* the draft's own text stays the original */ } }
    target = d.target && typeof d.target.name === 'string' && Number.isInteger(d.target.version) ? d.target : null;
    keepDraft();
    say(`restored the draft of ${fileName} from ${new Date(d.at || 0).toLocaleString()}${unsaved() ? ' (not downloaded yet)' : ''}`);
    return true;
  }
  const guard = (ev) => { if (leaving || !unsaved()) return undefined; ev.preventDefault(); ev.returnValue = ''; return ''; };
  window.addEventListener('beforeunload', guard);

  // ---- import and export ----
  const sayEl = el('p', { class: 'b-say', role: 'status', id: 'b-say' });
  document.querySelector('.b-bar').after(sayEl);
  function say(text) { sayEl.textContent = text || ''; sayEl.classList.remove('error'); }

  function importText(text, name) {
    let parsed;
    try { parsed = JSON.parse(text); } catch (err) { say(`not imported: the file is not valid JSON (${err.message})`); return false; }
    if (!isObj(parsed)) { say('not imported: a workflow file is a JSON object'); return false; }
    undo.push(JSON.stringify({ doc, pos }));
    redo.length = 0;
    doc = parsed; pos = {}; selected = null;
    orig = text; origVal = JSON.parse(text);
    if (name) fileName = name.replace(/\.json$/i, '');
    else if (typeof doc.name === 'string' && doc.name) fileName = doc.name;
    place(true);
    changed();
    inspect();
    requestAnimationFrame(fit);
    saved = exportText();
    keepDraft();
    say(`imported ${fileName}: ${steps().length} steps`);
    return true;
  }
  document.getElementById('b-import').addEventListener('change', (ev) => {
    const f = ev.target.files && ev.target.files[0];
    if (f) f.text().then((t) => { if (importText(t, f.name)) { target = null; keepDraft(); } });
    ev.target.value = '';
  });
  const paste = document.getElementById('b-paste');
  document.getElementById('b-paste-toggle').addEventListener('click', (ev) => {
    paste.hidden = !paste.hidden;
    ev.target.setAttribute('aria-expanded', String(!paste.hidden));
    if (!paste.hidden) document.getElementById('b-paste-text').focus();
  });
  document.getElementById('b-paste-load').addEventListener('click', () => {
    if (importText(document.getElementById('b-paste-text').value)) { target = null; keepDraft(); paste.hidden = true; document.getElementById('b-paste-text').value = ''; }
  });
  root.addEventListener('dragover', (ev) => { if (ev.dataTransfer && [...ev.dataTransfer.types].includes('Files')) { ev.preventDefault(); root.classList.add('b-dropping'); } });
  root.addEventListener('dragleave', () => root.classList.remove('b-dropping'));
  root.addEventListener('drop', (ev) => {
    root.classList.remove('b-dropping');
    const f = ev.dataTransfer && ev.dataTransfer.files && ev.dataTransfer.files[0];
    if (!f) return;
    ev.preventDefault();
    f.text().then((t) => { if (importText(t, f.name)) { target = null; keepDraft(); } });
  });
  // nameOf is the file's name: the folder's file it was opened from, else the workflow's own name
  // (a new workflow renamed in its settings is downloaded and saved under that name), else the
  // name of the file imported.
  const fileNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
  function nameOf() {
    if (target) return target.name;
    return typeof doc.name === 'string' && fileNamePattern.test(doc.name) ? doc.name : fileName;
  }
  document.getElementById('b-export').addEventListener('click', () => {
    const name = nameOf();
    const a = el('a', { href: URL.createObjectURL(new Blob([exportText()], { type: 'application/json' })), download: `${name}.json` });
    document.body.append(a);
    a.click();
    a.remove();
    saved = exportText(); keepDraft();
    say(`downloaded ${name}.json`);
  });

  // ---- Save (PUT /v1/workflows/{name}) and the saved versions (GET .../versions, .../diff,
  // POST .../versions/{version}/restore): the operation the HTTP API and weft workflows offer.
  const access = boot.save || { may: false, why: 'this page cannot tell whether you may save' };
  const saveBtn = document.getElementById('b-save');
  const saveNote = document.getElementById('b-save-note');
  const versionsBtn = document.getElementById('b-versions');
  const panel = document.getElementById('b-versions-panel');
  if (!access.may) {
    saveBtn.disabled = true;
    saveNote.hidden = false;
    saveNote.textContent = access.why;
  }
  function sayError(text) { say(text); sayEl.classList.add('error'); }
  async function save() {
    sayEl.classList.remove('error');
    const name = nameOf();
    let base = target && target.name === name ? target.version : null;
    if (base === null) { // a file not opened from the folder: what the folder holds under its name
      let w = null;
      try { w = await get(`/v1/workflows/${encodeURIComponent(name)}`); } catch (err) { if (err.status !== 404) { sayError(`not saved: ${err.message}`); return; } }
      if (w && !w.builtIn && !confirm(`The workflows folder has a file ${name} already: replace it with this one? (Its versions are kept: Versions restores any of them.)`)) return;
      base = w && !w.builtIn ? (w.version || 0) : 0;
    }
    const text = exportText();
    saveBtn.disabled = true;
    say(`saving ${name}…`);
    try {
      const r = await call('PUT', `/v1/workflows/${encodeURIComponent(name)}`, { content: text, base });
      target = { name, version: r.version.id };
      saved = text; // the unsaved-changes guard is disarmed until the next change
      keepDraft();
      say(r.created ? `saved ${name} as version ${r.version.id}` : `${name} holds this already: version ${r.version.id}`);
      if (!panel.hidden) showVersions();
    } catch (err) {
      if (err.status === 409) {
        sayError(`not saved: ${err.message}. What to do: Download this version to keep your change, open Versions to see what the newer one changed, then open the current file (Workflows, Edit in the builder) and make your change there, or Import your download and Save it over the current version once you have compared them.`);
      } else sayError(`not saved: ${err.message}`);
    } finally { saveBtn.disabled = !access.may; }
  }
  saveBtn.addEventListener('click', save);
  async function showVersions() {
    const name = nameOf();
    const head = el('h2', {}, `Saved versions of ${name}`);
    fill(panel, head, el('p', { class: 'note' }, 'reading…'));
    let vs;
    try { vs = (await get(`/v1/workflows/${encodeURIComponent(name)}/versions`)).versions || []; }
    catch (err) { fill(panel, head, el('p', { class: 'error' }, err.message)); return; }
    if (!vs.length) { fill(panel, head, el('p', { class: 'note' }, `${name} has no saved version yet: Save makes the first.`)); return; }
    const latest = vs[0].id;
    const diff = el('pre', { class: 'json b-diff', hidden: true, 'aria-label': 'diff' });
    const status = el('p', { class: 'b-versions-status', role: 'status' });
    const row = (v) => el('li', { class: 'b-version', 'data-version': v.id },
      el('strong', {}, `v${v.id}`), ' by ', el('span', { class: 'b-v-who' }, v.who), ', ',
      el('time', { datetime: v.when, title: v.when }, new Date(v.when).toLocaleString()),
      v.message ? ` — ${v.message}` : '', v.restored ? ` (restored v${v.restored})` : '', v.id === latest ? ' (current)' : '',
      v.id === latest ? null : el('button', { type: 'button', class: 'b-v-diff', onclick: async () => {
        try {
          const d = await get(`/v1/workflows/${encodeURIComponent(name)}/diff?${new URLSearchParams({ from: v.id, to: latest })}`);
          diff.hidden = false;
          diff.textContent = d.diff || `v${v.id} and v${latest} are the same`;
        } catch (err) { status.textContent = err.message; }
      } }, `Diff against v${latest}`),
      v.id === latest || !access.may ? null : el('button', { type: 'button', class: 'b-v-restore', onclick: () => restoreVersion(name, v.id, status) }, 'Restore'));
    fill(panel, head, el('ol', { class: 'b-version-list', reversed: true }, vs.map(row)), status, diff);
  }
  // restoreVersion saves version id's content as a new version and opens it in the builder.
  async function restoreVersion(name, id, status) {
    if (unsaved() && !confirm(`Restore v${id} of ${name}? The changes here that are not saved are lost (the draft is replaced).`)) return;
    try {
      const r = await post(`/v1/workflows/${encodeURIComponent(name)}/versions/${id}/restore`);
      const v = await get(`/v1/workflows/${encodeURIComponent(name)}/versions/${r.version.id}`);
      importText(v.content, `${name}.json`);
      target = { name, version: r.version.id };
      saved = exportText();
      keepDraft();
      say(r.created ? `restored v${id} of ${name} as version ${r.version.id}` : `${name} holds v${id}'s content already: version ${r.version.id}`);
      showVersions();
    } catch (err) { status.textContent = `not restored: ${err.message}`; status.classList.add('error'); }
  }
  versionsBtn.addEventListener('click', () => {
    panel.hidden = !panel.hidden;
    versionsBtn.setAttribute('aria-expanded', String(!panel.hidden));
    if (!panel.hidden) showVersions();
  });
  document.getElementById('b-copy').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(exportText());
      saved = exportText(); keepDraft();
      say('copied the workflow JSON');
    } catch (err) {
      const pre = document.getElementById('b-json');
      pre.closest('details').open = true;
      const range = document.createRange();
      range.selectNodeContents(pre);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      say(document.execCommand('copy') ? 'copied the workflow JSON' : 'the JSON is selected below: press Ctrl+C');
    }
  });
  document.getElementById('b-settings').addEventListener('click', () => { selected = null; inspect(); });
  editor.on('nodeUnselected', () => { if (!syncing && selected && !canvas.querySelector('.drawflow-node.selected')) { selected = null; inspect(); } });
  document.getElementById('b-undo').addEventListener('click', () => restore(undo, redo));
  document.getElementById('b-redo').addEventListener('click', () => restore(redo, undo));
  document.addEventListener('keydown', (ev) => {
    const typing = ev.target.closest && ev.target.closest('input, textarea, select');
    if (typing || !(ev.ctrlKey || ev.metaKey)) return;
    if (ev.key.toLowerCase() === 'c' && !ev.shiftKey && !String(window.getSelection() || '')) { if (copySteps()) ev.preventDefault(); return; }
    if (ev.key.toLowerCase() === 'v' && !ev.shiftKey) { if (pasteSteps()) ev.preventDefault(); return; }
    if (ev.key.toLowerCase() === 'a' && !ev.shiftKey && canvas.contains(document.activeElement)) { // on the canvas: every step
      ev.preventDefault();
      picked.clear();
      steps().forEach((s) => { if (s && typeof s.id === 'string') picked.add(s.id); });
      markSelected();
      say(`${picked.size} steps selected`);
      return;
    }
    if (ev.key.toLowerCase() === 'z' && !ev.shiftKey) { ev.preventDefault(); restore(undo, redo); }
    else if ((ev.key.toLowerCase() === 'z' && ev.shiftKey) || ev.key.toLowerCase() === 'y') { ev.preventDefault(); restore(redo, undo); }
  });

  // for tests and for people at the console: the model's entry points
  window.__weftBuilder = { importText, exportText, addStep, connect: link, fit,
    view: () => ({ zoom: editor.zoom, x: editor.canvas_x, y: editor.canvas_y }), visible: () => mmCanvas.view(),
    drawflowLinks: () => { dfOf.forEach((df) => editor.updateConnectionNodes(`node-${df}`)); }, positions: () => clone(pos),
    unsaved, guard: () => { const ev = new Event('beforeunload', { cancelable: true }); return !window.dispatchEvent(ev); } };

  palette();
  const draft = readDraft();
  let offered = false;
  if (boot.source) {
    importText(boot.source, boot.name);
    if (draft && draft.text !== exportText()) { // a file was asked for: the draft is offered, not put over it
      const b = el('button', { type: 'button', id: 'b-restore-draft', onclick: () => { b.remove(); restoreDraft(draft); } },
        `Restore the draft of ${draft.name || 'workflow'}`);
      sayEl.after(b);
      offered = true; // kept until this file is changed or the draft restored
    }
  } else if (!(draft && restoreDraft(draft))) { place(true); changed(); inspect(); saved = exportText(); }
  booting = false;
  if (!offered) keepDraft();
  undo.length = 0;
  document.getElementById('b-undo').disabled = true;
  window.__weftBuilderReady = true;
  window.__weftBuilderReadyAt = performance.now();
})();
