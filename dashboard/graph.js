/* The graph: every kind of record and the follow-ups, linked by their references. A small force
 * layout of our own, drawn as SVG; zoom (wheel, pinch, buttons), pan (drag), search, kind
 * toggles, a tap shows a node's links, and #graph?focus=<id> draws one item's neighbourhood.
 * Labels stay 12 px on screen whatever the zoom, and only as many as fit without overlap. */
(function () {
  "use strict";

  var PU = window.PU, D = PU.D, h = PU.h, fmt = PU.fmt;
  if (!D) { return; }
  var SVG = "http://www.w3.org/2000/svg", FONT = 12, NEIGHBOURS = 80;
  var KINDS = ["entity", "concept", "event", "state", "decision", "context", "knowledge", "hypothesis", "followup"];
  var REL_FIELDS = [["entity_refs", "entity"], ["related_ids", "related"], ["supports", "supports"], ["contradicts", "contradicts"],
    ["supersedes", "supersedes"], ["before_ids", "before"], ["after_ids", "after"], ["merged_from", "merged"]];

  function s(tag, attrs) { var el = document.createElementNS(SVG, tag); Object.keys(attrs || {}).forEach(function (k) { el.setAttribute(k, attrs[k]); }); return el; }
  function routeFor(node) { return node.kind === "followup" ? "followup" : PU.routeOf(node.kind); }
  function layout(n, edges) {
    // Fruchterman-Reingold with gravity toward the centre, in world units; the view fits it afterwards.
    var x = new Float64Array(n), y = new Float64Array(n), dx = new Float64Array(n), dy = new Float64Array(n);
    for (var i = 0; i < n; i++) { var a = 2.399963 * i, r = 10 * Math.sqrt(i + 1); x[i] = r * Math.cos(a); y[i] = r * Math.sin(a); }
    var k = 40, far = 36 * k * k, temp = 80, rounds = n > 200 ? 160 : 250;
    for (var it = 0; it < rounds; it++) {
      dx.fill(0); dy.fill(0);
      for (i = 0; i < n; i++) {
        for (var j = i + 1; j < n; j++) {
          var ex = x[i] - x[j], ey = y[i] - y[j], d2 = ex * ex + ey * ey + 0.01;
          if (d2 > far) { continue; }  // distant nodes do not push: components stay near each other
          var f = k * k / d2;
          dx[i] += ex * f; dy[i] += ey * f; dx[j] -= ex * f; dy[j] -= ey * f;
        }
      }
      edges.forEach(function (e) {
        var ex = x[e[0]] - x[e[1]], ey = y[e[0]] - y[e[1]], d = Math.sqrt(ex * ex + ey * ey) + 0.01, f = d / k;
        dx[e[0]] -= ex * f; dy[e[0]] -= ey * f; dx[e[1]] += ex * f; dy[e[1]] += ey * f;
      });
      for (i = 0; i < n; i++) {
        dx[i] -= x[i] * 0.05; dy[i] -= y[i] * 0.05;
        var len = Math.sqrt(dx[i] * dx[i] + dy[i] * dy[i]) + 0.01, step = Math.min(len, temp);
        x[i] += dx[i] / len * step; y[i] += dy[i] / len * step;
      }
      temp = Math.max(1, temp * 0.97);
    }
    return {x: x, y: y};
  }
  function packed(n, edges) {
    // Each connected part laid out on its own, then the parts set in rows, the largest first, so none drifts far off.
    var part = new Int32Array(n).fill(-1), parts = [];
    var adj = [];
    for (var i = 0; i < n; i++) { adj.push([]); }
    edges.forEach(function (e) { adj[e[0]].push(e[1]); adj[e[1]].push(e[0]); });
    for (i = 0; i < n; i++) {
      if (part[i] >= 0) { continue; }
      var members = [i], at = 0;
      part[i] = parts.length;
      while (at < members.length) { adj[members[at++]].forEach(function (j) { if (part[j] < 0) { part[j] = parts.length; members.push(j); } }); }
      parts.push(members);
    }
    parts.sort(function (a, b) { return b.length - a.length; });
    var x = new Float64Array(n), y = new Float64Array(n), boxes = [], area = 0;
    parts.forEach(function (members) {
      var local = {}, sub = [];
      members.forEach(function (m, k) { local[m] = k; });
      edges.forEach(function (e) { if (local[e[0]] !== undefined && local[e[1]] !== undefined) { sub.push([local[e[0]], local[e[1]]]); } });
      var p = layout(members.length, sub), x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      members.forEach(function (_m, k) { x0 = Math.min(x0, p.x[k]); x1 = Math.max(x1, p.x[k]); y0 = Math.min(y0, p.y[k]); y1 = Math.max(y1, p.y[k]); });
      var box = {members: members, p: p, x0: x0, y0: y0, w: x1 - x0 + 60, h: y1 - y0 + 60};
      area += box.w * box.h;
      boxes.push(box);
    });
    var rowWidth = Math.max(boxes.length ? boxes[0].w : 0, Math.sqrt(area) * 1.4), cx = 0, cy = 0, rowH = 0;
    boxes.forEach(function (b) {
      if (cx > 0 && cx + b.w > rowWidth) { cx = 0; cy += rowH; rowH = 0; }
      b.members.forEach(function (m, k) { x[m] = cx + 30 + b.p.x[k] - b.x0; y[m] = cy + 30 + b.p.y[k] - b.y0; });
      cx += b.w;
      rowH = Math.max(rowH, b.h);
    });
    return {x: x, y: y};
  }
  function textWidth(label) {
    var w = 0;
    for (var i = 0; i < label.length; i++) { w += label.charCodeAt(i) > 0x2e80 ? FONT : FONT * 0.58; }
    return w;
  }

  // explorer(nodes, edges, opts) -> element; nodes [{id, kind, label, degree}], edges [[i, j, rel]]
  function explorer(nodes, edges, opts) {
    var n = nodes.length, pos = packed(n, edges), adj = nodes.map(function () { return []; });
    edges.forEach(function (e) { adj[e[0]].push(e[1]); adj[e[1]].push(e[0]); });
    var wrap = h("div", {id: "graph-wrap"}), view = {k: 1, tx: 0, ty: 0}, W = 1000, H = 600;
    var svg = s("svg", {role: "img", "aria-label": "graph of records: drag to move, pinch or use the buttons to zoom", id: "graph-svg"});
    var world = s("g", {id: "graph-world"}), edgeEls = [], nodeEls = [];
    svg.appendChild(world);
    edges.forEach(function (e) {
      var el = s("line", {"class": "edge " + e[2] + " ek-" + nodes[e[0]].kind + " ek-" + nodes[e[1]].kind, x1: pos.x[e[0]], y1: pos.y[e[0]], x2: pos.x[e[1]], y2: pos.y[e[1]]});
      world.appendChild(el);
      edgeEls.push(el);
    });
    nodes.forEach(function (node, i) {
      var g = s("g", {"class": "node k-" + node.kind, "data-id": node.id, "data-i": String(i), tabindex: "0"});
      var title = s("title"); title.textContent = (node.label || node.id) + " (" + node.kind + ", " + node.degree + " links)";
      var c = s("circle", {cx: pos.x[i], cy: pos.y[i]}), t = s("text", {x: pos.x[i], y: pos.y[i]});
      t.textContent = node.label || node.id;
      g.appendChild(title); g.appendChild(c); g.appendChild(t);
      g.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { select(i, true); } });
      world.appendChild(g);
      nodeEls.push({g: g, c: c, t: t, r: Math.min(14, 5 + Math.sqrt(node.degree) * 1.6), w: textWidth(node.label || node.id)});
    });
    var selected = opts.focusIndex === undefined ? -1 : opts.focusIndex, matches = null, hidden = {};
    var info = h("div", {id: "graph-info", cls: "graph-info", "aria-live": "polite"});
    var find = h("input", {type: "search", id: "graph-find", placeholder: "find a node", "aria-label": "find a node by name"});
    var found = h("span", {cls: "muted", id: "graph-found"});
    function button(label, title, fn, id) { return h("button", {type: "button", title: title, "aria-label": title, id: id, onclick: fn, text: label}); }
    var tools = h("div", {cls: "graph-tools"}, h("label", {cls: "find"}, find), found,
      button("+", "zoom in", function () { zoom(1.5, W / 2, H / 2); }, "zoom-in"), button("−", "zoom out", function () { zoom(1 / 1.5, W / 2, H / 2); }, "zoom-out"),
      button("fit", "show everything", fit, "zoom-fit"));
    var kinds = {};
    nodes.forEach(function (nd) { kinds[nd.kind] = (kinds[nd.kind] || 0) + 1; });
    var legend = h("div", {cls: "legend"}, KINDS.filter(function (k) { return kinds[k]; }).map(function (k) {
      var b = h("button", {type: "button", cls: "lg", "aria-pressed": "true", "data-kind": k}, h("i", {cls: "lg-" + k}), k + " " + kinds[k]);
      b.addEventListener("click", function () {
        hidden[k] = !hidden[k];
        b.setAttribute("aria-pressed", hidden[k] ? "false" : "true");
        svg.classList.toggle("hide-k-" + k, !!hidden[k]);
        labels();
      });
      return b;
    }));
    wrap.appendChild(tools);
    wrap.appendChild(h("div", {cls: "graph-box"}, svg));
    wrap.appendChild(info);
    wrap.appendChild(legend);

    function apply() {
      world.setAttribute("transform", "translate(" + view.tx.toFixed(2) + " " + view.ty.toFixed(2) + ") scale(" + view.k.toFixed(4) + ")");
      var k = view.k;
      nodeEls.forEach(function (el, i) {
        var big = i === selected ? 1.4 : 1;
        el.c.setAttribute("r", (el.r * big / k).toFixed(3));
        el.t.setAttribute("font-size", (FONT / k).toFixed(3));
        el.t.setAttribute("x", (pos.x[i] + (el.r + 3) / k).toFixed(2));
        el.t.setAttribute("y", (pos.y[i] + 4 / k).toFixed(2));
      });
      svg.setAttribute("data-zoom", k.toFixed(3));
      labels();
    }
    function labels() {
      // Most important first (the selection, matches, hubs); a label is drawn only where it overlaps none already drawn.
      var order = nodes.map(function (_n, i) { return i; });
      var near = selected >= 0 ? adj[selected] : [];
      function rank(i) { return (i === selected ? 4 : 0) + (near.indexOf(i) >= 0 ? 2 : 0) + (matches && matches[i] ? 3 : 0); }
      order.sort(function (a, b) { return rank(b) - rank(a) || nodes[b].degree - nodes[a].degree; });
      var boxes = [], shown = 0;
      nodeEls.forEach(function (el, i) {  // labels keep clear of the dots too
        if (hidden[nodes[i].kind]) { return; }
        var sx = pos.x[i] * view.k + view.tx, sy = pos.y[i] * view.k + view.ty;
        boxes.push([sx - el.r, sy - el.r, sx + el.r, sy + el.r, i]);
      });
      order.forEach(function (i) {
        var el = nodeEls[i], sx = pos.x[i] * view.k + view.tx, sy = pos.y[i] * view.k + view.ty;
        var box = [sx + el.r + 3, sy - FONT, sx + el.r + 3 + el.w, sy + 4];
        var ok = !hidden[nodes[i].kind] && sx > -50 && sx < W + 50 && sy > -20 && sy < H + 20 && !(matches && !matches[i] && rank(i) === 0 && selected < 0) &&
          boxes.every(function (b) { return b[4] === i || box[0] > b[2] || box[2] < b[0] || box[1] > b[3] || box[3] < b[1]; });
        el.t.style.display = ok ? "" : "none";
        if (ok) { boxes.push(box); shown += 1; }
      });
      svg.setAttribute("data-labels", String(shown));
    }
    function zoom(f, cx, cy) {
      var k = Math.max(0.05, Math.min(20, view.k * f));
      view.tx = cx - (cx - view.tx) * (k / view.k);
      view.ty = cy - (cy - view.ty) * (k / view.k);
      view.k = k;
      apply();
    }
    function fit() {
      var x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      for (var i = 0; i < n; i++) { x0 = Math.min(x0, pos.x[i]); x1 = Math.max(x1, pos.x[i]); y0 = Math.min(y0, pos.y[i]); y1 = Math.max(y1, pos.y[i]); }
      var label = Math.min(W * 0.35, Math.max.apply(null, nodeEls.map(function (el) { return el.w; }).concat([0])) + 20);
      var k = Math.min((W - 40 - label) / Math.max(1, x1 - x0), (H - 60) / Math.max(1, y1 - y0), 3);
      view.k = k;
      view.tx = 20 + (W - 40 - label - (x1 - x0) * k) / 2 - x0 * k;  // room on the right for the labels
      view.ty = H / 2 - (y0 + y1) / 2 * k;
      apply();
    }
    function centre(i) { view.tx = W / 2 - pos.x[i] * view.k; view.ty = H / 2 - pos.y[i] * view.k; apply(); }
    function select(i, move) {
      selected = i;
      nodeEls.forEach(function (el, j) { el.g.classList.toggle("selected", j === i); el.g.classList.toggle("near", i >= 0 && adj[i].indexOf(j) >= 0); });
      svg.classList.toggle("has-selection", i >= 0);
      info.textContent = "";
      if (i >= 0) {
        var node = nodes[i];
        PU.add(info, [h("div", {cls: "row-head"}, h("a", {href: PU.hashFor(routeFor(node), node.id), cls: "item-open", text: node.label || node.id}), PU.badge(node.kind),
          h("span", {cls: "muted", text: fmt(adj[i].length) + " link(s) here"})),
          node.kind !== "followup" && node.id !== opts.focus ? h("p", null, h("a", {href: "#" + PU.hashOf("graph", "", {focus: node.id}), text: "show only its neighbourhood"})) : null,
          adj[i].length ? h("ul", {cls: "links neighbours-list"}, adj[i].slice(0, 40).map(function (j) {
            return h("li", null, h("a", {href: PU.hashFor(routeFor(nodes[j]), nodes[j].id), text: nodes[j].label || nodes[j].id}), " ", PU.badge(nodes[j].kind));
          })) : null]);
        if (move) { centre(i); }
      }
      apply();
    }
    function search() {
      var q = find.value.trim().toLowerCase(), count = 0;
      matches = q ? nodes.map(function (nd) { var hit = (nd.label || nd.id).toLowerCase().indexOf(q) >= 0 || nd.id.indexOf(q) >= 0; count += hit ? 1 : 0; return hit; }) : null;
      nodeEls.forEach(function (el, i) { el.g.classList.toggle("match", !!(matches && matches[i])); });
      svg.classList.toggle("searching", !!matches);
      found.textContent = matches ? (count ? fmt(count) + " match" + (count === 1 ? "" : "es") : "no match for “" + find.value.trim() + "”") : "";
      labels();
      return count;
    }
    find.addEventListener("input", search);
    find.addEventListener("keydown", function (ev) {
      if (ev.key !== "Enter") { return; }
      ev.preventDefault();
      if (search() && matches) { select(matches.indexOf(true), true); }
    });

    // pointers: one drags the view, two pinch it; a tap on a node selects it
    var pointers = {}, gesture = null;
    function local(ev) { var r = svg.getBoundingClientRect(); return [(ev.clientX - r.left) * W / r.width, (ev.clientY - r.top) * H / r.height]; }
    svg.addEventListener("pointerdown", function (ev) {
      pointers[ev.pointerId] = local(ev);
      try { svg.setPointerCapture(ev.pointerId); } catch (e) { /* not every pointer can be captured */ }
      gesture = {start: local(ev), moved: 0, target: ev.target.closest ? ev.target.closest(".node") : null, view: {k: view.k, tx: view.tx, ty: view.ty}};
    });
    svg.addEventListener("pointermove", function (ev) {
      if (!pointers[ev.pointerId] || !gesture) { return; }
      var prev = pointers[ev.pointerId], now = local(ev), ids = Object.keys(pointers);
      pointers[ev.pointerId] = now;
      if (ids.length === 2) {
        var other = pointers[ids[0] === String(ev.pointerId) ? ids[1] : ids[0]];
        var before = Math.hypot(prev[0] - other[0], prev[1] - other[1]), after = Math.hypot(now[0] - other[0], now[1] - other[1]);
        if (before > 0) { zoom(after / before, (now[0] + other[0]) / 2, (now[1] + other[1]) / 2); }
        gesture.moved = 99;
        return;
      }
      view.tx += now[0] - prev[0];
      view.ty += now[1] - prev[1];
      gesture.moved += Math.abs(now[0] - prev[0]) + Math.abs(now[1] - prev[1]);
      apply();
    });
    function up(ev) {
      delete pointers[ev.pointerId];
      if (gesture && !Object.keys(pointers).length) {
        if (gesture.moved < 6) { select(gesture.target ? Number(gesture.target.getAttribute("data-i")) : -1, false); }
        gesture = null;
      }
    }
    svg.addEventListener("pointerup", up);
    svg.addEventListener("pointercancel", up);
    svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var p = local(ev);
      zoom(Math.exp(-ev.deltaY * 0.0015), p[0], p[1]);
    }, {passive: false});

    wrap.start = function () {  // once in the page: size the view to its box
      var r = svg.getBoundingClientRect();
      W = Math.max(200, Math.round(r.width)) || W;
      H = Math.max(200, Math.round(r.height)) || H;
      svg.setAttribute("viewBox", "0 0 " + W + " " + H);
      fit();
      if (selected >= 0) { select(selected, false); }
    };
    return wrap;
  }

  function legendText(g) {
    return "Showing " + fmt(g.nodes.length) + " of " + fmt(g.total_nodes) + " items (the most connected first) and " + fmt(g.shown_edges) + " of " + fmt(g.total_edges) + " links.";
  }
  function wholeGraph(g) {
    PU.app.appendChild(h("p", {cls: "muted", id: "graph-count", text: legendText(g) + " Drag to move, pinch, scroll or use + and − to zoom; tap a node for its links."}));
    if (!g.nodes.length) { PU.app.appendChild(h("p", {cls: "muted", text: "Nothing to draw yet."})); return; }
    var ex = explorer(g.nodes, g.edges, {});
    PU.app.appendChild(ex);
    ex.start();
  }
  function neighbourhood(g, id) {
    return Promise.all([PU.getItem("rec", id)]).then(function (got) {
      var rec = got[0];
      if (!rec) { PU.notFound("Record", id); return; }
      var refs = rec.refs || {}, rel = {};
      REL_FIELDS.forEach(function (f) { (rec[f[0]] || []).forEach(function (x) { rel[x] = rel[x] || f[1]; }); });
      (rec.referrers || []).forEach(function (r) { rel[r[0]] = rel[r[0]] || r[1]; });
      [rec.superseded_by, rec.redirect_to, rec.canonical_id].forEach(function (x) { if (x) { rel[x] = rel[x] || "supersedes"; } });
      var ids = Object.keys(refs).filter(function (x) { return refs[x] && x !== rec.id; });
      var more = Math.max(0, ids.length - NEIGHBOURS);
      ids = ids.slice(0, NEIGHBOURS);
      var kindOf = function (label) { var k = label.kind; return k === "intent" ? "hypothesis" : ["fact", "preference", "rule", "model", "value", "heuristic", "fragment"].indexOf(k) >= 0 ? "knowledge" : k; };
      var focusKind = rec.kind === "entity" && rec.entity_type === "concept" ? "concept" : kindOf({kind: rec.kind});
      var nodes = [{id: rec.id, kind: focusKind, label: rec.title, degree: ids.length}];
      var at = {};
      at[rec.id] = 0;
      ids.forEach(function (x) { at[x] = nodes.length; nodes.push({id: x, kind: kindOf(refs[x]), label: refs[x].title, degree: 1}); });
      var edges = ids.map(function (x) { return [0, at[x], rel[x] || "related"]; }), seen = {};
      g.edges.forEach(function (e) {  // links between the neighbours that the whole graph knows
        var a = g.nodes[e[0]].id, b = g.nodes[e[1]].id;
        if (at[a] > 0 && at[b] > 0 && !seen[a + " " + b]) { seen[a + " " + b] = 1; edges.push([at[a], at[b], e[2]]); nodes[at[a]].degree += 1; nodes[at[b]].degree += 1; }
      });
      PU.app.appendChild(h("p", {cls: "muted", id: "graph-count"}, "The neighbourhood of ", h("a", {href: PU.hashFor(PU.routeOf(focusKind), rec.id), text: rec.title || rec.id}),
        ": " + fmt(ids.length) + " linked item(s)" + (more ? " (" + fmt(more) + " more on its page)" : "") + ". ", h("a", {href: "#graph", text: "the whole graph"})));
      var ex = explorer(nodes, edges, {focus: rec.id, focusIndex: 0});
      PU.app.appendChild(ex);
      ex.start();
    });
  }
  function graphPage(_arg, params) {
    PU.heading(params.focus ? "Graph: one neighbourhood" : "Graph", "People, things, events, states, decisions, cards, hypotheses and follow-ups, linked by their references.");
    return PU.load("graph").then(function (g) { return params.focus ? neighbourhood(g, params.focus) : wholeGraph(g); });
  }
  PU.pages.graph = graphPage;
}());
