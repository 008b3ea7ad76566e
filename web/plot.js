/* sandlens web UI: a time-series plot on a <canvas> (no library). */
'use strict';

/* Draw lines [{label, points: [[ms, value], ...]}] on canvas c, x = time,
 * y from 0 to the largest value; unit formats the axis (SL.fmt.unit). The
 * canvas carries data-points (points drawn) for tests and tools. */
SL.plot = (c, lines, unit) => {
  const dpr = window.devicePixelRatio || 1;
  const w = c.clientWidth || 400, h = c.clientHeight || 160;
  c.width = Math.round(w * dpr);
  c.height = Math.round(h * dpr);
  const g = c.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  g.font = '11px system-ui, sans-serif';
  const L = 64, R = 8, T = 8, B = 20;
  let n = 0, t0 = Infinity, t1 = -Infinity, vmax = 0;
  for (const l of lines)
    for (const [t, v] of l.points) {
      if (!isFinite(t) || !isFinite(v)) continue;
      n++; t0 = Math.min(t0, t); t1 = Math.max(t1, t); vmax = Math.max(vmax, v);
    }
  c.dataset.points = String(n);
  g.strokeStyle = '#d8dadd';
  g.strokeRect(L, T, w - L - R, h - T - B);
  if (!n) {
    g.fillStyle = '#6b6f76';
    g.fillText('no readings yet', L + 8, T + 16);
    return;
  }
  if (t1 === t0) { t0 -= 1000; t1 += 1000; }
  if (vmax <= 0) vmax = 1;
  const x = (t) => L + (t - t0) / (t1 - t0) * (w - L - R);
  const y = (v) => T + (1 - v / vmax) * (h - T - B);
  g.fillStyle = '#6b6f76';
  g.textAlign = 'right';
  for (let i = 0; i <= 4; i++) {
    const v = vmax * i / 4;
    g.fillText(SL.fmt.unit(v, unit), L - 4, y(v) + 4);
    g.strokeStyle = '#eee';
    g.beginPath(); g.moveTo(L, y(v)); g.lineTo(w - R, y(v)); g.stroke();
  }
  g.textAlign = 'center';
  for (let i = 0; i <= 4; i++) {
    const t = t0 + (t1 - t0) * i / 4;
    g.fillText(new Date(t).toISOString().slice(11, 19), x(t), h - 5);
  }
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
  lines.forEach((l, i) => {
    g.strokeStyle = colors[i % colors.length];
    g.lineWidth = 1.5;
    g.beginPath();
    let first = true;
    for (const [t, v] of l.points) {
      if (!isFinite(t) || !isFinite(v)) continue;
      if (first) g.moveTo(x(t), y(v)); else g.lineTo(x(t), y(v));
      first = false;
    }
    g.stroke();
    if (l.points.length === 1) { g.fillStyle = g.strokeStyle; g.fillRect(x(l.points[0][0]) - 2, y(l.points[0][1]) - 2, 4, 4); }
  });
};
