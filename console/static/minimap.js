// weft minimap: the steps of a canvas drawn small in its corner, with the part in view outlined;
// a click or drag on it moves the view there. It is hidden while the whole canvas is in view.
// Every canvas of the console uses this one: the run and workflow graphs (a scrolled svg,
// console.js) and the builder (Drawflow's transform, builder.js). Each tells it, in its own
// canvas units:
//   world(): {x, y, width, height}, the area the minimap shows
//   nodes(): [{x, y, width, height, class}], the steps
//   view():  {x, y, width, height, scale}, the part in view (scale: screen pixels per unit)
//   centre(x, y): move the view so that (x, y) is in its middle
// weftMinimap(map, canvas) returns {draw, place}: draw again after the steps changed, place after
// the view moved. Called again for the same svg element, it takes the new canvas and keeps the
// pointer handlers.
(() => {
  'use strict';
  const NS = 'http://www.w3.org/2000/svg';
  const MAX_W = 180, MAX_H = 120;
  function rect(attrs) {
    const r = document.createElementNS(NS, 'rect');
    for (const [k, v] of Object.entries(attrs)) r.setAttribute(k, String(v));
    return r;
  }
  window.weftMinimap = (map, canvas) => {
    if (map.weftMinimap) {
      map.weftMinimap.canvas = canvas;
      map.weftMinimap.draw();
      return map.weftMinimap;
    }
    const mm = { canvas, world: { x: 0, y: 0, width: 1, height: 1 } };
    const view = rect({ class: 'mm-view', x: 0, y: 0, width: 0, height: 0 });
    mm.place = () => {
      const w = mm.world, v = mm.canvas.view();
      const slack = 4 / (v.scale || 1); // a few pixels cut off still count as all in view
      const all = v.x <= w.x + slack && v.y <= w.y + slack && v.x + v.width >= w.x + w.width - slack && v.y + v.height >= w.y + w.height - slack;
      map.toggleAttribute('hidden', all); // (an svg element has no .hidden)
      const x0 = Math.max(w.x, v.x), y0 = Math.max(w.y, v.y);
      view.setAttribute('x', x0);
      view.setAttribute('y', y0);
      view.setAttribute('width', Math.max(0, Math.min(w.x + w.width, v.x + v.width) - x0));
      view.setAttribute('height', Math.max(0, Math.min(w.y + w.height, v.y + v.height) - y0));
    };
    mm.draw = () => {
      const w = (mm.world = mm.canvas.world());
      w.width = Math.max(1, w.width);
      w.height = Math.max(1, w.height);
      map.setAttribute('viewBox', `${w.x} ${w.y} ${w.width} ${w.height}`);
      const scale = Math.min(MAX_W / w.width, MAX_H / w.height);
      // a very wide or tall canvas is stretched to stay visible and clickable
      map.setAttribute('preserveAspectRatio', 'none');
      map.setAttribute('width', Math.max(40, Math.round(w.width * scale)));
      map.setAttribute('height', Math.max(28, Math.round(w.height * scale)));
      map.replaceChildren(...mm.canvas.nodes().map((n) => rect({ class: `mm-node ${n.class || ''}`.trim(), x: n.x, y: n.y, width: n.width, height: n.height, rx: 6 })), view);
      mm.place();
    };
    const go = (ev) => {
      const b = map.getBoundingClientRect(), w = mm.world;
      if (!b.width || !b.height) return;
      mm.canvas.centre(w.x + ((ev.clientX - b.left) / b.width) * w.width, w.y + ((ev.clientY - b.top) / b.height) * w.height);
      mm.place();
    };
    let dragging = false;
    map.addEventListener('pointerdown', (ev) => { dragging = true; map.setPointerCapture(ev.pointerId); go(ev); });
    map.addEventListener('pointermove', (ev) => { if (dragging) go(ev); });
    map.addEventListener('pointerup', () => { dragging = false; });
    map.addEventListener('pointercancel', () => { dragging = false; });
    window.addEventListener('resize', () => mm.place());
    map.weftMinimap = mm;
    mm.draw();
    return mm;
  };
})();
