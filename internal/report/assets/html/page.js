(function () {
  "use strict";
  var t0 = performance.now();
  var data = JSON.parse(document.getElementById("iolens-data").textContent);
  var charts = [];
  var colors = data.colors || [];
  function color(i) { return colors[i % colors.length]; }
  function list(x) { return Array.isArray(x) ? x : []; }
  // Charts fit their container, down to a phone's width.
  function width(el) { return Math.max(200, Math.min(el.clientWidth || 600, 1160)); }
  // Plot heights: the plotting area itself stays at least 160 px tall
  // once the x axis (about 50 px) is taken off.
  var TS_HEIGHT = 260, BIG_HEIGHT = 300, MODEL_HEIGHT = 250;

  // Numbers as people read them: 12,345 / 123.4 / 1.23 / 0.012.
  function num(v) {
    if (v == null || !isFinite(v)) return "–";
    var a = Math.abs(v);
    if (a >= 100) return Math.round(v).toLocaleString("en-US");
    if (a >= 10) return v.toFixed(1);
    if (a >= 0.1 || a === 0) return v.toFixed(2);
    return v.toPrecision(2);
  }

  // The mean and last value of a column, ignoring gaps.
  function stats(col) {
    var sum = 0, n = 0, last = null;
    for (var i = 0; i < col.length; i++) {
      var v = col[i];
      if (v == null) continue;
      sum += v; n++; last = v;
    }
    return { mean: n ? sum / n : null, last: last };
  }

  // A legend value that stays put: the series' mean when the cursor is off
  // the chart (uPlot would print "--"), the value under it otherwise.
  function legendValue(idle, unit) {
    return function (u, v, si, idx) {
      if (idx == null) return idle;
      return v == null ? "–" : num(v) + (unit ? " " + unit : "");
    };
  }

  // y from zero: the top is the data's (or 1 for an empty series), the
  // bottom always 0, so a small wobble never looks like a collapse.
  function fromZero(top) {
    return function (u, min, max) {
      var hi = max > 0 ? max * 1.08 : 1;
      if (top) hi = Math.max(hi, top);
      return [0, hi];
    };
  }

  // Shaded regions (stalls, cliffs) behind the series.
  function shadePlugin(regions) {
    return { hooks: { drawClear: [function (u) {
      if (!regions || !regions.length) return;
      var ctx = u.ctx, b = u.bbox;
      ctx.save();
      regions.forEach(function (r) {
        var x0 = u.valToPos(r[0], "x", true), x1 = u.valToPos(r[1], "x", true);
        x0 = Math.max(b.left, x0); x1 = Math.min(b.left + b.width, x1);
        if (x1 <= x0) return;
        var sh = data.shade || {};
        ctx.fillStyle = sh[r[2]] || sh.other || "rgba(120,120,120,0.12)";
        ctx.fillRect(x0, b.top, x1 - x0, b.height);
      });
      ctx.restore();
    }] } };
  }

  function allEmpty(col) {
    for (var i = 0; i < col.length; i++) if (col[i] !== null && col[i] !== 0) return false;
    return true;
  }

  // Time-series charts of one result: app and device series share x.
  // Each group names the unit of its left axis and, if any, its right.
  var groups = [
    { title: "Throughput", unit: "MB/s", fio: [1, 2], dev: [1, 2] },
    { title: "IOPS", unit: "IOPS", fio: [3, 4], dev: [3, 4] },
    { title: "Latency: app mean, device await", unit: "ms", fio: [5, 6], dev: [5, 6] },
    { title: "Device queue size and utilisation", unit: "IOs in queue", dev: [7, 8], right: ["util %"], rightUnit: "%", rightTop: 100 },
    { title: "Dirty and writeback memory, iowait", unit: "MB", sys: [1, 2, 3], right: ["iowait %"], rightUnit: "%", rightTop: 100 }
  ];
  var dashes = { fio: null, dev: [6, 3], sys: null };
  // One colour per metric on every chart of the page.
  var metricKeys = ["writeback", "write", "w_await", "read", "r_await", "queue", "util", "dirty", "iowait"];
  var metricOf = { w_await: "write", r_await: "read" };
  function metricColor(name) {
    var m = data.metrics || {};
    for (var i = 0; i < metricKeys.length; i++) {
      var k = metricKeys[i];
      if (name.indexOf(k) >= 0) return m[metricOf[k] || k] || "#444";
    }
    return "#444";
  }

  // Smoothing: series sampled faster than once a second are drawn as a
  // 1 s moving mean unless the reader turns it off.
  var smoothBox = document.getElementById("smooth");
  function smoothOn() { return !smoothBox || smoothBox.checked; }
  function step(col) {
    var dts = [];
    for (var i = 1; i < col.length && dts.length < 50; i++) if (col[i] != null && col[i - 1] != null) dts.push(col[i] - col[i - 1]);
    dts.sort(function (a, b) { return a - b; });
    return dts.length ? dts[dts.length >> 1] : 1;
  }
  function movingMean(ts, col) {
    var w = Math.max(1, Math.round(1 / Math.max(step(ts), 1e-3)));
    if (w <= 1) return col;
    var out = new Array(col.length), h = w >> 1;
    for (var i = 0; i < col.length; i++) {
      var s = 0, n = 0;
      for (var j = Math.max(0, i - h); j <= Math.min(col.length - 1, i + (w - 1 - h)); j++) if (col[j] != null) { s += col[j]; n++; }
      out[i] = col[i] == null || !n ? null : s / n;
    }
    return out;
  }

  function drawSeries(item) {
    var host = document.getElementById(item.id);
    if (!host) return;
    var sync = uPlot.sync(item.id);
    groups.forEach(function (g) {
      var tables = [], series = [{ label: "t", value: legendValue("mean over the test", "s") }], ci = 0;
      ["fio", "dev", "sys"].forEach(function (src) {
        var tb = item[src], cols = g[src];
        if (!tb || !cols || !tb.cols || !tb.names) return;
        var tcols = [tb.cols[0]], keep = [];
        cols.forEach(function (c) {
          if (tb.cols[c] && !allEmpty(tb.cols[c])) { tcols.push(tb.cols[c]); keep.push({ name: tb.names[c - 1], col: tb.cols[c] }); }
        });
        if (keep.length === 0) return;
        tables.push(tcols);
        keep.forEach(function (k) {
          var right = g.right && g.right.indexOf(k.name) >= 0;
          var unit = right ? g.rightUnit : g.unit;
          var st = stats(k.col);
          ci++;
          series.push({ label: k.name, stroke: metricColor(k.name), width: 1.5, dash: dashes[src] || undefined,
            scale: right ? "r" : "y", spanGaps: true, points: { show: false },
            value: legendValue("mean " + num(st.mean) + (unit === "%" ? " %" : ""), unit === "%" ? "%" : "") });
        });
      });
      if (tables.length === 0) return;
      function joinAll(tbs) { return tbs.length === 1 ? tbs[0] : uPlot.join(tbs); }
      var raw = joinAll(tables);
      var smoothed = null;
      // Each source is smoothed on its own time axis, then joined.
      function view() {
        if (!item.fast || !smoothOn()) return raw;
        if (!smoothed) smoothed = joinAll(tables.map(function (tb) {
          return tb.map(function (c, i) { return i === 0 ? c : movingMean(tb[0], c); });
        }));
        return smoothed;
      }
      var joined = view();
      var div = document.createElement("div");
      var ttl = document.createElement("p");
      ttl.className = "ttl";
      ttl.textContent = g.title + (g.unit === g.title ? "" : " (" + g.unit + (g.rightUnit ? "; right axis " + g.rightUnit : "") + ")");
      div.appendChild(ttl);
      host.appendChild(div);
      var axes = [{ label: "seconds", labelSize: 18 }, { scale: "y", label: g.unit, labelSize: 18, size: 60 }];
      var scales = { x: { time: false }, y: { range: fromZero(0) } };
      if (series.some(function (s) { return s.scale === "r"; })) {
        axes.push({ scale: "r", side: 1, label: g.rightUnit, labelSize: 18, grid: { show: false }, size: 50 });
        scales.r = { range: fromZero(g.rightTop) };
      }
      var opts = { width: width(host), height: TS_HEIGHT, series: series, axes: axes, scales: scales,
        cursor: { sync: { key: sync.key } }, legend: { live: true }, plugins: [shadePlugin(item.shade)] };
      var u = new uPlot(opts, joined, div);
      u.iolensKind = "series";
      u.iolensFast = !!item.fast;
      u.iolensView = view;
      charts.push(u);
    });
  }

  function ninesLabel(n) {
    if (n === 0) return "min";
    var p = 100 * (1 - Math.pow(10, -n));
    return (Math.round(p * 1000) / 1000) + "";
  }

  // The value of a curve at a given number of nines (2 = p99).
  function at(xs, ys, n) {
    for (var i = 0; i < xs.length; i++) if (Math.abs(xs[i] - n) < 1e-9) return ys[i];
    return null;
  }

  function drawPct(item) {
    var host = document.getElementById(item.id);
    if (!host) return;
    var series = [{ label: "percentile", value: function (u, v, si, idx) { return idx == null ? "at p99" : v == null ? "" : ninesLabel(v); } }];
    var d = [item.x];
    list(item.sets).forEach(function (si, j) {
      var p99 = at(item.x, item.ys[j], 2);
      series.push({ label: data.sets[si], stroke: color(si), width: 2, spanGaps: true, points: { show: false },
        value: legendValue(p99 == null ? "–" : num(p99) + " ms", "ms") });
      d.push(item.ys[j]);
    });
    var opts = { width: width(host), height: BIG_HEIGHT, series: series,
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [{ splits: function () { return [0, 1, 2, 3, 4, 5]; }, values: function (u, vs) { return vs.map(ninesLabel); }, label: "percentile", labelSize: 18 },
             { label: "ms (log scale)", labelSize: 18, size: 60 }] };
    var u = new uPlot(opts, d, host);
    u.iolensKind = "pct";
    charts.push(u);
  }

  // The disk model: per curve its measured points, the fitted line and
  // its mean latency (dashed, right axis), against queue depth.
  function drawModel(item) {
    var host = document.getElementById(item.id);
    if (!host) return;
    var series = [{ label: "QD", value: function (u, v, si, idx) { return idx == null ? "every depth" : v == null ? "–" : "QD " + num(v); } }], d = [item.x];
    list(item.lines).forEach(function (l) {
      var s = { label: l.label, stroke: l.color, spanGaps: true };
      if (l.kind === "measured") {
        s.paths = function () { return null; };
        s.points = { show: true, size: 8, space: 0, fill: l.color };
        s.width = 2;
        s.value = legendValue("measured", item.unit);
      } else if (l.kind === "fit") {
        s.width = 1.5; s.points = { show: false };
        s.value = legendValue("fitted", item.unit);
      } else {
        s.scale = "ms"; s.width = 1.5; s.dash = [5, 4]; s.points = { show: true, size: 4, space: 0 };
        s.value = legendValue("mean", "ms");
      }
      series.push(s);
      d.push(l.y);
    });
    var knees = list(item.knees);
    var kneePlugin = { hooks: { draw: [function (u) {
      var ctx = u.ctx, b = u.bbox;
      ctx.save();
      knees.forEach(function (k, j) {
        var x = u.valToPos(k.qd, "x", true);
        if (x < b.left || x > b.left + b.width) return;
        ctx.strokeStyle = k.color; ctx.setLineDash([2, 3]); ctx.lineWidth = 1.5 * devicePixelRatio;
        ctx.beginPath(); ctx.moveTo(x, b.top); ctx.lineTo(x, b.top + b.height); ctx.stroke();
        ctx.fillStyle = k.color; ctx.font = (12 * devicePixelRatio) + "px sans-serif";
        ctx.fillText(k.label, x + 4, b.top + 14 * devicePixelRatio * (j + 1));
      });
      ctx.restore();
    }] } };
    var opts = { width: width(host), height: MODEL_HEIGHT, series: series, plugins: [kneePlugin],
      scales: { x: { time: false, distr: 3, log: 2 }, y: { range: fromZero(0) }, ms: { range: fromZero(0) } },
      axes: [{ label: "IOs in flight (queue depth)", labelSize: 18 }, { label: item.unit, labelSize: 18, size: 56 },
             { scale: "ms", side: 1, label: "latency ms", labelSize: 18, grid: { show: false }, size: 48 }] };
    var u = new uPlot(opts, d, host);
    u.iolensKind = "model";
    charts.push(u);
  }

  // Charts inside a closed test are drawn when it opens: they would have
  // no width before, and a long report opens at once.
  var pending = {};
  list(data.series).forEach(function (it) { pending[it.id] = function () { drawSeries(it); }; });
  list(data.pct).forEach(function (it) { pending[it.id] = function () { drawPct(it); }; });
  function drawWithin(el) {
    el.querySelectorAll(".ts, .plot").forEach(function (h) {
      var f = pending[h.id];
      if (f) { delete pending[h.id]; f(); }
    });
    document.body.setAttribute("data-charts", String(charts.length));
  }
  list(data.model).forEach(drawModel);
  document.querySelectorAll("details").forEach(function (d) {
    if (d.open) drawWithin(d);
    d.addEventListener("toggle", function () { if (d.open) drawWithin(d); });
  });
  if (smoothBox) smoothBox.addEventListener("change", function () {
    charts.forEach(function (u) { if (u.iolensFast) u.setData(u.iolensView()); });
  });
  var resizing = 0;
  window.addEventListener("resize", function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () { resize(0); }, 100);
  });

  // Fit the page width when printing, and back.
  function resize(w) {
    charts.forEach(function (u) {
      var el = u.root.parentNode;
      if (el.offsetParent === null && !w) return; // in a closed test
      u.setSize({ width: w || width(el), height: u.height });
    });
  }
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; drawWithin(d); });
    resize(680);
  });
  window.addEventListener("afterprint", function () { resize(0); });
  // The charts, for whoever inspects the page (and its tests).
  window.iolensCharts = charts;
  document.body.setAttribute("data-charts", String(charts.length));
  // Timings for the benchmark: drawing, and everything since navigation.
  document.body.setAttribute("data-draw-ms", String(Math.round(performance.now() - t0)));
  document.body.setAttribute("data-render-ms", String(Math.round(performance.now())));
})();
