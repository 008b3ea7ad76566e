/* sandlens HTML flame graph (docs/PROFILING.md "HTML"). Reads the profile
 * from the JSON data block #sl-data: a call tree of nodes {n: name, m:
 * module, k: kind (u user, k kernel, j JIT, x unresolved, p pseudo), v:
 * total, s: self, c: children} (diffs add b: base total, bs: base self,
 * raw), and draws it root at the bottom, width by v. Every string of the
 * data goes into the page as text (textContent, attribute values): never
 * as markup. Click a frame to zoom to it (click it again, a greyed
 * ancestor, Escape or "Reset zoom" to zoom out); the search box highlights
 * the frames whose name contains the text (or matches /regex/) and shows
 * their share, each stack counted once. */
'use strict';
(function () {
  const D = JSON.parse(document.getElementById('sl-data').textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  };
  const H = 17;
  const root = D.tree;
  const diff = !!D.diff;
  const unit = D.unit || 'samples';
  const total = root.v || 0;
  const scale = diff ? (D.base_total ? total / D.base_total : 1) : 1;
  const parent = new Map();
  let maxDepth = 0, maxAbs = 0;
  const delta = (n) => n.v - (n.b || 0) * scale;
  (function walk(n, p, d) {
    parent.set(n, p);
    n.d = d;
    if (d > maxDepth) maxDepth = d;
    if (diff) maxAbs = Math.max(maxAbs, Math.abs(delta(n)));
    for (const c of n.c || []) walk(c, n, d + 1);
  })(root, null, 0);

  const fmtNum = (x) => (Math.round(x * 10) / 10).toLocaleString('en-US');
  const pct = (x, of) => (of ? (100 * x / of) : 0).toFixed(2) + '%';
  const sign = (x) => (x > 0 ? '+' : '') + fmtNum(x);
  const iso = (ns) => new Date(ns / 1e6).toISOString().replace('.000Z', 'Z');

  /* ---- title and metadata ---- */
  document.title = D.title;
  $('title').textContent = D.title;
  const meta = $('meta');
  const put = (key, label, value) => {
    const s = el('span');
    s.dataset.k = key;
    s.append(el('b', '', label + ': '), document.createTextNode(String(value)));
    meta.append(s);
  };
  const range = (m) => iso(m.start_ns) + ' .. ' + iso(m.end_ns) + ' UTC (' + ((m.end_ns - m.start_ns) / 1e9).toFixed(1) + ' s)';
  const m = D.meta || {};
  if (m.container) put('container', 'container', m.container);
  if (m.pod) put('pod', 'pod', m.pod);
  if (m.host) put('host', 'host', m.host);
  if (m.start_ns) put('time', diff ? 'current' : 'time', range(m));
  if (diff && D.base_meta && D.base_meta.start_ns) put('base-time', 'base', range(D.base_meta));
  put('type', 'sample type', D.sample_type + ' (' + unit + ')');
  put('total', 'total', fmtNum(total) + ' ' + unit + (diff ? ' (base ' + fmtNum(D.base_total) + ', scaled x' + scale.toFixed(4) + ')' : ''));

  /* ---- colours ---- */
  const hash = (s) => { let h = 2166136261; for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0; return h; };
  const warm = (n) => {
    const h = hash(n.n), v1 = h % 55, v2 = (h >>> 8) % 80;
    switch (n.k) {
      case 'p': return 'rgb(' + (80 + v1) + ',' + (140 + v1) + ',' + (210 + v1 % 40) + ')';
      case 'x': return 'rgb(' + (170 + v1) + ',' + (170 + v1) + ',' + (170 + v1) + ')';
      case 'k': return 'rgb(' + (220 + v1 % 35) + ',' + (130 + (v2 >> 1)) + ',' + (40 + v1) + ')';
      case 'j': return 'rgb(' + (60 + v1) + ',' + (190 + v1) + ',' + (60 + v1) + ')';
      default: return 'rgb(' + (205 + v1) + ',' + (70 + v2) + ',' + (50 + (v1 >> 1)) + ')';
    }
  };
  /* flamegraph.pl's differential scale: the grown (red) or shrunk (blue)
   * channel at 255, the others 210 * (1 - |delta| / max) */
  const diffColor = (d) => {
    if (!maxAbs || d === 0) return 'rgb(250,250,250)';
    const o = Math.round(210 * (1 - Math.min(1, Math.abs(d) / maxAbs)));
    return d > 0 ? 'rgb(255,' + o + ',' + o + ')' : 'rgb(' + o + ',' + o + ',255)';
  };

  /* ---- details (hover) ---- */
  const describe = (n) => {
    let s = n.n + (n.m ? ' [' + n.m + ']' : '') + '\n';
    if (diff) {
      const d = delta(n);
      s += 'base ' + fmtNum(n.b || 0) + ' ' + unit + ' (normalized ' + fmtNum((n.b || 0) * scale) + '), cur ' +
        fmtNum(n.v) + ' ' + unit + ', delta ' + sign(d) + ' ' + unit + ' (' + (d > 0 ? '+' : '') + pct(d, total) +
        ' of the current total); self base ' + fmtNum(n.bs || 0) + ', cur ' + fmtNum(n.s || 0);
    } else {
      s += 'total ' + fmtNum(n.v) + ' ' + unit + ' (' + pct(n.v, total) + ' of all';
      if (focus !== root) s += ', ' + pct(n.v, focus.v) + ' of the zoomed frame';
      s += '), self ' + fmtNum(n.s || 0) + ' ' + unit + ' (' + pct(n.s || 0, total) + ')';
    }
    return s;
  };

  /* ---- search ---- */
  let query = '', re = null;
  const matches = (n) => query !== '' && (re ? re.test(n.n) : n.n.toLowerCase().includes(query));
  const matchedValue = (n) => matches(n) ? n.v : (n.c || []).reduce((a, c) => a + matchedValue(c), 0);

  /* ---- drawing ---- */
  const box = $('flame'), details = $('details');
  let focus = root;
  const render = () => {
    box.textContent = '';
    const W = box.clientWidth || 1200;
    const rows = maxDepth + 1;
    box.style.height = rows * H + 2 + 'px';
    let drawn = 0, hits = 0;
    const frame = (n, x, w, anc) => {
      const f = el('div', 'f' + (anc ? ' anc' : ''));
      f.style.left = x.toFixed(1) + 'px';
      f.style.width = Math.max(w, 1).toFixed(1) + 'px';
      f.style.top = (rows - 1 - n.d) * H + 'px';
      let cls = '';
      if (diff) {
        const d = delta(n);
        f.style.background = diffColor(d);
        cls = d > 0 ? 'grew' : d < 0 ? 'shrank' : 'same';
        f.classList.add(cls);
      } else {
        f.style.background = warm(n);
      }
      if (matches(n)) { f.classList.add('match'); hits++; }
      f.dataset.name = n.n;
      f.title = describe(n);
      if (w >= 24) f.textContent = n.n;
      f.addEventListener('mouseenter', () => { details.textContent = describe(n); });
      f.addEventListener('click', (e) => { e.stopPropagation(); zoom(n); });
      box.append(f);
      drawn++;
    };
    for (let a = parent.get(focus); a; a = parent.get(a)) frame(a, 0, W, true);
    const lay = (n, x, w) => {
      frame(n, x, w, false);
      let cx = x;
      for (const c of n.c || []) {
        const cw = n.v ? w * c.v / n.v : 0;
        if (cw >= 0.5) lay(c, cx, cw);
        cx += cw;
      }
    };
    if (focus.v > 0) lay(focus, 0, W);
    box.dataset.frames = String(drawn);
    box.dataset.matches = String(hits);
    box.dataset.zoom = focus === root ? '' : focus.n;
    $('reset').disabled = focus === root;
    const mt = $('matched');
    if (query !== '') {
      const mv = matchedValue(root);
      let s = 'matched ' + fmtNum(mv) + ' ' + unit + ', ' + pct(mv, total);
      if (focus !== root) s += ' (' + pct(matchedValue(focus), focus.v) + ' of the zoomed frame)';
      mt.textContent = s;
      mt.dataset.pct = (total ? 100 * mv / total : 0).toFixed(2);
    } else {
      mt.textContent = '';
      delete mt.dataset.pct;
    }
  };
  const zoom = (n) => {
    focus = n === focus ? (parent.get(n) || root) : n;
    render();
  };

  $('reset').addEventListener('click', () => { focus = root; render(); });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { focus = root; render(); }
    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); $('search').focus(); }
  });
  const search = $('search');
  const onSearch = () => {
    const q = search.value;
    re = null;
    query = q.toLowerCase();
    if (q.length > 2 && q[0] === '/' && q[q.length - 1] === '/') {
      try { re = new RegExp(q.slice(1, -1)); query = q; } catch (err) { re = null; }
    }
    render();
  };
  search.addEventListener('input', onSearch);
  window.addEventListener('resize', render);

  /* ---- legend ---- */
  const legend = $('legend');
  const key = (color, label) => { const i = el('i'); i.style.background = color; legend.append(i, document.createTextNode(label)); };
  if (diff) {
    legend.append(document.createTextNode('width = current; colour = change against the base scaled to the current total:'));
    key('rgb(255,40,40)', 'grew');
    key('rgb(40,40,255)', 'shrank');
    key('rgb(250,250,250)', 'unchanged');
  } else {
    legend.append(document.createTextNode('width = ' + unit + ':'));
    key('rgb(230,110,70)', 'user');
    key('rgb(240,160,70)', 'kernel');
    key('rgb(90,220,90)', 'JIT');
    key('rgb(190,190,190)', 'unresolved');
    key('rgb(110,170,230)', 'process / state');
  }

  /* ---- hot-symbol table ---- */
  const thead = $('hot').tHead, tbody = $('hot').tBodies[0];
  const hr = el('tr');
  const cols = diff ? ['base self', 'cur self', 'delta (self)', 'delta %', 'cur total', 'symbol', 'module']
    : ['self', 'self %', 'total', 'total %', 'symbol', 'module'];
  for (const c of cols) hr.append(el('th', '', c));
  thead.append(hr);
  $('hot-h').textContent = diff ? 'Largest changes (self, base normalized to the current total)' : 'Hottest symbols (by self; total counts a symbol once per stack)';
  for (const h of D.hot || []) {
    const tr = el('tr');
    const num = (v, cls) => el('td', 'num' + (cls ? ' ' + cls : ''), v);
    if (diff) {
      const c = h.d > 0 ? 'grew' : h.d < 0 ? 'shrank' : '';
      tr.append(num(fmtNum(h.bs)), num(fmtNum(h.s)), num(sign(h.d), c), num((h.d > 0 ? '+' : '') + pct(h.d, total), c), num(fmtNum(h.t)));
    } else {
      tr.append(num(fmtNum(h.s)), num(pct(h.s, total)), num(fmtNum(h.t)), num(pct(h.t, total)));
    }
    const sym = el('td', 'sym', h.n);
    sym.title = 'search for this symbol';
    sym.addEventListener('click', () => { search.value = h.n; onSearch(); });
    tr.append(sym, el('td', 'mod', h.m || ''));
    tbody.append(tr);
  }
  render();
})();
