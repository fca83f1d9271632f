(function () {
  "use strict";
  var t0 = performance.now();
  var data = JSON.parse(document.getElementById("iolens-data").textContent);
  var charts = [];
  var colors = data.colors;
  function color(i) { return colors[i % colors.length]; }
  function width(el) { return Math.max(300, Math.min(el.clientWidth || 900, 1000)); }

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
        ctx.fillStyle = r[2] === "stall" ? "rgba(220,0,0,0.15)" : r[2] === "cliff" ? "rgba(255,140,0,0.18)" : "rgba(120,120,120,0.12)";
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
  var groups = [
    { title: "Throughput (MB/s)", fio: [1, 2], dev: [1, 2] },
    { title: "IOPS", fio: [3, 4], dev: [3, 4] },
    { title: "Latency (ms): app mean, device await", fio: [5, 6], dev: [5, 6] },
    { title: "Device queue size and utilisation (%)", dev: [7, 8], right: ["util %"] },
    { title: "Dirty and writeback memory (MB), iowait (%)", sys: [1, 2, 3], right: ["iowait %"] }
  ];
  var dashes = { fio: null, dev: [6, 3], sys: null };
  var seriesColors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

  function drawSeries(item) {
    var host = document.getElementById(item.id);
    if (!host) return;
    var sync = uPlot.sync(item.id);
    groups.forEach(function (g) {
      var tables = [], series = [{ label: "t (s)" }], ci = 0;
      ["fio", "dev", "sys"].forEach(function (src) {
        var tb = item[src], cols = g[src];
        if (!tb || !cols) return;
        var tcols = [tb.cols[0]], keep = [];
        cols.forEach(function (c) {
          if (!allEmpty(tb.cols[c])) { tcols.push(tb.cols[c]); keep.push(tb.names[c - 1]); }
        });
        if (keep.length === 0) return;
        tables.push(tcols);
        keep.forEach(function (name) {
          var right = g.right && g.right.indexOf(name) >= 0;
          series.push({ label: name, stroke: seriesColors[ci++ % seriesColors.length], width: 1.5, dash: dashes[src] || undefined,
            scale: right ? "r" : "y", spanGaps: true, points: { show: false } });
        });
      });
      if (tables.length === 0) return;
      var joined = tables.length === 1 ? tables[0] : uPlot.join(tables);
      var div = document.createElement("div");
      var ttl = document.createElement("p");
      ttl.className = "ttl";
      ttl.textContent = g.title;
      div.appendChild(ttl);
      host.appendChild(div);
      var axes = [{ label: "s" }, { scale: "y", size: 60 }];
      if (series.some(function (s) { return s.scale === "r"; })) axes.push({ scale: "r", side: 1, grid: { show: false }, size: 50 });
      var opts = { width: width(host), height: 170, series: series, axes: axes,
        scales: { x: { time: false } }, cursor: { sync: { key: sync.key } },
        legend: { live: true }, plugins: [shadePlugin(item.shade)] };
      charts.push(new uPlot(opts, joined, div));
    });
  }

  function ninesLabel(n) {
    if (n === 0) return "min";
    var p = 100 * (1 - Math.pow(10, -n));
    return (Math.round(p * 1000) / 1000) + "";
  }

  function drawPct(item) {
    var host = document.getElementById(item.id);
    if (!host) return;
    var series = [{ label: "percentile", value: function (u, v) { return v == null ? "" : ninesLabel(v); } }];
    var d = [item.x];
    item.sets.forEach(function (si, j) {
      series.push({ label: data.sets[si], stroke: color(si), width: 2, spanGaps: true, points: { show: false } });
      d.push(item.ys[j]);
    });
    var opts = { width: width(host), height: 260, series: series,
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [{ splits: function () { return [0, 1, 2, 3, 4, 5]; }, values: function (u, vs) { return vs.map(ninesLabel); }, label: "percentile" },
             { label: "ms (log)", size: 60 }] };
    charts.push(new uPlot(opts, d, host));
  }

  function drawQD(item) {
    var host = document.getElementById(item.id);
    if (!host) return;
    var series = [{ label: "outstanding IOs" }], d = [item.x];
    item.sets.forEach(function (si, j) {
      series.push({ label: data.sets[si] + " IOPS", stroke: color(si), width: 2, spanGaps: true, points: { show: true, size: 6 } });
      d.push(item.iops[j]);
    });
    item.sets.forEach(function (si, j) {
      series.push({ label: data.sets[si] + " p99 ms", stroke: color(si), width: 1.5, dash: [5, 4], scale: "ms", spanGaps: true, points: { show: true, size: 5 } });
      d.push(item.p99[j]);
    });
    var knees = { hooks: { draw: [function (u) {
      var ctx = u.ctx, b = u.bbox;
      ctx.save();
      item.knees.forEach(function (k, j) {
        if (!k) return;
        var x = u.valToPos(k, "x", true);
        ctx.strokeStyle = color(item.sets[j]);
        ctx.setLineDash([2, 3]);
        ctx.lineWidth = 2;
        ctx.beginPath(); ctx.moveTo(x, b.top); ctx.lineTo(x, b.top + b.height); ctx.stroke();
        ctx.fillStyle = color(item.sets[j]);
        ctx.font = (11 * devicePixelRatio) + "px sans-serif";
        ctx.fillText("knee QD " + k, x + 4, b.top + 12 * devicePixelRatio * (j + 1));
      });
      ctx.restore();
    }] } };
    var opts = { width: width(host), height: 260, series: series, plugins: [knees],
      scales: { x: { time: false, distr: 3, log: 2 }, ms: {} },
      axes: [{ label: "outstanding IOs (iodepth x numjobs)" }, { label: "IOPS", size: 60 }, { scale: "ms", side: 1, label: "p99 ms", grid: { show: false }, size: 50 }] };
    charts.push(new uPlot(opts, d, host));
  }

  data.series.forEach(drawSeries);
  data.pct.forEach(drawPct);
  data.qd.forEach(drawQD);

  // Fit the page width when printing, and back.
  function resize(w) {
    charts.forEach(function (u) {
      var el = u.root.parentNode;
      u.setSize({ width: w || width(el), height: u.height });
    });
  }
  window.addEventListener("beforeprint", function () { resize(680); });
  window.addEventListener("afterprint", function () { resize(0); });
  document.body.setAttribute("data-charts", String(charts.length));
  // Timings for the benchmark: drawing, and everything since navigation.
  document.body.setAttribute("data-draw-ms", String(Math.round(performance.now() - t0)));
  document.body.setAttribute("data-render-ms", String(Math.round(performance.now())));
})();
