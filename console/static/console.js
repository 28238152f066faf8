// weft console. Hand-written, no dependencies. Every value from a run is put into the page with
// textContent or setAttribute, never as HTML.
(() => {
  'use strict';
  const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || '';
  const SVG = 'http://www.w3.org/2000/svg';

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    for (const k of kids.flat(Infinity)) {
      if (k === null || k === undefined || k === false) continue;
      e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    }
    return e;
  }
  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    setAttrs(e, attrs);
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  function setAttrs(e, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  // fill replaces target's children by kids as el takes them (arrays flattened; null, undefined and
  // false left out): replaceChildren itself writes an array or a null as text.
  function fill(target, ...kids) {
    target.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined && k !== false));
  }
  // setText writes text into e only when it changed: a live region is read out on a change, and
  // text written again every second would be read out every second.
  function setText(e, text) {
    if (e && e.textContent !== text) e.textContent = text;
  }
  function pretty(v) { return JSON.stringify(v, null, 2); }
  function jsonBlock(v, open) {
    const text = pretty(v === undefined ? null : v);
    const pre = el('pre', { class: 'json' }, text);
    if (text.length < 400) return pre;
    return el('details', { open: open || null }, el('summary', {}, `${text.length.toLocaleString()} characters of JSON`), pre);
  }
  // problem is an error answer in words: /v1's problem details (RFC 9457: detail, and each field
  // error's), or the console's own {error}.
  function problem(j) {
    if (!j) return '';
    if (j.error) return j.error;
    const fields = (j.errors || []).map((e) => e.detail).filter((d) => d && d !== j.detail);
    return [j.detail || j.title, ...fields].filter(Boolean).join('; ');
  }
  async function post(url, body) {
    const r = await fetch(url, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify(body || {}),
    });
    const j = await r.json().catch(() => ({ error: r.statusText }));
    if (!r.ok) throw new Error(problem(j) || r.statusText);
    return j;
  }
  async function get(url) {
    const r = await fetch(url, { credentials: 'same-origin' });
    const j = await r.json().catch(() => ({ error: r.statusText }));
    if (!r.ok) throw new Error(problem(j) || r.statusText);
    return j;
  }
  // Times and durations, written as console/format.go writes them (TestFormats holds the two to
  // the same examples): a time is relative ("3 min ago") with the absolute local time as its
  // tooltip; a duration is 850 ms, 1.2 s, 3 min 4 s, 2 h 5 min or 1 d 3 h.
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n) => String(n).padStart(2, '0');
  function absTime(t) {
    const d = new Date(t);
    const zone = (d.toLocaleTimeString('en-US', { timeZoneName: 'short' }).split(' ').pop()) || '';
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${zone}`;
  }
  function fmtAgo(t, now) {
    const ms = (now === undefined ? Date.now() : now) - new Date(t).getTime();
    const s = Math.floor(Math.abs(ms) / 1000);
    if (s < 5) return 'just now';
    let v;
    if (s < 60) v = `${s} s`;
    else if (s < 3600) v = `${Math.floor(s / 60)} min`;
    else if (s < 86400) v = `${Math.floor(s / 3600)} h`;
    else if (s < 7 * 86400) v = `${Math.floor(s / 86400)} d`;
    else { const d = new Date(t); return `${d.getDate()} ${MONTHS[d.getMonth()]} ${d.getFullYear()}`; }
    return ms < 0 ? `in ${v}` : `${v} ago`;
  }
  function fmtDuration(ms) {
    if (ms === undefined || ms === null || ms === '') return '';
    ms = Math.max(0, Math.floor(Number(ms)));
    if (ms < 1000) return `${ms} ms`;
    if (ms < 60000) { const t = Math.floor(ms / 100); return `${Math.floor(t / 10)}.${t % 10} s`; }
    const s = Math.floor(ms / 1000);
    const two = (a, ua, b, ub) => (b ? `${a} ${ua} ${b} ${ub}` : `${a} ${ua}`);
    if (s < 3600) return two(Math.floor(s / 60), 'min', s % 60, 's');
    if (s < 86400) return two(Math.floor(s / 3600), 'h', Math.floor((s % 3600) / 60), 'min');
    return two(Math.floor(s / 86400), 'd', Math.floor((s % 86400) / 3600), 'h');
  }
  const fmtMs = fmtDuration;
  // timeEl is a <time> for t that tick() keeps current.
  function timeEl(t) {
    if (!t) return '';
    return el('time', { datetime: new Date(t).toISOString(), title: absTime(t) }, fmtAgo(t));
  }
  function tick() {
    document.querySelectorAll('time[datetime]').forEach((e) => {
      setText(e, fmtAgo(e.dateTime));
    });
  }
  window.weftFormat = { fmtAgo, fmtDuration, absTime };
  function fmtCost(u) {
    if (!u) return '';
    const parts = [];
    const tokens = Number(u.totalTokens || 0) + Number(u.embeddingTokens || 0);
    if (tokens) parts.push(`${tokens.toLocaleString()} tokens`);
    if (u.costUsd) parts.push(`$${Number(u.costUsd).toFixed(4)}`);
    return parts.join(' · ');
  }

  // ---- the graph ----
  const NODE_W = 168, NODE_H = 48, GAP_X = 28, GAP_Y = 46, PAD = 16;

  // fitLabel cuts a node's name, as drawn, to room pixels (the space left of its status mark),
  // with "…"; the full name stays in the node's title and aria-label. Drawn widths differ by
  // font and by letter, so it measures; a graph not on the page yet is cut by length.
  function fitLabel(label, full, room) {
    const width = () => label.getComputedTextLength();
    if (width() === 0) {
      if (full.length > 16) label.textContent = full.slice(0, 15) + '…';
      return;
    }
    if (width() <= room) return;
    let lo = 1, hi = full.length - 1; // the longest prefix that fits, found in log n measures
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      label.textContent = full.slice(0, mid) + '…';
      if (width() <= room) lo = mid; else hi = mid - 1;
    }
    label.textContent = full.slice(0, lo) + '…';
  }
  const MARK = { then: 'then', else: 'else', dependsOn: 'after' };
  // A step's status is shown by a mark and a word as well as a colour (and in its accessible name).
  const STATUS_MARK = { pending: '○', running: '⟳', completed: '✓', failed: '✕', skipped: '⤼', not_run: '·', cancelled: '⊘', rejected: '⊘', awaiting_review: '⏸' };
  // own reads a mark table's own key only ("constructor" is not a status)
  const own = (table, k) => (Object.hasOwn(table, k) ? table[k] : '');
  // statusWord is a status in words ("awaiting_review" → "awaiting review"); statusClass its CSS
  // class, one token whatever the status holds ("not run" → s-not-run).
  const statusWord = (st) => String(st).replaceAll('_', ' ');
  const statusClass = (st) => `s-${String(st).toLowerCase().replace(/[^a-z0-9_-]/g, '-')}`;
  // statusText is a status as a mark and words ("✓ completed").
  const statusText = (st) => `${own(STATUS_MARK, st)} ${statusWord(st)}`.trim();
  function nodeName(n, status) {
    return `${n.name || n.id}, ${n.tool} step (${n.category})${status ? ': ' + statusWord(status) : ''}`;
  }
  function showStatus(g, n, status) {
    const mark = g.querySelector('.st-mark');
    if (mark) mark.textContent = own(STATUS_MARK, status);
    g.setAttribute('aria-label', nodeName(n, status));
  }

  // drawGraph lays out the steps in the plan's layers, top to bottom, and returns the node
  // elements by step id.
  function drawGraph(svgEl, graph, onSelect) {
    svgEl.replaceChildren();
    const nodes = new Map();
    if (!graph || !graph.nodes) return nodes;
    const widest = Math.max(1, ...graph.layers.map((l) => l.length));
    // A long, narrow plan (a chain) is laid out in bands of BAND layers side by side, so it is
    // read at a useful size instead of as one tall column.
    const BAND = 10;
    const bands = graph.layers.length > BAND * 1.5 && widest <= 3 ? Math.ceil(graph.layers.length / BAND) : 1;
    const rows = bands > 1 ? BAND : graph.layers.length;
    const bandW = widest * (NODE_W + GAP_X) - GAP_X + (bands > 1 ? 2 * GAP_X : 0);
    const pos = new Map();
    graph.layers.forEach((layer, li) => {
      const band = bands > 1 ? Math.floor(li / BAND) : 0, row = bands > 1 ? li % BAND : li;
      const offset = PAD + band * bandW + (bandW - (layer.length * (NODE_W + GAP_X) - GAP_X)) / 2;
      layer.forEach((id, i) => pos.set(id, { x: offset + i * (NODE_W + GAP_X), y: PAD + row * (NODE_H + GAP_Y) }));
    });
    // An edge into a later band goes down, along the gap below its row, up the gap left of its
    // step's column and in from above, instead of across the nodes. Edges that share one of these
    // gaps each take a lane of their own in it (LANE apart), so that none is drawn over another:
    // by the row they leave, the column they go up and the row they enter. The lanes below the
    // last row and above the first widen the graph's margins; the gap between two rows holds both
    // the lanes below the upper and those above the lower, squeezed to fit it when they must.
    const LANE = 5;
    const across = graph.edges.filter((e) => pos.get(e.from) && pos.get(e.to) && pos.get(e.to).y <= pos.get(e.from).y);
    const laneOf = new Map(); // edge -> {down, up, enter}: its lane in each gap
    const lanes = (key, order, kind) => {
      const groups = new Map();
      for (const e of across) {
        const k = key(e);
        if (!groups.has(k)) groups.set(k, []);
        groups.get(k).push(e);
      }
      let most = 0;
      for (const g of groups.values()) {
        g.sort(order);
        // edges into the same step share their way in
        const ways = [...new Set(g.map((e) => (kind === 'down' ? e : e.to)))];
        most = Math.max(most, ways.length);
        g.forEach((e) => { laneOf.set(e, Object.assign(laneOf.get(e) || {}, { [kind]: ways.indexOf(kind === 'down' ? e : e.to), [kind + 'Of']: ways.length })); });
      }
      return most;
    };
    const at = (id) => pos.get(id);
    const below = lanes((e) => Math.round(at(e.from).y), (a, b) => at(a.from).x - at(b.from).x, 'down');
    lanes((e) => Math.round(at(e.to).x), (a, b) => at(a.to).y - at(b.to).y || at(a.from).x - at(b.from).x, 'up');
    const above = lanes((e) => Math.round(at(e.to).y), (a, b) => at(a.to).x - at(b.to).x, 'enter');
    const extraTop = Math.max(0, above - 1) * LANE, extraBottom = Math.max(0, below - 1) * LANE;
    if (extraTop) pos.forEach((p) => { p.y += extraTop; });
    const width = bands * bandW + 2 * PAD;
    const height = Math.max(rows * (NODE_H + GAP_Y) - GAP_Y + 2 * PAD, NODE_H + 2 * PAD) + extraTop + extraBottom;
    svgEl.setAttribute('viewBox', `0 0 ${width} ${height}`);
    svgEl.setAttribute('width', width);
    svgEl.setAttribute('height', height);
    zoomable(svgEl);
    // The lanes of the gap under row r: those below r (from GAP_Y/3 under it, down) and those
    // above r + 1 (from GAP_Y/3 over it, up), LANE apart while they fit so; else all of them
    // evenly over the gap, 6 px clear of either row, so that none meets another or a row's steps.
    const rowOf = (p) => Math.round((p.y - PAD - extraTop) / (NODE_H + GAP_Y));
    const downs = new Map(), enters = new Map(); // row -> how many lanes below it, above it
    for (const e of across) {
      const l = laneOf.get(e);
      downs.set(rowOf(at(e.from)), l.downOf);
      enters.set(rowOf(at(e.to)), l.enterOf);
    }
    const gapLanes = (r) => {
      const n = (downs.get(r) || 0) + (enters.get(r + 1) || 0);
      if (r < 0 || r >= rows - 1 || n <= 1) return { step: LANE, off: GAP_Y / 3 }; // a margin: it grew
      const step = Math.min(LANE, (GAP_Y - 2 * 6) / (n - 1));
      return { step, off: Math.min(GAP_Y / 3, (GAP_Y - (n - 1) * step) / 2) };
    };
    // An edge down past rows between (a step waits for one several layers up) would pass behind
    // the steps of those rows as a curve, as if it went through one of them: when it would, it goes
    // down the gap beside its step to the gap below its row, along it to a column free of steps in
    // every row it passes, down that column and along the gap above its step, in from above. The
    // edges that share a column each take a lane of it.
    const boxes = [...pos.entries()];
    const curve = (x1, y1, x2, y2) => (t) => {
      const u = 1 - t, my = (y1 + y2) / 2;
      return [u * u * u * x1 + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t * t * t * x2, u * u * u * y1 + 3 * u * u * t * my + 3 * u * t * t * my + t * t * t * y2];
    };
    const behind = (e, pts) => boxes.some(([id, p]) => id !== e.from && id !== e.to &&
      pts.some(([x, y]) => x > p.x - 2 && x < p.x + NODE_W + 2 && y > p.y - 2 && y < p.y + NODE_H + 2));
    const columnOf = (e, a, b) => {
      // the free x nearest the middle of the edge's ends, in every row strictly between them
      const between = boxes.filter(([, p]) => p.y > a.y && p.y < b.y).map(([, p]) => [p.x - GAP_X / 2, p.x + NODE_W + GAP_X / 2]);
      const want = (a.x + b.x) / 2 + NODE_W / 2;
      const free = (x) => between.every(([l, r]) => x <= l || x >= r);
      const cands = [want, ...between.flatMap(([l, r]) => [l, r])].filter(free);
      return cands.reduce((best, x) => (Math.abs(x - want) < Math.abs(best - want) ? x : best), cands[0]);
    };
    const skips = new Map(); // edge -> its column, for the edges that go round
    for (const e of graph.edges) {
      const a = pos.get(e.from), b = pos.get(e.to);
      if (!a || !b || b.y <= a.y + NODE_H + GAP_Y) continue;
      const c = curve(a.x + NODE_W / 2, a.y + NODE_H, b.x + NODE_W / 2, b.y);
      const pts = Array.from({ length: 41 }, (_, i) => c(i / 40));
      if (behind(e, pts)) skips.set(e, Math.round(columnOf(e, a, b)));
    }
    const column = new Map(); // x -> the edges down it, in order
    skips.forEach((x, e) => { if (!column.has(x)) column.set(x, []); column.get(x).push(e); });
    const edges = svg('g', { class: 'edges' });
    for (const e of graph.edges) {
      const a = pos.get(e.from), b = pos.get(e.to);
      if (!a || !b) continue;
      const x1 = a.x + NODE_W / 2, y1 = a.y + NODE_H, x2 = b.x + NODE_W / 2, y2 = b.y;
      const my = (y1 + y2) / 2;
      let d = `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2}`;
      if (skips.has(e)) {
        const x = skips.get(e), all = column.get(x), k = all.indexOf(e);
        const lane = (k - (all.length - 1) / 2) * Math.min(LANE, (GAP_X - 8) / Math.max(1, all.length - 1));
        const off = GAP_Y / 2 + (k - (all.length - 1) / 2) * Math.min(4, (GAP_Y - 16) / Math.max(1, all.length - 1));
        d = `M${x1},${y1} V${y1 + off} H${x + lane} V${y2 - off} H${x2} V${y2}`;
      } else if (y2 <= y1) {
        const l = laneOf.get(e);
        const up = b.x - GAP_X / 2 + (l.up - (l.upOf - 1) / 2) * Math.min(LANE, (GAP_X - 8) / Math.max(1, l.upOf - 1));
        // it leaves right of the middle, where no edge to the next row runs straight down
        const under = gapLanes(rowOf(a)), over = gapLanes(rowOf(b) - 1);
        d = `M${a.x + NODE_W * 3 / 4},${y1} V${y1 + under.off + l.down * under.step} H${up} V${y2 - over.off - l.enter * over.step} H${x2} V${y2}`;
      }
      edges.append(svg('path', { class: `edge k-${e.kind}`, d, 'data-from': e.from, 'data-to': e.to }));
      if (MARK[e.kind]) edges.append(svg('text', { class: 'edge-label', x: (x1 + x2) / 2 + 4, y: my - 3 }, MARK[e.kind]));
    }
    svgEl.append(edges);
    for (const n of graph.nodes) {
      const p = pos.get(n.id);
      if (!p) continue;
      const g = svg('g', { class: `node c-${n.category} st-pending`, transform: `translate(${p.x},${p.y})`, 'data-step': n.id, tabindex: 0, role: 'button', 'aria-label': nodeName(n, '') });
      if (n.forEach || n.loop) g.append(svg('rect', { class: 'stack', x: 5, y: -5, width: NODE_W, height: NODE_H, rx: 7 }));
      g.append(svg('rect', { class: 'box', width: NODE_W, height: NODE_H, rx: 7 }));
      g.append(svg('rect', { class: 'band', width: 6, height: NODE_H, rx: 3 }));
      const title = n.name || n.id;
      // the words drawn in the node are aria-hidden: its accessible name (nodeName) says them
      // whole (the drawn name may be cut), so the name holds all the node shows
      const label = svg('text', { class: 'label', x: 14, y: 20, 'aria-hidden': 'true' }, title);
      g.append(label);
      g.append(svg('text', { class: 'st-mark', x: NODE_W - 8, y: 20, 'text-anchor': 'end', 'aria-hidden': 'true' }, ''));
      const marks = [n.tool];
      if (n.forEach) marks.push('forEach');
      if (n.loop) marks.push('loop');
      if (n.condition) marks.push('if');
      if (n.branch) marks.push(n.branch.split(': ')[1]);
      g.append(svg('text', { class: 'sub', x: 14, y: 38, 'aria-hidden': 'true' }, marks.join(' · ')));
      g.append(svg('text', { class: 'progress', x: NODE_W - 8, y: 38, 'text-anchor': 'end', 'aria-hidden': 'true' }, ''));
      // the tooltip says more than the name: aria-hidden, or it would be read as the node's content
      g.append(svg('title', { 'aria-hidden': 'true' }, `${n.id} (${n.tool}, ${n.category})${n.condition ? '\nif ' + n.condition : ''}${n.forEach ? '\nforEach ' + n.forEach : ''}${n.branch ? '\nbranch ' + n.branch : ''}`));
      const select = () => onSelect && onSelect(n.id);
      g.addEventListener('click', select);
      g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') select(); });
      svgEl.append(g);
      fitLabel(label, title, NODE_W - 14 - 24);
      nodes.set(n.id, g);
    }
    minimap(svgEl, pos);
    return nodes;
  }

  // minimap gives a graph that does not fit its box the console's minimap (static/minimap.js):
  // the graph's svg is the canvas, its box's scroll the view. The steps' status classes follow
  // the graph's.
  function minimap(svgEl, pos) {
    const map = svgEl.closest('.graph-frame') && svgEl.closest('.graph-frame').querySelector('svg.minimap');
    const wrap = svgEl.closest('.graph-wrap');
    if (!map || !wrap || !window.weftMinimap) return;
    const vb = svgEl.viewBox.baseVal;
    const zoom = () => svgEl.getBoundingClientRect().width / vb.width || 1;
    // where the graph starts in the box's scrolled content (below the zoom controls)
    const offset = () => svgEl.getBoundingClientRect().top - wrap.getBoundingClientRect().top - wrap.clientTop + wrap.scrollTop;
    const nodes = [...svgEl.querySelectorAll('g.node')].filter((g) => pos.get(g.dataset.step));
    const first = !map.weftMinimap;
    const mm = window.weftMinimap(map, {
      world: () => ({ x: 0, y: 0, width: vb.width, height: vb.height }),
      nodes: () => nodes.map((g) => ({ ...pos.get(g.dataset.step), width: NODE_W, height: NODE_H,
        class: [...g.classList].filter((c) => c.startsWith('st-') || c.startsWith('c-') || c === 'has-review').join(' ') })),
      view: () => {
        const z = zoom(), top = offset();
        return { x: wrap.scrollLeft / z, y: Math.max(0, wrap.scrollTop - top) / z, width: wrap.clientWidth / z, height: (wrap.clientHeight - top) / z, scale: z };
      },
      centre: (x, y) => {
        const z = zoom();
        wrap.scrollLeft = x * z - wrap.clientWidth / 2;
        wrap.scrollTop = y * z + offset() - wrap.clientHeight / 2;
      },
    });
    if (!first) return;
    new MutationObserver(() => mm.draw()).observe(svgEl, { subtree: true, attributes: true, attributeFilter: ['class', 'width'] });
    wrap.addEventListener('scroll', () => mm.place(), { passive: true });
  }

  // zoomable gives a drawn graph zoom (buttons, Ctrl+wheel), pan (drag the background, or
  // scroll) and Fit; the zoom is kept when the graph is drawn again. A graph that fits at half
  // size or more is fitted when first drawn.
  function zoomable(svgEl) {
    const wrap = svgEl.closest('.graph-wrap');
    if (!wrap) return;
    const vb = svgEl.viewBox.baseVal;
    const fitZoom = () => {
      const bar = wrap.querySelector('.zoom-controls');
      const h = Math.min(wrap.clientHeight || Infinity, window.innerHeight * 0.78) - (bar ? bar.offsetHeight : 0);
      return Math.min(1, (wrap.clientWidth - 8) / vb.width, (h - 8) / vb.height);
    };
    const set = (z) => {
      z = Math.max(0.1, Math.min(2, z));
      svgEl.dataset.zoom = String(z);
      svgEl.setAttribute('width', Math.round(vb.width * z));
      svgEl.setAttribute('height', Math.round(vb.height * z));
      const label = wrap.querySelector('.zoom-level');
      if (label) label.textContent = `${Math.round(z * 100)}%`;
    };
    if (!wrap.querySelector('.zoom-controls')) {
      const z = () => Number(svgEl.dataset.zoom || 1);
      wrap.prepend(el('div', { class: 'zoom-controls', role: 'toolbar', 'aria-label': 'Zoom the graph' },
        el('button', { type: 'button', class: 'zoom-out', 'aria-label': 'Zoom out', onclick: () => set(z() / 1.25) }, '−'),
        el('span', { class: 'zoom-level', 'aria-live': 'polite' }, '100%'),
        el('button', { type: 'button', class: 'zoom-in', 'aria-label': 'Zoom in', onclick: () => set(z() * 1.25) }, '+'),
        el('button', { type: 'button', class: 'zoom-fit', onclick: () => set(fitZoom()) }, 'Fit')));
      wrap.addEventListener('wheel', (ev) => {
        if (!ev.ctrlKey) return;
        ev.preventDefault();
        set(z() * (ev.deltaY > 0 ? 0.9 : 1.1));
      }, { passive: false });
      let pan = null;
      svgEl.addEventListener('pointerdown', (ev) => {
        if (ev.button !== 0 || ev.target.closest('.node')) return;
        pan = { x: ev.clientX, y: ev.clientY, l: wrap.scrollLeft, t: wrap.scrollTop };
        svgEl.setPointerCapture(ev.pointerId);
        svgEl.classList.add('panning');
      });
      svgEl.addEventListener('pointermove', (ev) => {
        if (!pan) return;
        wrap.scrollLeft = pan.l - (ev.clientX - pan.x);
        wrap.scrollTop = pan.t - (ev.clientY - pan.y);
      });
      const stop = () => { pan = null; svgEl.classList.remove('panning'); };
      svgEl.addEventListener('pointerup', stop);
      svgEl.addEventListener('pointercancel', stop);
      if (!svgEl.dataset.zoom) {
        const f = fitZoom();
        svgEl.dataset.zoom = String(f < 1 && f >= 0.5 ? f : 1);
      }
    }
    set(Number(svgEl.dataset.zoom || 1));
  }

  function legend(target, graph) {
    if (!target || !graph) return;
    const cats = [...new Set(graph.nodes.map((n) => n.category))].sort();
    target.replaceChildren(...cats.map((c) => el('span', { class: `chip c-${c}` }, c)));
  }

  // ---- reviews ----
  function reviewer() {
    const f = document.getElementById('reviewer');
    if (f && f.value.trim()) { localStorage.setItem('weft-reviewer', f.value.trim()); return f.value.trim(); }
    return localStorage.getItem('weft-reviewer') || '';
  }

  // A minimal JSON Schema check so an edit that cannot be accepted is caught before it is sent;
  // the workflow checks the full schema again.
  function schemaProblems(v, schema, path) {
    if (!schema || typeof schema !== 'object') return [];
    const out = [];
    const type = Array.isArray(v) ? 'array' : v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v;
    const want = schema.type ? [].concat(schema.type) : null;
    if (want && !want.includes(type) && !(type === 'integer' && want.includes('number'))) {
      out.push(`${path || 'the data'}: want ${want.join(' or ')}, got ${type}`);
      return out;
    }
    if (type === 'object') {
      for (const r of schema.required || []) if (!(r in v)) out.push(`${path || 'the data'}: "${r}" is required`);
      for (const [k, s] of Object.entries(schema.properties || {})) if (k in v) out.push(...schemaProblems(v[k], s, `${path}/${k}`));
    }
    if (type === 'array' && schema.items) v.forEach((x, i) => out.push(...schemaProblems(x, schema.items, `${path}/${i}`)));
    return out;
  }

  const PAST = { approve: 'approved', edit: 'edited and approved', reject: 'rejected' };

  // settling: a review card that is decided, or being decided, stays when its gate is gone.
  function settling(card) { return card.classList.contains('decided') || card.classList.contains('sending'); }

  // decidedText is a decided gate's line: what was decided, by whom (a login's name, or a label
  // typed on the console's machine), when, and the comment.
  function decidedText(d) {
    const who = d.reviewer ? `${d.reviewer}${d.authenticated === false ? ' (a typed name)' : ''}` : 'unknown';
    const always = d.scope === 'run' ? ` — and the later calls of ${d.tool || 'its tool'} in this run` : '';
    return [`${PAST[d.decision] || d.decision} by ${who}`, d.decidedAt ? [' ', timeEl(d.decidedAt)] : '', d.comment ? ' — “' + d.comment + '”' : '', always];
  }
  // settle turns a card into its decided form: the decision in words, the controls gone.
  function settle(card, d) {
    const status = card.querySelector('.card-status');
    card.classList.remove('sending');
    [...card.classList].filter((c) => c.startsWith('d-')).forEach((c) => card.classList.remove(c));
    card.classList.add('decided', `d-${d.decision}`);
    status.classList.remove('error');
    fill(status, decidedText(d));
    card.querySelectorAll('.actions, .edit-data, .send-edit, .comment, .may-not').forEach((x) => x.remove());
  }
  // decidedCard is a gate the run records decided (the snapshot's decided: its state), shown on
  // every reload and to every viewer.
  function decidedCard(runId, d) {
    const card = el('article', { class: 'card', 'data-review': d.id, 'data-run': runId },
      el('h3', {}, d.title || d.id),
      el('p', { class: 'meta' }, el('a', { href: `/runs/${encodeURIComponent(runId)}` }, runId), ` · gate ${d.id}`),
      el('p', { class: 'card-status', role: 'status' }));
    settle(card, d);
    return card;
  }

  // reviewCard is a pending gate. access (ReviewAccess) says who may decide it and whether the
  // viewer may: the card says who before anyone clicks, and only who may gets the buttons (the
  // run refuses anyone else's decision all the same).
  function reviewCard(runId, r, access, onDecided) {
    const may = !access || access.mayDecide !== false;
    const status = el('p', { class: 'card-status', role: 'status' });
    const comment = el('input', { class: 'comment', placeholder: 'comment (optional; required to reject)', 'aria-label': 'comment' });
    const editor = el('textarea', { class: 'edit-data', hidden: true, spellcheck: 'false', 'aria-label': 'edited data' });
    const sendEdit = el('button', { type: 'button', class: 'send-edit', hidden: true }, 'Send edit');
    const buttons = [];
    const card = el('article', { class: 'card', 'data-review': r.id, 'data-run': runId });
    const fail = (msg) => { status.textContent = msg; status.classList.add('error'); };
    // scope 'run' (a tool call's Approve always / Reject always): the tool's later calls in the
    // run are decided the same way, without asking.
    async function decide(decision, data, scope) {
      buttons.forEach((b) => { b.disabled = true; });
      status.classList.remove('error');
      status.textContent = 'sending…';
      // The gate may be gone from the next state update before this answer arrives: a card
      // being decided stays until it can say who decided what.
      card.classList.add('sending');
      try {
        // digest binds the decision to the data this card shows: refused if it changed since.
        const body = { review: r.id, decision, comment: comment.value, reviewer: reviewer(), digest: r.digest || '' };
        if (data !== undefined) body.data = data;
        if (scope) body.scope = scope;
        // POST /v1/runs/{id}/reviews answers the decision recorded (its proto JSON leaves out a
        // false authenticated: a typed name)
        const d = await post(`/v1/runs/${encodeURIComponent(runId)}/reviews`, body);
        settle(card, Object.assign({ decidedAt: new Date().toISOString(), authenticated: false }, d, { tool: r.tool }));
        if (onDecided) onDecided(r.id);
      } catch (err) {
        fail(err.message);
        buttons.forEach((b) => { b.disabled = false; });
      } finally {
        card.classList.remove('sending');
      }
    }
    const approve = el('button', { type: 'button', class: 'approve', onclick: () => decide('approve') }, 'Approve');
    const edit = el('button', { type: 'button', class: 'edit', onclick: () => {
      editor.hidden = !editor.hidden; sendEdit.hidden = editor.hidden;
      if (!editor.hidden && !editor.value) editor.value = pretty(r.data === undefined ? null : r.data);
    } }, 'Edit');
    const reject = el('button', { type: 'button', class: 'reject', onclick: () => {
      if (!comment.value.trim()) { fail('say why in the comment, then press Reject again'); comment.focus(); return; }
      decide('reject');
    } }, 'Reject');
    sendEdit.addEventListener('click', () => {
      let data;
      try { data = JSON.parse(editor.value); } catch (err) { fail(`not valid JSON: ${err.message}`); return; }
      const problems = schemaProblems(data, r.schema, '');
      if (problems.length) { fail(problems.join('; ')); return; }
      status.classList.remove('error');
      decide('edit', data);
    });
    // A tool call may be decided for the rest of the run (weft review --always).
    const always = r.kind === 'tool_call' ? [
      el('button', { type: 'button', class: 'approve-always', title: `approve this call and the later calls of ${r.tool} in this run`,
        onclick: () => decide('approve', undefined, 'run') }, 'Approve always'),
      el('button', { type: 'button', class: 'reject-always', title: `reject this call and the later calls of ${r.tool} in this run`, onclick: () => {
        if (!comment.value.trim()) { fail('say why in the comment, then press Reject always again'); comment.focus(); return; }
        decide('reject', undefined, 'run');
      } }, 'Reject always')] : [];
    buttons.push(approve, edit, reject, sendEdit, ...always);
    fill(card,
      el('h3', {}, r.title || r.id),
      el('p', { class: 'meta' },
        el('a', { href: `/runs/${encodeURIComponent(runId)}` }, runId), ` · gate ${r.id}`,
        r.kind === 'tool_call' ? ` · tool call ${r.tool}` : '',
        r.requestedAt ? [' · asked ', timeEl(r.requestedAt)] : '',
        r.deadline ? [` · ${r.onTimeout || 'fail'} `, timeEl(r.deadline)] : ''),
      r.instructions ? el('p', { class: 'instructions' }, r.instructions) : null,
      access && access.deciders ? el('p', { class: 'deciders' }, `Who may decide: ${access.deciders}.`) : null,
      jsonBlock(r.data, true),
      may ? [comment, el('div', { class: 'actions' }, approve, edit, reject, ...always), editor, sendEdit]
        : el('p', { class: 'may-not note' }, `You may not decide it: ${access.why || 'the review does not name you'}.`),
      status);
    return card;
  }

  // ---- run page ----
  // ---- a step's iterations and items (run page detail) ----
  function statusBadge(status) {
    const st = status || 'pending';
    return el('span', { class: `status ${statusClass(st)}` }, statusText(st));
  }
  function preview(v, max) {
    if (v === undefined) return '';
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    return text.length > max ? text.slice(0, max - 1) + '…' : text;
  }
  function messageText(m) {
    if (!m) return '';
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return m.content.map((p) => (p && typeof p.text === 'string' ? p.text : '')).join('');
    return '';
  }
  // modelTexts maps iteration → the model's text in that iteration: the step's output holds the
  // conversation, one assistant message per iteration, the last one the last iteration's (a run
  // resumed by weft fork starts with the earlier run's, so they are matched from the end).
  function modelTexts(s, last) {
    const out = new Map();
    const msgs = s.output && Array.isArray(s.output.messages) ? s.output.messages : null;
    if (!msgs) return out;
    const said = msgs.filter((m) => m && m.role === 'assistant');
    for (let k = 0; k < said.length && last - k >= 1; k++) out.set(last - k, messageText(said[said.length - 1 - k]));
    return out;
  }
  function callView(c, k) {
    const fk = `call-${c.id || `${c.iteration || 0}.${k}`}`;
    const head = el('div', { class: 'call-head' },
      el('strong', {}, c.tool || '(no tool)'), ' ', statusBadge(c.status),
      c.durationMs ? ` · ${fmtMs(c.durationMs)}` : '',
      c.decision ? ` · ${c.decision}${c.reviewer ? ' by ' + c.reviewer : ''}${c.reviewMs ? ' after ' + fmtMs(c.reviewMs) : ''}` : '');
    return el('li', { class: 'call', 'data-tool': c.tool || '' }, head,
      c.comment ? el('p', { class: 'note' }, `“${c.comment}”`) : null,
      c.error ? el('pre', { class: 'error' }, c.error) : null,
      el('details', { class: 'call-args' }, el('summary', { 'data-fk': `${fk}-args` }, 'arguments'), jsonBlock(c.arguments === undefined ? null : c.arguments, true)),
      c.result !== undefined ? el('details', { class: 'call-result' }, el('summary', { 'data-fk': `${fk}-result` }, 'result'), jsonBlock(c.result, true)) : null);
  }
  // iterationsView groups an agent step's tool calls by iteration, one <details> each (the last
  // open), with the model's text of each iteration when the step's output has the conversation.
  function iterationsView(s, ui) {
    const calls = s.toolCalls || [];
    if (Number(s.itemsTotal) > 0) {
      // under forEach every item counts its iterations from 1: grouping by iteration would merge
      // the items' calls, so they are listed as they were recorded
      return el('section', { class: 'iterations', 'aria-label': 'Tool calls' },
        el('h3', {}, `Tool calls (${calls.length})`),
        el('p', { class: 'note calls-note' }, 'calls of all items, in the order they finished'),
        calls.length ? el('ol', { class: 'calls' }, calls.map(callView)) : null);
    }
    const byIter = new Map();
    let last = Number(s.iterations || (s.output && s.output.iterations) || 0);
    for (const c of calls) {
      const i = Number(c.iteration || 0);
      if (!byIter.has(i)) byIter.set(i, []);
      byIter.get(i).push(c);
      last = Math.max(last, i);
    }
    const texts = modelTexts(s, last);
    const first = Math.min(1, ...byIter.keys());
    const groups = [];
    for (let i = first; i <= last; i++) {
      const cs = byIter.get(i) || [];
      const text = texts.get(i);
      if (!cs.length && text === undefined && i !== last) continue;
      const failed = cs.filter((c) => c.status === 'failed' || c.status === 'rejected').length;
      const open = ui.iterOpen.has(i) ? ui.iterOpen.get(i) : i === last;
      const d = el('details', { class: 'iteration', 'data-iteration': i, open: open || null },
        el('summary', { 'data-fk': `iteration-${i}` }, el('strong', {}, `Iteration ${i}`),
          ` · ${cs.length ? `${cs.length} tool call${cs.length === 1 ? '' : 's'}` : 'no tool calls'}${failed ? ` (${failed} failed or rejected)` : ''}`),
        text ? el('div', { class: 'model-text' }, el('span', { class: 'note' }, 'model: '), text) : null,
        cs.length ? el('ol', { class: 'calls' }, cs.map(callView)) : null);
      d.addEventListener('toggle', () => { if (d.open !== open) ui.iterOpen.set(i, d.open); else ui.iterOpen.delete(i); });
      groups.push(d);
    }
    return el('section', { class: 'iterations', 'aria-label': 'Iterations' },
      el('h3', {}, `Iterations (${last})`, calls.length ? ` · ${calls.length} tool call${calls.length === 1 ? '' : 's'}` : ''), groups);
  }
  // itemResults reads a forEach's (or loop's) output: {results, count} ({results, errors:
  // [{index, error}]} for a loop), or an array; null when the output is not there.
  function itemResults(s) {
    const o = s.output;
    if (Array.isArray(o)) return { results: o, errors: new Map() };
    if (!o || !Array.isArray(o.results)) return null;
    const errors = new Map();
    for (const e of Array.isArray(o.errors) ? o.errors : []) if (e && e.index !== undefined) errors.set(Number(e.index), e.error);
    return { results: o.results, errors };
  }
  const ITEMS_PAGE = 50;
  // itemsView is a forEach step's items, ITEMS_PAGE rows a page: index, status, a preview of the
  // item's output and a button that shows the whole of it. told is what the run's events said of
  // the items while the step runs (the state query has no per-item state): told.items maps an
  // index to {status, error}; told.whole says every item event of the step was seen (an item with
  // none is pending, or not run once the step ended): not so for a step whose items ran in batch
  // child workflows (workflows/step_batches.go), which records no item events in this run, so an
  // item of it with no result is "pending or running" or "unknown"; told.reviews is the ids of the
  // gates waiting.
  function itemsView(s, ui, tool, told) {
    told = told || { items: new Map(), whole: false, reviews: new Set() };
    const total = Number(s.itemsTotal);
    // a forEach of reviews keeps each item's decision as its output, a reject too, and when the
    // step failed, "undecided" for the items nobody decided (workflows/step_foreach.go)
    const review = (tool || s.tool) === 'review';
    const decided = (v) => {
      if (!review || !v || typeof v !== 'object') return '';
      if (v.decision === 'reject') return 'rejected';
      if (v.decision === 'undecided') return 'undecided';
      return '';
    };
    const r = itemResults(s);
    const failedItem = /^item (\d+):/.exec(s.error || '');
    const section = el('section', { class: 'items', 'aria-label': 'Items' });
    const pages = Math.max(1, Math.ceil(total / ITEMS_PAGE));
    ui.page = Math.min(ui.page, pages - 1);
    const itemStatus = (i) => {
      if (r && r.errors.has(i)) return 'failed';
      const out = r && i < r.results.length ? r.results[i] : undefined;
      const d = decided(out);
      if (d) return d;
      if (failedItem && Number(failedItem[1]) === i) return 'failed';
      if (out !== null && out !== undefined) return 'completed';
      const live = s.status === 'running' || s.status === 'awaiting_review';
      const t = told.items.get(i);
      if (t && t.status !== 'running') return t.status;
      if (t && live) return told.reviews.has(`${s.id}[${i}]`) ? 'awaiting_review' : 'running';
      if (s.status === 'completed') return 'completed';
      if (live) return told.whole ? 'pending' : 'pending or running';
      if (told.whole) return 'not run';
      return r ? 'not run' : 'unknown';
    };
    function draw(focusSel) {
      const from = ui.page * ITEMS_PAGE, to = Math.min(total, from + ITEMS_PAGE);
      const rows = [];
      for (let i = from; i < to; i++) {
        const has = r && i < r.results.length;
        const out = has ? r.results[i] : undefined;
        const err = (r && r.errors.get(i)) || (told.items.get(i) || {}).error;
        const open = ui.itemOpen.has(i);
        const btn = has || err ? el('button', { type: 'button', class: 'item-open', 'data-fk': `item-${i}`, 'aria-expanded': open ? 'true' : 'false', 'aria-label': `output of item ${i}`,
          onclick: () => { if (ui.itemOpen.has(i)) ui.itemOpen.delete(i); else ui.itemOpen.add(i); draw(`tr[data-item="${i}"] .item-open`); } }, open ? 'hide' : 'show') : null;
        rows.push(el('tr', { 'data-item': i }, el('td', {}, String(i)), el('td', {}, statusBadge(itemStatus(i))),
          el('td', { class: 'item-preview' }, err ? preview(err, 80) : has ? preview(out, 80) : '—'), el('td', {}, btn)));
        if (open) rows.push(el('tr', { class: 'item-output', 'data-item-output': i }, el('td', { colspan: 4 }, err ? el('pre', { class: 'error' }, String(err)) : null, has ? jsonBlock(out, true) : null)));
      }
      const prev = el('button', { type: 'button', class: 'items-prev', 'data-fk': 'items-prev', disabled: ui.page === 0 || null, onclick: () => { ui.page--; draw('.items-prev'); } }, '‹ Prev');
      const next = el('button', { type: 'button', class: 'items-next', 'data-fk': 'items-next', disabled: ui.page >= pages - 1 || null, onclick: () => { ui.page++; draw('.items-next'); } }, 'Next ›');
      const where = el('span', { class: 'items-range', 'aria-live': 'polite' }, total ? `items ${from + 1}–${to} of ${total}` : 'no items');
      fill(section,
        el('h3', {}, `Items (${Number(s.itemsDone || 0)}/${total} done)`),
        r ? null : el('p', { class: 'note' }, s.outputTruncated ? 'the output is too large for the state query: the items\u2019 outputs are not shown (see weft status or the Temporal UI)' : 'each item\u2019s output shows here when the step has finished'),
        pages > 1 ? el('div', { class: 'pager items-pager' }, prev, ' ', where, ' ', next) : el('p', { class: 'note items-range' }, where.textContent),
        el('table', { class: 'items' }, el('thead', {}, el('tr', {}, el('th', {}, 'index'), el('th', {}, 'status'), el('th', {}, 'output'), el('th', {}, ''))), el('tbody', {}, rows)));
      // the button pressed was replaced: focus its counterpart so the keyboard stays in place
      const f = focusSel && (section.querySelector(focusSel + ':not([disabled])') || section.querySelector('.items-pager button:not([disabled])'));
      if (f) f.focus();
    }
    draw();
    return section;
  }

  function runPage(root) {
    const view = JSON.parse(root.dataset.run);
    const runId = view.id;
    const svgEl = document.getElementById('graph');
    const detail = document.getElementById('detail');
    let selected = null;
    let snap = view.snapshot;
    let steps = new Map();
    const seen = (window.__weftSeen = window.__weftSeen || {});
    const nodes = drawGraph(svgEl, view.graph, (id) => { selected = id; showDetail(); });
    const nodeInfo = new Map(((view.graph && view.graph.nodes) || []).map((n) => [n.id, n]));
    const cards = new Map();
    const pending = document.getElementById('pending');
    // What the person opened or paged to in a step's detail, kept while live updates redraw it.
    const views = new Map();
    // told is what the run's events said (the stream sends them from the run's first, then as
    // they happen): when steps started and ended, and each forEach item's state by step, so that
    // the graph, the timeline and the items move between snapshots. started: the steps whose
    // step_started was seen; partial: the stream skipped events (the run keeps the last 2000).
    const told = { steps: new Map(), items: new Map(), started: new Set(), partial: false, decided: new Map() };
    const ITEM_STATUS = { item_started: 'running', item_completed: 'completed', item_failed: 'failed' };
    // an item cancelled in flight (another item failed, another step failed, the run was
    // cancelled) is recorded as item_failed with errorKind "cancelled" (workflows.ErrorKind, by
    // the error's type): it was cancelled, not failed, and an item whose own error merely reads
    // "cancelled" (errorKind "failed") failed. Events of workers older than errorKind carry the
    // cancellation's text alone (workflows.ErrorText of a CanceledError), read as before. The
    // item a step's error names ("item N:") is shown failed whatever its event says.
    const CANCELLED = new Set(['cancelled', 'canceled']);
    const itemCancelled = (e, error) => (typeof e.errorKind === 'string' && e.errorKind
      ? e.errorKind === 'cancelled' : CANCELLED.has(error.trim().toLowerCase()));
    const STEP_END = { step_completed: 'completed', step_failed: 'failed', step_cancelled: 'cancelled', step_skipped: 'skipped' };
    function onEvent(e) {
      if (!e || typeof e !== 'object' || typeof e.event !== 'string') return false;
      const id = typeof e.step === 'string' ? e.step : '';
      const at = typeof e.time === 'string' && !Number.isNaN(Date.parse(e.time)) ? e.time : new Date().toISOString();
      if (e.event === 'events_skipped') { told.partial = true; return false; }
      if (!id || !nodeInfo.has(id)) return false; // a step of a child run, or of no step
      if (e.event === 'review_decided') {
        const key = typeof e.key === 'string' && e.key ? e.key : id;
        if (typeof e.decision !== 'string' || !e.decision) return false;
        told.decided.set(key, { id: key, step: id, title: (e.review && e.review.title) || key, decision: e.decision,
          reviewer: typeof e.reviewer === 'string' ? e.reviewer : '', decidedAt: at });
        showReviews();
        return false;
      }
      if (e.event === 'step_started') {
        told.items.delete(id);
        told.started.add(id);
        told.steps.set(id, { status: 'running', startedAt: at });
      } else if (Object.hasOwn(STEP_END, e.event)) {
        // the event's own state says which ending (step_skipped carries skipped or not_run)
        const told_ = e.state && typeof e.state.status === 'string' && e.state.status ? e.state.status : STEP_END[e.event];
        const o = Object.assign({}, told.steps.get(id), { status: told_ });
        if (o.startedAt) o.finishedAt = at;
        if (typeof e.error === 'string' && e.error) o.error = e.error;
        told.steps.set(id, o);
      } else if (Object.hasOwn(ITEM_STATUS, e.event)) {
        if (!Number.isInteger(e.item) || e.item < 0) return false;
        if (!told.items.has(id)) told.items.set(id, new Map());
        const error = typeof e.error === 'string' ? e.error : '';
        const status = e.event === 'item_failed' && itemCancelled(e, error) ? 'cancelled' : ITEM_STATUS[e.event];
        told.items.get(id).set(e.item, { status, error });
      } else return false;
      return true;
    }
    // merged is a step of the snapshot x with what the events told of it since (o): the snapshot
    // wins where it knows as much (it is read after the events it follows).
    function merged(x, o) {
      if (!o || x.finishedAt || (x.startedAt && !o.finishedAt)) return x;
      if (!['pending', 'running', 'awaiting_review', undefined, ''].includes(x.status)) return x;
      const out = Object.assign({}, x, { status: o.status, startedAt: x.startedAt || o.startedAt });
      if (o.finishedAt) out.finishedAt = o.finishedAt;
      if (o.error && !x.error) out.error = o.error;
      return out;
    }
    const viewState = (id) => {
      if (!views.has(id)) views.set(id, { iterOpen: new Map(), page: 0, itemOpen: new Set() });
      return views.get(id);
    };

    // shown is the step the detail panel shows: its live part (redrawn on every snapshot, the
    // keyboard focus kept on the counterpart of what had it) and its inputs and "Run this step
    // alone" form, built once for the step (the form keeps its text, focus and caret while the
    // run goes on) and the inputs read again only when the step's status changed.
    let shown = null;
    function showDetail() {
      if (!selected) return;
      nodes.forEach((g, id) => g.classList.toggle('selected', id === selected));
      const s = steps.get(selected) || { id: selected, status: 'pending' };
      const n = nodeInfo.get(selected) || {};
      const rows = [
        ['status', s.status + (s.reason ? ` (${s.reason})` : '')],
        ['tool', `${n.tool || s.tool || ''}${n.category ? ' · ' + n.category : ''}`],
        ['attempts', s.attempts || ''],
        ['duration', fmtMs(s.durationMs)],
        ['items', s.itemsTotal ? `${s.itemsDone || 0}/${s.itemsTotal}` : ''],
        ['iterations', s.iterations || ''],
        ['usage', fmtCost(s.usage)],
        ['summary', s.summary || ''],
      ].filter(([, v]) => v !== '' && v !== undefined);
      const parts = [el('h2', {}, n.name || selected), el('dl', {}, rows.map(([k, v]) => [el('dt', {}, k), el('dd', {}, String(v))]))];
      if (!shown || shown.id !== selected) {
        shown = { id: selected, live: el('div', { class: 'detail-live' }), inputsBox: el('div', { class: 'detail-inputs' }), status: undefined };
        shown.alone = n.kind !== 'inline' && runsAlone(n) ? el('div', { class: 'alone' }) : null;
        detail.replaceChildren(shown.live, shown.inputsBox, shown.alone || '');
      }
      const here = shown;
      if (s.error) parts.push(el('h3', {}, 'Error'), el('pre', { class: 'error' }, s.error));
      for (const w of s.warnings || []) parts.push(el('p', { class: 'warning' }, w));
      const text = snap && !snap.closed && s.status === 'running' && snap.streaming && snap.streaming[selected];
      if (text) {
        // a new attempt's text (a worker died mid-answer, the call runs again; a repair) is the
        // server's in place of the text before (console/stream.go): shown instead of it, marked
        const attempt = Number((snap.streamingAttempt || {})[selected]) || 1;
        parts.push(el('h3', {}, 'Streaming'));
        if (attempt > 1) parts.push(el('p', { class: 'note stream-restarted' }, `restarted after a retry (attempt ${attempt}): the text streamed before is discarded`));
        parts.push(el('pre', { class: 'stream' }, text));
      }
      const ui = viewState(selected);
      if ((s.toolCalls && s.toolCalls.length) || (s.iterations > 1)) parts.push(iterationsView(s, ui));
      if (s.itemsTotal) {
        const reviews = new Set(((snap && snap.state && snap.state.pendingReviews) || []).map((r) => r.id));
        // the item list is whole only when the step's items ran here: a step that started and
        // told of no item ran them in batch child workflows (their events are in those runs)
        const items = told.items.get(selected) || new Map();
        parts.push(itemsView(s, ui, n.tool, { items, whole: told.started.has(selected) && !told.partial && items.size > 0, reviews }));
      }
      parts.push(el('h3', {}, 'Output'));
      parts.push(s.outputTruncated ? el('p', { class: 'note' }, 'too large for the state query: see weft status or the Temporal UI') : jsonBlock(s.output));
      const focused = focusKey(here.live);
      here.live.replaceChildren(...parts);
      refocus(here.live, focused);
      if (here.status === s.status) return;
      here.status = s.status;
      const written = n.inputs ? [el('h3', {}, 'As written'), jsonBlock(n.inputs)] : null;
      if (Object.hasOwn(IN_WORKFLOW, n.kind || '')) {
        // decided or computed inside the workflow: there is no activity call in the history to read
        fill(here.inputsBox, el('h3', {}, 'Inputs'), el('p', { class: 'note inline-note' }, `${n.tool} ${IN_WORKFLOW[n.kind]} (no activity call): its inputs as written are below, resolved against the steps it reads.`), written);
        return;
      }
      const inputs = el('div', { class: 'inputs' }, el('p', { class: 'note' }, 'loading the resolved inputs…'));
      fill(here.inputsBox, el('h3', {}, 'Inputs'), inputs, written);
      const status = s.status;
      get(`/v1/runs/${encodeURIComponent(runId)}/steps/${encodeURIComponent(here.id)}/inputs`).then((c) => {
        if (shown !== here || here.status !== status) return;
        if (!c.total) inputs.replaceChildren(el('p', { class: 'note' }, c.note || 'no calls'));
        else inputs.replaceChildren(el('p', { class: 'note' }, c.total > 1 ? `${c.total} calls; the first ${c.inputs.length} shown` : '1 call'), ...c.inputs.map((i) => jsonBlock(i)));
        if (!here.alone) return;
        const prefill = c.total ? c.inputs[0] : n.inputs;
        if (here.aloneForm) here.aloneForm.prefill(prefill);
        else here.aloneForm = aloneForm(here.alone, n, ui, prefill);
      }).catch((err) => { if (shown === here) inputs.replaceChildren(el('p', { class: 'error' }, err.message)); });
    }
    // the kinds of step (toolspec.Kind) the workflow runs itself, with no activity call
    const IN_WORKFLOW = { inline: 'is a data tool computed inside the workflow', review: 'is a review the workflow waits on for a decision', control: 'is control flow the workflow runs itself' };
    // focusKey names the element of box that has the keyboard focus (its data-fk), refocus gives
    // the focus to the element of that name after box was drawn again.
    function focusKey(box) {
      const a = document.activeElement;
      const k = a && box.contains(a) ? a.closest('[data-fk]') : null;
      return k && box.contains(k) ? k.dataset.fk : null;
    }
    function refocus(box, key) {
      if (!key) return;
      const e = box.querySelector(`[data-fk="${CSS.escape(key)}"]`);
      if (e && !e.disabled) e.focus({ preventScroll: true });
    }

    // runsAlone: the steps "Run this step alone" is offered for: a tool that is an activity (I/O,
    // a model call), not a review, an agent, a called workflow, a loop or an inline data tool
    // (those are the workflow's own logic, with no activity call whose inputs could be replayed).
    function runsAlone(n) {
      return n && n.kind === 'activity' && !n.loop && !!n.tool;
    }

    // aloneForm: "Run this step alone" opens a JSON text of the step's inputs (the first call's,
    // resolved; the inputs as written when no call was recorded) that "Run" starts as a one-step
    // workflow of its own through POST /v1/runs, as the playground's edited text is: the
    // person's own definition (client origin), checked as any client's is.
    // aloneName names the one-step workflow "<workflow>-<step>-alone", the workflow's name cut
    // short so the whole stays within the 200 characters a name may have (a step id has 64 at
    // most; the schema counts characters, not bytes).
    function aloneName(workflow, id) {
      const suffix = `-${id}-alone`;
      const wf = [...(workflow || 'run')];
      return wf.slice(0, Math.max(1, 200 - [...suffix].length)).join('') + suffix;
    }
    // aloneDropped: the step's settings a run of it alone does not have.
    function aloneDropped(n) {
      const out = [];
      if (n.timeout) out.push(`timeout ${n.timeout}`);
      if (n.retry) out.push('retry');
      if (n.forEach) out.push(n.concurrency ? `forEach (concurrency ${n.concurrency})` : 'forEach');
      if (n.condition) out.push(`condition ${n.condition}`);
      return out;
    }
    function aloneForm(box, n, ui, prefill) {
      if (ui.aloneText === undefined) ui.aloneText = pretty(prefill === undefined ? {} : prefill);
      const open = el('button', { type: 'button', class: 'alone-open' }, 'Run this step alone');
      const text = el('textarea', { class: 'alone-inputs', rows: 10, spellcheck: 'false', 'aria-label': `Inputs of ${n.id} run alone (JSON)` });
      text.value = ui.aloneText;
      text.addEventListener('input', () => { ui.aloneText = text.value; ui.aloneEdited = true; });
      const status = el('p', { class: 'card-status alone-status', role: 'status' }, ui.aloneStatus || '');
      if (ui.aloneError) status.classList.add('error');
      const say = (msg, error) => {
        ui.aloneStatus = msg;
        ui.aloneError = error;
        status.textContent = msg;
        status.classList.toggle('error', !!error);
      };
      const runBtn = el('button', { type: 'submit', class: 'alone-run' }, 'Run');
      const dropped = aloneDropped(n);
      const form = el('form', { class: 'alone-form', hidden: !ui.aloneOpen },
        el('label', {}, `Inputs of ${n.tool} (JSON): edit them, then Run starts a new run of this step alone`), text,
        dropped.length ? el('p', { class: 'note alone-dropped' }, `Not carried over from the step: ${dropped.join(', ')}. The new run calls ${n.tool} once with these inputs, with its default timeout and retries.`) : null,
        runBtn, status);
      open.addEventListener('click', () => { ui.aloneOpen = !ui.aloneOpen; form.hidden = !ui.aloneOpen; if (ui.aloneOpen) text.focus(); });
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        let inputs;
        try {
          inputs = JSON.parse(text.value);
        } catch (err) { say(`the inputs are not valid JSON: ${err.message}`, true); return; }
        if (!inputs || typeof inputs !== 'object' || Array.isArray(inputs)) { say('the inputs must be a JSON object ({"name": value, ...})', true); return; }
        const def = { name: aloneName(view.workflow, n.id), steps: [{ id: n.id, tool: n.tool, inputs }], output: `{{ ${n.id}.output }}` };
        say('starting…', false);
        runBtn.disabled = true;
        try {
          const r = await post('/v1/runs', { definition: def, inputs: {} });
          window.location.assign(`/runs/${encodeURIComponent(r.id)}`);
        } catch (err) { say(err.message, true); runBtn.disabled = false; }
      });
      box.replaceChildren(open, form);
      return {
        // the inputs read again (the step's status changed): shown unless the person opened or
        // edited the text
        prefill(v) {
          if (ui.aloneOpen || ui.aloneEdited) return;
          ui.aloneText = text.value = pretty(v === undefined ? {} : v);
        },
      };
    }

    // showReviews draws the run's gates: the pending ones as cards (kept while the run goes on, so
    // an edit in progress survives updates), and those the run says were decided — its state (the
    // snapshot's decided, with the comment) or, for what the state does not hold yet (a forEach
    // of reviews still running), its review_decided events — as decided cards (a gate the state
    // lists waiting is waiting): a card shown
    // waiting turns decided, one this page never saw waiting (a reload, another viewer's
    // decision) is drawn decided.
    function showReviews() {
      const st = snap.state || {};
      const decided = new Map(told.decided);
      for (const d of snap.decided || []) decided.set(d.id, d);
      const live = new Set();
      const access = snap.reviewAccess || {};
      for (const r of st.pendingReviews || []) {
        live.add(r.id);
        if (!cards.has(r.id)) {
          const c = reviewCard(r.executionId && r.executionId !== runId ? r.executionId : runId, r, access[r.id] || { mayDecide: true });
          cards.set(r.id, c);
          pending.append(c);
        }
      }
      decided.forEach((d, id) => {
        if (live.has(id)) return; // waiting again (a gate of a loop's next turn)
        const c = cards.get(id);
        if (!c) { const n = decidedCard(runId, d); cards.set(id, n); pending.append(n); } else if (!c.classList.contains('sending')) settle(c, d);
      });
      cards.forEach((c, id) => { if (!live.has(id) && !decided.has(id) && !settling(c)) { c.remove(); cards.delete(id); } });
      document.getElementById('pending-section').hidden = !cards.size;
    }

    function apply(s) {
      snap = s;
      const st = s.state || {};
      const status = st.status && !s.closed ? st.status : s.status;
      const badge = document.getElementById('run-status');
      badge.textContent = status;
      badge.className = `status ${statusClass(status)}`;
      document.getElementById('run-usage').textContent = fmtCost(st.usage) || 'no model or embedding calls yet';
      const errEl = document.getElementById('run-error');
      errEl.hidden = !(st.error || s.stateError);
      errEl.textContent = st.error || (s.stateError ? `state unavailable: ${s.stateError}` : '');
      // Cancel and Retry only for who may (view.mayAct): the server refuses the others still
      document.getElementById('cancel').hidden = s.closed || view.mayAct === false;
      const retry = document.getElementById('retry');
      if (retry) retry.hidden = !s.retryable || view.mayAct === false;
      if (st.output !== undefined) document.getElementById('run-output').replaceChildren(jsonBlock(st.output, true));
      showReviews();
      render();
    }

    // render draws the steps as the last snapshot and the run's events since say: the graph's
    // marks, the timeline and the step shown.
    function render() {
      const list = (snap.state && snap.state.steps) || [];
      steps = new Map();
      for (const x of list) steps.set(x.id, merged(x, told.steps.get(x.id)));
      told.steps.forEach((o, id) => { if (!steps.has(id)) steps.set(id, Object.assign({ id }, o)); });
      const reviewing = ((snap.state && snap.state.pendingReviews) || []).map((r) => r.id);
      const now = Date.now();
      nodes.forEach((g, id) => {
        const x = steps.get(id);
        const stepStatus = (x && x.status) || 'pending';
        showStatus(g, nodeInfo.get(id) || { id, tool: '', category: '' }, stepStatus);
        const cls = `st-${stepStatus}`;
        if (!g.classList.contains(cls)) {
          [...g.classList].filter((c) => c.startsWith('st-')).forEach((c) => g.classList.remove(c));
          g.classList.add(cls);
          seen[id] = seen[id] || {};
          seen[id][stepStatus] = now;
        }
        const prog = g.querySelector('.progress');
        const p = x && x.itemsTotal ? `${x.itemsDone || 0}/${x.itemsTotal}` : x && x.durationMs ? fmtMs(x.durationMs) : '';
        setText(prog, p);
      });
      nodes.forEach((g, id) => g.classList.toggle('has-review', reviewing.some((r) => r === id || r.startsWith(id + '[') || r.startsWith(id + '/'))));
      drawTimeline([...steps.values()]);
      if (selected) showDetail();
    }

    // drawTimeline: one bar per step of list (render's steps, as the server resolved them) that started,
    // from its start to its end (now, while it runs) on one time axis; the bar says the status in
    // words and its title the duration. While the same steps are shown the bars are updated in
    // place (the live updates and the clock move them every second: the bar under the pointer or
    // the keyboard stays the same element); a new step draws them again.
    let tl = { ids: '', rows: new Map(), axis: null };
    function drawTimeline(list) {
      const box = document.getElementById('timeline');
      if (!box) return;
      const ran = list.filter((x) => x.startedAt);
      document.getElementById('timeline-section').hidden = !ran.length;
      if (!ran.length) { box.replaceChildren(); tl = { ids: '', rows: new Map(), axis: null }; return; }
      const now = snap.closed && snap.ended ? Date.parse(snap.ended) : Date.now();
      const span = (x) => {
        const a = Date.parse(x.startedAt);
        const b = x.finishedAt ? Date.parse(x.finishedAt) : Math.max(a, now);
        return [a, b];
      };
      const t0 = Math.min(...ran.map((x) => span(x)[0]));
      const t1 = Math.max(t0 + 1, ...ran.map((x) => span(x)[1]));
      const ids = ran.map((x) => x.id).join('\n');
      if (ids !== tl.ids || !box.contains(tl.axis)) {
        // the bars are drawn again: the one that had the keyboard focus gets it back
        const had = focusKey(box);
        tl = { ids, rows: new Map(), axis: el('div', { class: 'tl-axis', 'aria-hidden': 'true' }, el('span', {}, '0'), el('span', {}), el('span', {})) };
        const rows = [];
        for (const x of ran) {
          const name = (nodeInfo.get(x.id) || {}).name || x.id;
          const note = el('span', { class: 'note' });
          const bar = el('button', {
            type: 'button', class: 'tl-bar', 'data-step': x.id, 'data-fk': `tl-${x.id}`,
            onclick: () => { selected = x.id; showDetail(); detail.scrollIntoView({ block: 'nearest' }); },
          });
          tl.rows.set(x.id, { bar, note });
          rows.push(el('div', { class: 'tl-label', title: name }, name, ' ', note), el('div', { class: 'tl-track' }, bar));
        }
        box.replaceChildren(...rows, tl.axis);
        refocus(box, had);
      }
      const set = (e, k, v) => { if (e.getAttribute(k) !== v) e.setAttribute(k, v); };
      for (const x of ran) {
        const { bar, note } = tl.rows.get(x.id);
        const [a, b] = span(x);
        const st = x.status || 'pending';
        const name = (nodeInfo.get(x.id) || {}).name || x.id;
        const took = x.durationMs ? fmtMs(x.durationMs) : fmtMs(b - a);
        const what = `${name}: ${statusWord(st)} · ${took}${x.finishedAt ? '' : ' so far'}`;
        const word = statusText(st);
        set(bar, 'class', `tl-bar ${statusClass(st)}`);
        set(bar, 'title', what);
        set(bar, 'aria-label', what);
        setText(bar, word);
        setText(note, `· ${word}`);
        // through the CSSOM: the page's CSP allows no style attributes
        bar.style.left = `${((a - t0) / (t1 - t0)) * 100}%`;
        bar.style.width = `${Math.max(0.4, ((b - a) / (t1 - t0)) * 100)}%`;
      }
      setText(tl.axis.children[1], fmtMs((t1 - t0) / 2));
      setText(tl.axis.children[2], fmtMs(t1 - t0));
    }

    document.getElementById('cancel').addEventListener('click', async (ev) => {
      if (!confirm(`Cancel ${runId}? Steps in flight are cancelled; finished steps keep their results.`)) return;
      ev.target.disabled = true;
      try {
        const r = await post(`/v1/runs/${encodeURIComponent(runId)}/cancel`);
        // a stuck run (its workflow task kept failing) was terminated: say so, and why
        if (r && r.terminated) alert(`${runId} could not take a cancel and was terminated: ${r.reason || ''}`);
      } catch (err) { alert(err.message); ev.target.disabled = false; }
    });
    // Retry: a new run (weftclient.Retry) that reuses the steps this one completed; the page goes
    // to it. A refusal (the run cannot be resumed, the login may not start runs) is written here.
    const retryBtn = document.getElementById('retry');
    if (retryBtn) retryBtn.addEventListener('click', async () => {
      const status = document.getElementById('retry-status');
      retryBtn.disabled = true;
      status.hidden = false;
      status.classList.remove('error');
      status.textContent = 'starting a new run that reuses the completed steps…';
      try {
        const r = await post(`/v1/runs/${encodeURIComponent(runId)}/retry`);
        window.location.assign(`/runs/${encodeURIComponent(r.id)}`);
      } catch (err) {
        status.textContent = `Retry refused: ${err.message}`;
        status.classList.add('error');
        retryBtn.disabled = false;
      }
    });
    apply(snap);
    // A closed run's events are read too when a forEach of it failed or was cancelled without its
    // items' outcomes in the state (such a step has no output): its item events say which items
    // completed, which failed and why, and which never ran.
    const untold = ((snap.state && snap.state.steps) || []).some((x) => Number(x.itemsTotal) > 0 && ['failed', 'cancelled'].includes(x.status) && !itemResults(x));
    if (snap.closed && !snap.stateError && !untold) return;
    const es = new EventSource(`/api/runs/${encodeURIComponent(runId)}/events`);
    es.addEventListener('snapshot', (ev) => apply(JSON.parse(ev.data)));
    // the run's events between snapshots: drawn at most every 100 ms (a forEach's items come in
    // bursts)
    let drawing = null;
    es.addEventListener('run-event', (ev) => {
      let e;
      try { e = JSON.parse(ev.data); } catch { return; }
      if (!onEvent(e) || drawing) return;
      drawing = setTimeout(() => { drawing = null; render(); }, 100);
    });
    // a running step's bar grows with the time it takes, between snapshots too
    const growing = setInterval(() => {
      if (snap.closed) { clearInterval(growing); return; }
      if ([...steps.values()].some((x) => x.startedAt && !x.finishedAt)) drawTimeline([...steps.values()]);
    }, 1000);
    es.addEventListener('end', () => es.close());
  }

  // pagerLinks shows the pager's links of a list read again (console/pager.go; layout.html's
  // "pager"): a link without an address is hidden.
  function pagerLinks(pager) {
    const link = (id, href) => {
      const a = document.getElementById(id);
      if (!a) return;
      a.hidden = !href;
      if (href) a.setAttribute('href', href); else a.removeAttribute('href');
    };
    link('newest', pager.newestURL);
    link('newer', pager.newerURL);
    link('older', pager.olderURL);
    const no = document.getElementById('page-no');
    if (no) no.textContent = `page ${pager.page}`;
  }

  // ---- runs page ----
  // The rows are read again every second for the page shown (its filters, and where it starts:
  // a page token and the trail of the pages before it, console/pager.go). Typing in the filters
  // goes back to the newest runs that match, and the address follows.
  function runsPage() {
    const body = document.getElementById('runs-body');
    const form = document.getElementById('run-filters');
    if (!body || !form) return;
    let at = { after: body.dataset.after || '', back: body.dataset.back || '' };
    let seq = 0;
    async function refresh() {
      const q = new URLSearchParams();
      for (const [k, v] of new FormData(form)) if (String(v).trim()) q.set(k, v);
      if (at.after) q.set('after', at.after);
      if (at.back) q.set('back', at.back);
      const mine = ++seq;
      try {
        const { runs, pager } = await get(`/api/runs?${q}`);
        if (mine !== seq) return; // a newer request was sent since
        if (!runs.length) {
          body.replaceChildren(el('tr', { class: 'empty' }, el('td', { colspan: 7 }, 'No runs match.')));
        } else {
          body.replaceChildren(...runs.map((r) => el('tr', { 'data-run': r.id },
            el('td', {}, el('a', { href: `/runs/${encodeURIComponent(r.id)}` }, r.id)),
            el('td', {}, r.workflow || ''),
            el('td', {}, el('span', { class: `status ${statusClass(r.status)}` }, r.status), r.awaitingReview ? [' ', el('span', { class: 'badge review' }, 'awaiting review')] : null),
            el('td', {}, timeEl(r.started)),
            el('td', { class: 'num' }, r.duration),
            el('td', { class: 'num' }, r.tokens > 0 ? r.tokens.toLocaleString() : '—'),
            el('td', { class: 'num' }, r.costUsd ? `$${r.costUsd.toFixed(4)}` : '—'))));
        }
        pagerLinks(pager);
        document.getElementById('live').classList.remove('stale');
      } catch (err) {
        document.getElementById('live').classList.add('stale');
      }
    }
    let typing = null;
    const filtered = () => {
      clearTimeout(typing);
      typing = setTimeout(() => {
        at = { after: '', back: '' };
        const q = new URLSearchParams();
        for (const [k, v] of new FormData(form)) if (String(v).trim()) q.set(k, v);
        history.replaceState(null, '', q.toString() ? `/?${q}` : '/');
        refresh();
      }, 300);
    };
    form.addEventListener('input', filtered);
    form.addEventListener('change', filtered);
    setInterval(refresh, 1000);
  }

  // ---- reviews page ----
  // the nav's count of pending reviews (runs, their child runs, chat sessions' tool calls)
  // (more: the count is of the newest runs waiting and more wait, shown "N+")
  function reviewCount(n, more) {
    const c = document.getElementById('review-count');
    if (!c) return;
    c.textContent = more ? `${n}+` : String(n);
    c.hidden = !n && !more;
  }
  function pollReviewCount() {
    if (!document.getElementById('review-count') || document.body.dataset.page === 'login') return;
    const poll = () => get('/api/reviews').then((r) => reviewCount(r.total, !!(r.counted && r.counted.more))).catch(() => {});
    poll();
    setInterval(poll, 10000);
  }

  // The list is paged as the runs list is (?before= names the review the page starts after; a
  // review decided since need not wait any more); the page shown is read again every 2 s.
  function reviewsPage() {
    const list = document.getElementById('review-list');
    if (!list) return;
    const cards = new Map();
    const before = new URLSearchParams(window.location.search).get('before') || '';
    const url = before ? `/api/reviews?${new URLSearchParams({ before })}` : '/api/reviews';
    function show({ reviews, pager, total, counted }) {
      reviews = reviews || [];
      const live = new Set();
      for (const p of reviews) {
        const key = `${p.run}\u0000${p.review.id}`;
        live.add(key);
        if (!cards.has(key)) {
          const c = reviewCard(p.review.executionId || p.run, p.review, p.access);
          cards.set(key, c);
          list.append(c);
        }
      }
      // a gate that waits no more and that this page did not decide (another viewer did, or its
      // run ended) is not taken away under the person's eyes: its card says so, and then who
      // decided what, as its run records it
      cards.forEach((c, key) => { if (!live.has(key) && !settling(c)) gone(c); });
      // the sentences are the server's (console/handlers.go reviewCounts), as the page was rendered
      counted = counted || { total: '', none: '' };
      const none = document.getElementById('no-reviews');
      none.hidden = live.size > 0 || !counted.none;
      // (the count is a live region: setText writes it only when it changed)
      setText(none, counted.none);
      setText(document.getElementById('review-total'), counted.total);
      if (pager) pagerLinks(pager);
      if (counted.total) reviewCount(total || 0, !!counted.more);
    }
    function gone(card) {
      card.classList.add('decided', 'gone');
      const status = card.querySelector('.card-status');
      status.classList.remove('error');
      status.textContent = 'no longer waiting: decided elsewhere, or its run ended';
      card.querySelectorAll('.actions, .edit-data, .send-edit, .comment, .may-not').forEach((x) => x.remove());
      get(`/api/runs/${encodeURIComponent(card.dataset.run)}`).then((v) => {
        const d = ((v.snapshot && v.snapshot.decided) || []).find((x) => x.id === card.dataset.review);
        if (d) settle(card, d);
        else if (v.snapshot && v.snapshot.closed) status.textContent = `no longer waiting: its run ${v.snapshot.status.replaceAll('_', ' ')}`;
      }).catch(() => {});
    }
    show(JSON.parse(list.dataset.reviews || '{}') || {});
    const f = document.getElementById('reviewer');
    if (f && localStorage.getItem('weft-reviewer')) f.value = localStorage.getItem('weft-reviewer');
    setInterval(() => get(url).then(show).catch(() => {}), 2000);
  }

  // ---- workflows (playground) ----
  function inputField(name, schema, required) {
    const type = [].concat(schema.type || 'string')[0];
    const id = `in-${name}`;
    const label = el('label', { for: id }, name, required ? ' *' : '', schema.description ? el('small', {}, ` ${schema.description}`) : null);
    let input;
    if (type === 'boolean') input = el('input', { id, name, type: 'checkbox', checked: schema.default === true });
    else if (type === 'array' || type === 'object') input = el('textarea', { id, name, rows: 3, placeholder: type === 'array' ? '[ ... ] (JSON)' : '{ ... } (JSON)' }, schema.default !== undefined ? pretty(schema.default) : '');
    else input = el('input', { id, name, type: type === 'number' || type === 'integer' ? 'number' : 'text', step: type === 'number' ? 'any' : null, value: schema.default !== undefined ? schema.default : '', required: required || null });
    input.dataset.type = type;
    return el('div', { class: 'field' }, label, input);
  }

  // runForm starts a run of the catalog workflow name, or, when edited() returns text (the
  // playground's editor changed and compiles), of that text: the server starts it as the
  // person's own (client-origin) definition.
  function runForm(form, name, graph, edited) {
    const schema = (graph && graph.inputs) || {};
    const props = schema.properties || {};
    const required = new Set(schema.required || []);
    const status = el('p', { class: 'card-status', role: 'status' });
    form.replaceChildren(...Object.keys(props).sort().map((k) => inputField(k, props[k], required.has(k))),
      el('button', { type: 'submit' }, 'Start run'), status);
    form.onsubmit = async (ev) => {
      ev.preventDefault();
      const inputs = {};
      try {
        for (const f of form.querySelectorAll('[data-type]')) {
          const t = f.dataset.type;
          if (t === 'boolean') { inputs[f.name] = f.checked; continue; }
          if (f.value === '') continue;
          if (t === 'array' || t === 'object') inputs[f.name] = JSON.parse(f.value);
          else if (t === 'number' || t === 'integer') inputs[f.name] = Number(f.value);
          else inputs[f.name] = f.value;
        }
      } catch (err) { status.textContent = `an input is not valid JSON: ${err.message}`; return; }
      status.textContent = 'starting…';
      try {
        const text = edited && edited();
        if (text === false) throw new Error('the edited text does not compile: fix the problems listed under Edit, or reload the page to run the file');
        const r = text ? await post('/v1/runs', { definition: JSON.parse(text), inputs })
          : await post('/v1/runs', { workflow: name, inputs });
        window.location.assign(`/runs/${encodeURIComponent(r.id)}`);
      } catch (err) { status.textContent = err.message; status.classList.add('error'); }
    };
  }

  function plan(target, graph) {
    if (!target) return;
    if (!graph) { target.replaceChildren(el('p', { class: 'error' }, 'The file does not compile: see the messages below.')); return; }
    const calls = Object.entries(graph.estimatedCalls || {}).filter(([, v]) => v);
    target.replaceChildren(...[
      el('p', {}, `${graph.nodes.length} steps in ${graph.layers.length} stages`),
      el('p', {}, calls.length ? `external calls: ${calls.map(([k, v]) => `${v} ${k}`).join(', ')}${graph.perItem ? ' (per forEach item)' : ''}` : 'no external calls'),
      graph.output ? el('dl', {}, Object.entries(graph.output).map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])) : null].filter(Boolean));
  }

  function playground(root) {
    const pg = JSON.parse(root.dataset.playground);
    const name = root.dataset.name;
    const svgEl = document.getElementById('graph');
    const detail = document.getElementById('detail');
    const source = document.getElementById('source');
    const diags = document.getElementById('diagnostics');
    let graph = pg.graph;
    function draw() {
      const info = new Map(((graph && graph.nodes) || []).map((n) => [n.id, n]));
      drawGraph(svgEl, graph, (id) => {
        const n = info.get(id);
        fill(detail, el('h2', {}, n.name || n.id), el('p', {}, `${n.tool} · ${n.category}`),
          n.condition ? el('p', {}, `if ${n.condition}`) : null, n.forEach ? el('p', {}, `forEach ${n.forEach}`) : null,
          n.branch ? el('p', {}, `branch ${n.branch}`) : null, jsonBlock(n.inputs || {}, true));
      });
      legend(document.getElementById('legend'), graph);
      plan(document.getElementById('plan'), graph);
    }
    draw();
    // What Start runs: the file, or the edited text once it differs (false while it does not compile).
    const original = source.value;
    let editedValid = true;
    const edited = () => (source.value === original ? null : editedValid ? source.value : false);
    let formInputs = JSON.stringify((pg.graph && pg.graph.inputs) || {});
    runForm(document.getElementById('run-form'), name, pg.graph, edited);
    let timer = null, seq = 0;
    source.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const mine = ++seq;
        try {
          // checked as every surface checks a file (POST /v1/workflows/validate: lines and
          // columns in this text); a valid one is drawn by the console (POST /api/graph)
          const text = source.value;
          const r = await post('/v1/workflows/validate', { source: text });
          if (mine !== seq) return;
          if (r.valid) r.graph = (await post('/api/graph', { source: text })).graph;
          if (mine !== seq) return;
          diags.replaceChildren(...r.diagnostics.map((d) => el('li', { class: d.severity, onclick: () => goTo(d.line, d.col) },
            `${d.line}:${d.col} ${d.severity}: ${d.where ? d.where + ': ' : ''}${d.message}${d.hint ? ' (' + d.hint + ')' : ''}`)));
          editedValid = r.valid;
          if (r.valid) {
            graph = r.graph; draw(); diags.prepend(el('li', { class: 'ok' }, 'valid'));
            const ins = JSON.stringify(graph.inputs || {});
            if (ins !== formInputs) { formInputs = ins; runForm(document.getElementById('run-form'), name, graph, edited); }
          }
          const btn = document.querySelector('#run-form button[type=submit]');
          if (btn) btn.textContent = source.value === original ? 'Start run' : 'Start run (edited text)';
        } catch (err) {
          diags.replaceChildren(el('li', { class: 'error' }, err.message));
        }
      }, 250);
    });
    function goTo(line, col) {
      const lines = source.value.split('\n');
      let at = 0;
      for (let i = 0; i < line - 1 && i < lines.length; i++) at += lines[i].length + 1;
      at += Math.max(0, col - 1);
      source.focus();
      source.setSelectionRange(at, at + 1);
    }
    document.getElementById('download').addEventListener('click', () => {
      const a = el('a', { href: URL.createObjectURL(new Blob([source.value], { type: 'application/json' })), download: `${name}.json` });
      document.body.append(a);
      a.click();
      a.remove();
    });
  }

  function start() {
    const logout = document.getElementById('logout');
    if (logout) logout.addEventListener('click', () => post('/logout').then(() => window.location.assign('/login')));
    const run = document.getElementById('run');
    if (run) runPage(run);
    const pg = document.getElementById('playground');
    if (pg) playground(pg);
    if (document.body.dataset.page === 'runs' && !run) runsPage();
    if (document.body.dataset.page === 'reviews') reviewsPage();
    else pollReviewCount();
    tick();
    setInterval(tick, 15000);
    window.__weftReady = true;
    window.__weftReadyAt = performance.now();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
