/* sandlens web UI: an events timeline (SVG). One lane per event kind,
 * grouped by the module that declares it (GET /api/v1/schema/events), in
 * the order of /healthz's modules: a kind a new module declares gets its
 * lane with no change here. Marks are coloured by severity; clicking one
 * shows the whole event (as text) through onpick. */
'use strict';

/* The lanes: [{module, kind, label}] for every declared kind, modules in
 * health order (those health does not list last), kinds in schema order. */
SL.lanes = (schema, health) => {
  const order = new Map(((health && health.modules) || []).map((m, i) => [m.name, i]));
  const kinds = (schema.kinds || []).slice();
  kinds.sort((a, b) => (order.has(a.module) ? order.get(a.module) : 1e9) - (order.has(b.module) ? order.get(b.module) : 1e9));
  return kinds.map((k) => ({ module: k.module, kind: k.name, label: k.module + ' · ' + k.name }));
};

/* Draw events (objects of /api/v1/events) between t0 and t1 (ms) into host. */
SL.timeline = (host, lanes, events, t0, t1, onpick) => {
  SL.clear(host);
  const W = host.clientWidth || 1000, LH = 20, LW = 170, top = 18;
  const idx = new Map(lanes.map((l, i) => [l.kind, i]));
  const extra = [];
  for (const e of events) if (!idx.has(e.type) && !extra.includes(e.type)) extra.push(e.type);
  const all = lanes.concat(extra.map((k) => ({ module: '?', kind: k, label: '? · ' + k })));
  all.forEach((l, i) => idx.set(l.kind, i));
  const H = top + all.length * LH + 4;
  const s = SL.svg('svg', { class: 'timeline', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'data-events': events.length });
  const x = (t) => LW + (t - t0) / Math.max(1, t1 - t0) * (W - LW - 8);
  for (let i = 0; i <= 5; i++) {
    const t = t0 + (t1 - t0) * i / 5;
    s.appendChild(SL.svg('line', { x1: x(t), x2: x(t), y1: top - 4, y2: H, stroke: '#eee' }));
    s.appendChild(SL.svg('text', { x: x(t), y: 12, 'text-anchor': i === 5 ? 'end' : 'middle', class: 'lane-label' },
      new Date(t).toISOString().slice(11, 19)));
  }
  // per lane: events, and whether they are about a device or a CPU (the
  // common field subject_kind): such lanes are tinted, so hardware events
  // stand apart from the software ones in the same window
  const counts = new Map(), hw = new Set();
  for (const e of events) {
    counts.set(e.type, (counts.get(e.type) || 0) + 1);
    if (e.subject_kind === 'device' || e.subject_kind === 'cpu') hw.add(e.type);
  }
  all.forEach((l, i) => {
    const y = top + i * LH;
    if (hw.has(l.kind)) s.appendChild(SL.svg('rect', { x: 0, y, width: W, height: LH, class: 'lane-hw' }));
    else if (i % 2) s.appendChild(SL.svg('rect', { x: 0, y, width: W, height: LH, fill: '#f7f8f9' }));
    s.appendChild(SL.svg('text', { x: 4, y: y + 14, class: 'lane-label', 'data-lane': l.kind, 'data-module': l.module },
      l.label + (hw.has(l.kind) ? ' [device]' : '') + ' (' + (counts.get(l.kind) || 0) + ')'));
  });
  for (const e of events) {
    const t = SL.timeMs(e.time);
    if (!(t >= t0 && t <= t1)) continue;
    const y = top + idx.get(e.type) * LH + 3;
    const r = SL.svg('rect', { x: x(t) - 1.5, y, width: 3, height: LH - 6, class: 'ev sev-' + (e.severity || 'info'),
      'data-type': e.type, 'data-id': e.id });
    r.appendChild(SL.svg('title', {}, e.type + ' ' + SL.fmt.time(e.time) + ' ' + SL.eventText(e)));
    r.addEventListener('click', () => onpick && onpick(e));
    s.appendChild(r);
  }
  host.appendChild(s);
  return s;
};

/* The event table under a timeline: newest first, max rows. */
SL.eventTable = (events, max, withContainer) => {
  const rows = events.slice(-max).reverse().map((e) => SL.el('tr', { 'data-type': e.type, 'data-id': e.id },
    SL.el('td', { class: 'mono nowrap' }, SL.fmt.time(e.time)),
    SL.el('td', {}, e.type),
    SL.el('td', { class: 'sevtext-' + e.severity }, e.severity || ''),
    withContainer ? SL.el('td', { class: 'mono' }, e.container_id ? SL.link(SL.containerRoute(e.container_id), SL.shortId(e.container_id)) : 'host') : null,
    SL.el('td', { class: 'mono' }, e.pid !== undefined ? e.pid + ' ' + (e.comm || '') : e.device || (e.cpu !== undefined ? 'cpu ' + e.cpu : '')),
    SL.el('td', { class: 'mono detail' }, SL.eventText(e))));
  return SL.el('table', { class: 'events' },
    SL.el('thead', {}, SL.el('tr', {}, SL.el('th', {}, 'time'), SL.el('th', {}, 'type'), SL.el('th', {}, 'severity'),
      withContainer ? SL.el('th', {}, 'container') : null, SL.el('th', {}, 'subject'), SL.el('th', {}, 'details'))),
    SL.el('tbody', {}, rows));
};

/* Events of query q since `since` (a duration), oldest first, following
 * with after_id: keeps at most max, calls onchange(events) after each poll. */
SL.EventFeed = class {
  constructor(q, since, max, onchange) {
    this.q = q; this.since = since; this.max = max; this.onchange = onchange;
    this.events = []; this.after = null;
  }
  async poll() {
    let url;
    if (this.after === null) { // the newest max events of the window, then follow
      const j = await SL.api('/api/v1/events?' + this.q + (this.q ? '&' : '') + 'since=' + encodeURIComponent(this.since) + '&order=desc&limit=' + this.max);
      this.events = (j.events || []).reverse();
      if (this.events.length) {
        this.after = this.events[this.events.length - 1].id;
      } else { // none in the window: follow from the newest event there is
        const n = await SL.api('/api/v1/events?' + this.q + (this.q ? '&' : '') + 'order=desc&limit=1');
        this.after = n.events && n.events.length ? n.events[0].id : 0;
      }
    } else {
      for (let page = 0; page < 5; page++) {
        url = '/api/v1/events?' + this.q + (this.q ? '&' : '') + 'order=asc&limit=1000&after_id=' + this.after;
        const j = await SL.api(url);
        const evs = j.events || [];
        this.events.push(...evs);
        this.after = j.next_after_id;
        if (evs.length < 1000) break;
      }
      if (this.events.length > this.max) this.events.splice(0, this.events.length - this.max);
    }
    this.onchange(this.events);
  }
};
