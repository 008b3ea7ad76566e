/* sandlens web UI: an interactive flame graph of a profile's JSON tree
 * (docs/PROFILING.md "JSON": {name, value, self, module?, kernel?,
 * children}). Root at the top (an icicle), width by value; click a frame
 * to zoom to it (click the root row to zoom out), search highlights every
 * frame whose name contains the text and shows their share. Frames are
 * <div>s whose text is set with textContent. */
'use strict';

SL.Flame = class {
  constructor(host, tree, unit) {
    this.host = host;
    this.tree = tree;
    this.unit = unit || 'samples';
    this.focus = tree;
    this.query = '';
    this.parent = new Map();
    const walk = (n, p) => { this.parent.set(n, p); for (const c of n.children || []) walk(c, n); };
    walk(tree, null);
    this.info = SL.el('div', { class: 'flame-info' }, '');
    this.box = SL.el('div', { class: 'flame', 'data-zoom': '' });
    host.appendChild(this.info);
    host.appendChild(this.box);
    this.render();
  }

  /* the path from the root to the focused frame (drawn full width above it) */
  ancestors() {
    const a = [];
    for (let n = this.parent.get(this.focus); n; n = this.parent.get(n)) a.unshift(n);
    return a;
  }

  kindOf(n, depth) {
    if (depth === 0 || (depth === 1 && !n.module)) return 'root';
    if (n.kernel) return 'kernel';
    if (n.module) return 'user';
    return /^\[.*\]$/.test(n.name) ? 'root' : 'other';
  }

  render() {
    SL.clear(this.box);
    const W = this.box.clientWidth || 1000, H = 18, q = this.query.toLowerCase();
    const total = this.focus.value || 1;
    let rows = 0, drawn = 0, matched = 0;
    const frame = (n, depth, x, w) => {
      const d = SL.el('div', { class: 'frame ' + this.kindOf(n, depth), 'data-name': n.name, title: '' });
      d.style.left = x + 'px';
      d.style.top = depth * H + 'px';
      d.style.width = Math.max(w - 1, 1) + 'px';
      d.textContent = w > 30 ? n.name : '';
      const pct = (100 * n.value / (this.tree.value || 1)).toFixed(2);
      d.title = n.name + (n.module ? ' [' + n.module + ']' : '') + '\n' + n.value + ' ' + this.unit + ' (' + pct + '% of all), self ' + (n.self || 0);
      if (q && n.name.toLowerCase().includes(q)) { d.classList.add('match'); }
      d.addEventListener('click', (e) => { e.stopPropagation(); this.zoom(n); });
      d.addEventListener('mouseenter', () => { this.info.textContent = d.title.replace('\n', ' — '); });
      this.box.appendChild(d);
      drawn++;
      rows = Math.max(rows, depth + 1);
    };
    const anc = this.ancestors();
    anc.forEach((n, i) => frame(n, i, 0, W));
    const lay = (n, depth, x, w) => {
      frame(n, depth, x, w);
      let cx = x;
      for (const c of n.children || []) {
        const cw = w * c.value / (n.value || 1);
        if (cw >= 1) lay(c, depth + 1, cx, cw);
        cx += cw;
      }
    };
    lay(this.focus, anc.length, 0, W);
    if (q) { // share of the matching frames, each stack counted once
      const sum = (n) => n.name.toLowerCase().includes(q) ? n.value : (n.children || []).reduce((s, c) => s + sum(c), 0);
      matched = sum(this.tree);
      this.info.textContent = 'matched "' + this.query + '": ' + matched + ' ' + this.unit + ' (' +
        (100 * matched / (this.tree.value || 1)).toFixed(2) + '%)';
    }
    this.box.style.height = rows * H + 4 + 'px';
    this.box.dataset.frames = String(drawn);
    this.box.dataset.zoom = this.focus === this.tree ? '' : this.focus.name;
    this.box.dataset.matches = String(this.box.querySelectorAll('.frame.match').length);
    void total;
  }

  zoom(n) { this.focus = n === this.focus ? (this.parent.get(n) || this.tree) : n; this.render(); }
  reset() { this.focus = this.tree; this.render(); }
  search(q) { this.query = q || ''; this.render(); }
};
