/* One item at a time: records (with a subject's versions, an entity's stories, a hypothesis's
 * evidence), and the words: sources, one capture with its neighbours, sessions. */
(function () {
  "use strict";

  var PU = window.PU, D = PU.D, h = PU.h, add = PU.add, fmt = PU.fmt, badge = PU.badge, statusBadge = PU.statusBadge;
  var hashFor = PU.hashFor, itemLink = PU.itemLink;
  if (!D) { return; }
  var STORIES = 20;
  var HOME = {event: "timeline", state: "states", decision: "states", entity: "entities", context: "context",
    hypothesis: "hypotheses", intent: "hypotheses"};

  function recordRoute(id, params) {
    return PU.getItem("rec", id).then(function (rec) {
      if (!rec) { PU.notFound("Record", id); return; }
      renderRecord(rec, params || {});
    });
  }
  function renderRecord(rec, params) {
    var refs = rec.refs || {}, app = PU.app, concept = rec.kind === "entity" && rec.entity_type === "concept";
    PU.highlight(concept ? "knowledge" : HOME[rec.kind] || "knowledge");
    app.appendChild(h("h1", {id: "record-title"}, rec.title || rec.id, " ", badge(concept ? "concept card" : rec.kind, "kind-" + rec.kind), " ", statusBadge(rec.status),
      rec.sensitivity && rec.sensitivity !== "ordinary" ? [" ", badge(rec.sensitivity, "private")] : null));
    app.appendChild(h("p", {cls: "id"}, rec.id, " · ", h("a", {href: "#" + PU.hashOf("graph", "", {focus: rec.id}), text: "its neighbourhood in the graph"})));
    if (rec.status === "redirected") {
      app.appendChild(h("div", {cls: "notice", id: "redirect-notice"}, "This entity id was merged into ", PU.refLink(rec.canonical_id, refs),
        rec.merge_reason ? ". Reason: “" + rec.merge_reason + "”" : "", rec.merged_at ? " (" + PU.localTime(rec.merged_at) + ")" : "", ". References to it resolve to the canonical entity."));
    }
    if (rec.superseded_by) { app.appendChild(h("div", {cls: "notice"}, "Superseded by ", PU.refLink(rec.superseded_by, refs), "; this version stays readable.")); }
    if (rec.summary && rec.summary !== rec.claim) { app.appendChild(h("p", {cls: "summary", text: rec.summary})); }
    if (rec.versions) { renderVersions(rec); }
    if (rec.kind === "entity") { renderEntity(rec, refs, params); }
    if (rec.kind === "hypothesis" || rec.kind === "intent") { renderHypothesis(rec, refs); }
    var exp = PU.expansion(rec);
    if (exp) { app.appendChild(h("h2", {text: "Expansion (from the user's words)"})); add(app, exp); }
    var cardLike = rec.kind === "entity" || rec.kind === "context" || rec.kind === "hypothesis" || rec.kind === "intent";
    if (!cardLike || (rec.quotes && rec.quotes.length)) {
      app.appendChild(h("h2", {text: "The user's words"}));
      add(app, PU.quotesOf(rec));
    }
    var place = rec.versions ? rec.versions.filter(function (v) { return v.id === rec.id; })[0] : null;
    app.appendChild(h("h2", {text: "Fields"}));
    app.appendChild(PU.kv([["kind", rec.kind], ["domain", rec.domain], ["layer", rec.layer], ["salience", rec.salience === undefined ? null : String(rec.salience) + (rec.salience_basis ? " (" + rec.salience_basis + ")" : "")],
      ["confidence", rec.confidence === undefined ? null : String(rec.confidence)], ["sensitivity", rec.sensitivity], ["fidelity", rec.fidelity],
      ["dates", rec.date_start ? PU.dates(rec) + (rec.date_basis ? ", basis " + rec.date_basis : "") : (rec.kind === "event" ? "unknown" : null)],
      ["said", rec.said ? PU.localTime(rec.said) : null], ["phase", rec.phase], ["subject", rec.subject_key], ["aspect", rec.aspect], ["entity type", rec.entity_type],
      ["aliases", (rec.aliases || []).join(" · ")], ["tags", (rec.tags || []).join(" · ")],
      ["unresolved referents", (rec.unresolved_referents || []).join(" · ")],
      ["version", place ? place.n + " of " + rec.versions.length + " of this subject" : null],
      ["revision", rec.version === undefined ? null : String(rec.version) + " (changes to this record itself)"],
      ["recorded", PU.localTime(rec.created_at)], ["updated", PU.localTime(rec.updated_at)]]));
    var hyp = rec.kind === "hypothesis" || rec.kind === "intent";
    var links = [["Entities", rec.entity_refs], ["Related", rec.related_ids], ["Supersedes", rec.supersedes], ["Contradicts", hyp ? null : rec.contradicts],
      ["Supports", hyp ? null : rec.supports], ["Before (time neighbour)", rec.before_ids], ["After (time neighbour)", rec.after_ids]];
    var any = links.filter(function (l) { return l[1] && l[1].length; });
    if (any.length) {
      app.appendChild(h("h2", {text: "Links"}));
      any.forEach(function (l) { app.appendChild(h("h3", {text: l[0]})); app.appendChild(PU.idList(l[1], refs)); });
    }
    var caps = Object.keys(rec.capture_refs || {});
    if (caps.length) {
      app.appendChild(h("h2", {text: "Sources"}));
      app.appendChild(h("ul", {cls: "links"}, caps.map(function (c) {
        var info = rec.capture_refs[c];
        return h("li", null, PU.capLink(c, rec.capture_refs), info ? [" ", PU.saidSaved(info.said, info.saved), " · " + (info.speaker || "user") + " · " + info.status] : null);
      })));
    }
    var shown = {};  // an entity's stories, states and cards are listed above: not again here
    if (rec.page) { (rec.page.stories || []).concat(rec.page.current_states || [], rec.page.context_cards || []).forEach(function (x) { shown[x.id || x] = 1; }); }
    var others = (rec.referrers || []).filter(function (r) { return !shown[r[0]]; });
    if (others.length) {
      app.appendChild(h("h2", {text: rec.page ? "Also pointed at by" : "Pointed at by (" + fmt(rec.referrers_total) + ")"}));
      app.appendChild(h("ul", {cls: "links"}, others.map(function (r) { return h("li", null, PU.refLink(r[0], refs), h("span", {cls: "muted", text: " via " + r[1]})); })));
    }
  }
  function renderVersions(rec) {
    var vs = rec.versions;
    PU.app.appendChild(h("h2", {id: "versions", text: vs.length === 1 ? "The only version of this subject" : "All " + vs.length + " versions of this subject, in the order they were said"}));
    PU.app.appendChild(h("ol", {cls: "rows versions", "data-list": "versions"}, vs.map(function (v) {
      var me = v.id === rec.id;
      return h("li", {"data-id": v.id, "data-said": v.said || "", cls: me ? "this" : null}, h("div", {cls: "row-head"}, h("span", {cls: "vn", text: "v" + v.n}),
        me ? h("b", {text: v.title}) : h("a", {href: hashFor("record", v.id), text: v.title}), statusBadge(v.status), me ? badge("this page") : null),
        h("div", {cls: "muted small"}, PU.timeEl(v.said, "said "), v.date_start ? " · true from " + PU.dates(v) : null),
        v.summary ? h("p", {cls: "summary", text: v.summary}) : null, PU.rowQuote(v.quote));
    })));
  }
  function renderEntity(rec, refs, params) {
    var p = rec.page || {}, app = PU.app;
    app.appendChild(PU.kv([["mentions", fmt(p.mentions)], ["aliases", (rec.aliases || []).join(" · ")]]));
    if (rec.identities && rec.identities.length) {
      app.appendChild(h("h2", {text: "Identities"}));
      app.appendChild(h("ul", {cls: "links"}, rec.identities.map(function (i) { return h("li", {text: [i.platform, i.handle, i.display_name, i.status].filter(Boolean).join(" · ")}); })));
    }
    if (p.merged && p.merged.length) {
      app.appendChild(h("h2", {text: "Merged into this entity"}));
      app.appendChild(h("ul", {cls: "links", id: "merged-from"}, p.merged.map(function (m) {
        return h("li", null, h("a", {href: hashFor("entity", m.id), cls: "mono", text: m.id}), " (" + (m.title || "") + ") → here",
          m.merge_reason ? h("span", {cls: "muted", text: " · reason: " + m.merge_reason}) : null);
      })));
    }
    if (p.current_states && p.current_states.length) { app.appendChild(h("h2", {text: "Current states"})); app.appendChild(PU.idList(p.current_states, refs)); }
    if (p.context_cards && p.context_cards.length) { app.appendChild(h("h2", {text: "Context cards"})); app.appendChild(PU.idList(p.context_cards, refs)); }
    var rows = p.stories || [], pages = Math.max(1, Math.ceil(rows.length / STORIES));
    var page = Math.min(pages, Math.max(1, parseInt(params.spage || "1", 10) || 1));
    app.appendChild(h("h2", {id: "stories", text: "Stories (" + fmt(p.total_stories || 0) + "), newest first"}));
    if (!rows.length) { app.appendChild(h("p", {cls: "muted", text: "No stories point at this entity yet."})); return; }
    if (p.total_stories > rows.length) { app.appendChild(h("p", {cls: "muted", text: "The first " + fmt(rows.length) + " are listed here."})); }
    var list = h("ol", {cls: "rows", "data-list": "stories"}), shown = rows.slice((page - 1) * STORIES, page * STORIES), prev = null;
    shown.forEach(function (r) {
      if (!r.date_start && (!prev || prev.date_start)) { list.appendChild(h("li", {cls: "band", text: "no date given: by when it was said"})); }
      var when = r.date_start ? PU.dates(r) : r.said ? "said " + PU.localTime(r.said).slice(0, 10) : "date unknown";
      list.appendChild(h("li", {"data-id": r.id, "data-date": r.date_start || ""}, h("div", {cls: "row-head"}, h("span", {cls: "when date", text: when}),
        h("a", {href: hashFor("record", r.id), text: r.title || r.id}), badge(r.kind, "kind-" + r.kind), r.status !== "current" ? statusBadge(r.status) : null),
        PU.rowQuote(r.quote)));
      prev = r;
    });
    app.appendChild(list);
    if (pages > 1) { app.appendChild(PU.pager(page, pages, params, "spage")); }
  }
  function evidenceList(items, emptyText, cls) {
    if (!items || !items.length) { return h("p", {cls: "warn", text: emptyText}); }
    return h("ol", {cls: "rows evidence " + cls}, items.map(function (e) {
      if (!e.exists) { return h("li", null, h("span", {cls: "missing", text: e.id + " (missing)"})); }
      return h("li", {"data-id": e.id}, h("div", {cls: "row-head"}, h("span", {cls: "when date", text: PU.dates(e)}),
        h("a", {href: hashFor(PU.routeOf(e.kind), e.id), text: e.title || e.id}), badge(e.kind), e.status !== "current" ? statusBadge(e.status) : null),
        e.said ? h("div", {cls: "muted small"}, PU.timeEl(e.said, "said ")) : null,
        e.quote ? PU.rowQuote(e.quote) : h("p", {cls: "muted", text: "no words quoted"}));
    }));
  }
  function renderHypothesis(rec) {
    var app = PU.app, ev = rec.evidence || {};
    app.appendChild(h("div", {cls: "notice", text: "A model hypothesis, not a fact: only the user's own words can confirm it."}));
    app.appendChild(PU.kv([["claim", rec.claim], ["mechanism", rec.mechanism], ["alternatives", (rec.alternatives || []).join(" · ")], ["scope", rec.scope],
      ["confidence", rec.confidence === undefined ? null : String(rec.confidence)], ["expires", rec.expires_at]]));
    app.appendChild(h("h2", {text: "Supporting evidence (" + fmt((ev.supports || []).length) + ")"}));
    app.appendChild(evidenceList(ev.supports, "none", "supports"));
    app.appendChild(h("h2", {text: "Counter-evidence (" + fmt((ev.contradicts || []).length) + ")"}));
    app.appendChild(evidenceList(ev.contradicts, "None listed: look for what would contradict it before relying on it.", "contradicts"));
    if (rec.review) {
      app.appendChild(h("h2", {text: "Review"}));
      app.appendChild(PU.kv([["verdict", rec.review.status], ["note", rec.review.note], ["at", PU.localTime(rec.review.at)],
        ["confirmation", rec.review.capture_id ? PU.capLink(rec.review.capture_id, rec.capture_refs) : null]]));
    }
  }

  // --- Entities -----------------------------------------------------------------------
  function entitiesPage(_arg, params) {
    PU.heading("Entities", "People, places, groups, works and things, by how often records mention them. Merged ids are listed under Redirects.");
    var dir = PU.mount(PU.listView({
      name: "entities", params: params, noun: "entities",
      filters: [{key: "type", label: "type", options: D.filters.entities.types.filter(Boolean)}, {key: "q", label: "name or alias"}],
      match: function (r, p, hit) { return (!p.type || r.entity_type === p.type) && hit(r.id); },
      renderRow: function (r) {
        return h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("entity", r.id, r.title), badge(r.entity_type),
          h("span", {cls: "muted", text: fmt(r.mentions) + " mention(s)"}), h("span", {cls: "id", text: r.id})),
          r.aliases.length ? h("div", {cls: "muted", text: "aliases: " + r.aliases.join(" · ") + (r.alias_count > r.aliases.length ? " …" : "")}) : null);
      }
    }));
    PU.app.appendChild(h("h2", {id: "redirects", text: "Redirects (merged entities)"}));
    var red = PU.mount(PU.listView({
      name: "redirects", params: params, pageKey: "rpage", empty: "No entity has been merged.",
      renderRow: function (r) {
        return h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("entity", r.id, r.id), h("span", {text: "→"}),
          r.canonical_exists ? h("a", {href: hashFor("entity", r.redirect_to), text: (r.canonical_title || r.redirect_to) + " (" + r.redirect_to + ")"}) :
            h("span", {cls: "missing", text: r.redirect_to + " (missing)"})),
          h("div", {cls: "muted", text: "was “" + (r.title || "") + "” · reason: " + (r.merge_reason || "none given") + (r.merged_at ? " · " + PU.localTime(r.merged_at) : "")}));
      }
    }));
    return Promise.all([dir, red]);
  }

  // --- Sources: the words, newest first by when they were said -----------------------
  function sizeOf(n) { return n === null || n === undefined ? "" : n < 1024 ? n + " bytes" : n < 1048576 ? (n / 1024).toFixed(1) + " KB" : (n / 1048576).toFixed(1) + " MB"; }
  function wordsOf(r, q) {
    if (r.kind === "attachment") { return h("div", {cls: "attachment-line", text: "attachment: " + (r.name || "") + " · " + (r.media_type || "") + " · " + sizeOf(r.bytes)}); }
    if (r.withheld) { return h("p", {cls: "bad", text: "words withheld: the file no longer matches its SHA-256"}); }
    if (!r.words) { return null; }
    return h("blockquote", {cls: "quote words-row"}, q ? PU.marked(r.words, PU.search.terms(q)) : r.words);
  }
  function sourceRow(r, params) {
    return h("li", {"data-id": r.id, cls: "role-" + r.role}, h("div", {cls: "row-head"}, PU.saidSaved(r.said, r.saved),
      badge(r.speaker || "user", "role-" + r.role), r.role === "other" ? badge("other speaker") : null, statusBadge(r.status), badge(r.tier),
      h("span", {cls: "muted", text: fmt(r.records) + " record(s)"}),
      r.session_id ? h("a", {cls: "badge session", href: hashFor("session", r.session_id), text: "session " + r.session_id}) : null),
      wordsOf(r, params.q), h("div", {cls: "id"}, itemLink("capture", r.id, r.id, params.q ? "?q=" + encodeURIComponent(params.q) : "")));
  }
  function sourcesPage(_arg, params) {
    PU.heading("Sources", "Every capture of words kept verbatim, newest first by when it was said (“saved” is when the archive kept it). " +
      "Your own words and other speakers' are marked apart.");
    var f = D.filters.sources || {speakers: []};
    return PU.mount(PU.listView({
      name: "sources", params: params, noun: "captures",
      filters: [{key: "role", label: "whose words", options: [["user", "yours"], ["other", "other speakers'"]]},
        {key: "speaker", label: "speaker", options: f.speakers}, {key: "kind", label: "kind", options: ["text", "attachment"]},
        {key: "status", label: "ledger status", options: ["pending", "derived", "no-derivation-needed"]},
        {key: "tier", label: "tier", options: ["short_term", "long_term", "archive"]}, {key: "q", label: "words", placeholder: "any words"}],
      match: function (r, p, hit) {
        return (!p.role || r.role === p.role) && (!p.speaker || r.speaker === p.speaker) && (!p.kind || r.kind === p.kind) &&
          (!p.status || r.status === p.status) && (!p.tier || r.tier === p.tier) && hit(r.id);
      },
      renderRow: function (r, _prev, p) { return sourceRow(r, p); }
    }));
  }
  function neighbour(b, label) {
    if (!b) { return h("span", {cls: "muted nb", text: label === "next" ? "the last one" : "the first one"}); }
    return h("a", {cls: "nb " + label, href: hashFor("capture", b.id), rel: label === "next" ? "next" : "prev"},
      h("span", {cls: "nb-label", text: label === "next" ? "next ›" : "‹ previous"}), " ", h("span", {cls: "muted", text: PU.localTime(b.said) + " · " + (b.speaker || "user")}),
      h("span", {cls: "nb-words", text: b.words || ""}));
  }
  function attachmentView(a) {
    var box = h("div", {cls: "attachment", id: "attachment"}, PU.kv([["name", a.name], ["type", a.media_type], ["size", sizeOf(a.bytes)]]),
      h("a", {href: a.href, id: "attachment-link", text: "open the stored bytes"}));
    if (a.preview) {
      var img = h("img", {src: a.href, alt: a.name || "attachment", id: "attachment-preview", cls: "preview"});
      img.addEventListener("error", function () { img.replaceWith(h("p", {cls: "muted", text: "The preview could not be shown; the link opens the bytes."})); });
      box.insertBefore(img, box.firstChild);
    }
    return box;
  }
  function captureRoute(id, params) {
    return PU.getItem("cap", id).then(function (c) {
      if (!c) { PU.notFound("Capture", id); return; }
      var app = PU.app, pos = c.position || {};
      PU.heading(c.role === "other" ? (c.speaker || "Someone") + "'s words" : c.kind === "attachment" ? "Your attachment" : "Your words");
      app.appendChild(h("p", {cls: "lead"}, PU.saidSaved(c.said, c.saved), " · " + (c.speaker || "user"), c.session_id ? [" · ", h("a", {href: hashFor("session", c.session_id), text: "session " + c.session_id})] : null));
      app.appendChild(h("nav", {cls: "neighbours", "aria-label": "previous and next"}, neighbour(pos.previous, "previous"),
        h("span", {cls: "muted pos", text: fmt(pos.index) + " of " + fmt(pos.total) + (pos.scope === "session" ? " in this session" : " in the archive")}), neighbour(pos.next, "next")));
      if (c.missing) {
        app.appendChild(h("p", {cls: "notice bad", id: "withheld", text: c.withheld === "CAPTURE_TAMPERED" ?
          "The words are withheld: the file no longer matches the SHA-256 it was saved with. Restore it from a backup; see Diagnostics." :
          "The capture file is missing or unreadable (" + (c.withheld || "missing") + "): see Diagnostics."}));
      } else if (c.attachment) {
        app.appendChild(attachmentView(c.attachment));
      } else {
        app.appendChild(h("div", {cls: "words", id: "capture-text"}, params && params.q ? PU.marked(c.text, PU.search.terms(params.q)) : c.text));
        if (c.omitted_chars) { app.appendChild(h("p", {cls: "muted", text: fmt(c.omitted_chars) + " more characters are in the file below."})); }
      }
      app.appendChild(h("h2", {text: "Records derived from it (" + c.records.length + ")"}));
      add(app, PU.idList(c.records, c.refs) || h("p", {cls: "muted", text: c.status === "no-derivation-needed" ? "None needed: " + (c.reason || "") : "None yet."}));
      if (c.followups.length) {
        app.appendChild(h("h2", {text: "Follow-ups raised by it"}));
        app.appendChild(h("ul", {cls: "links"}, c.followups.map(function (f) { return h("li", null, h("a", {href: hashFor("followup", f), cls: "mono", text: f})); })));
      }
      app.appendChild(h("h2", {text: "Capture"}));
      app.appendChild(PU.kv([["said", c.said ? PU.localTime(c.said) + (c.occurred_at ? "" : " (when it was saved: no other time was given)") : null],
        ["saved", PU.localTime(c.saved)], ["speaker", c.speaker], ["whose words", c.role === "other" ? "another speaker's" : "yours"],
        ["SHA-256", h("code", {text: c.sha256})], ["file", h("code", {text: D.archive.root + "/" + c.path})], ["source", c.source], ["kind", c.kind],
        ["turn", c.turn_id], ["session", c.session_id], ["tier", c.tier], ["ledger status", c.status], ["reason", c.reason], ["closed at", PU.localTime(c.finalized_at)]]));
      if (c.pipeline) {
        app.appendChild(h("p", null, h("a", {href: c.pipeline, id: "pipeline-link", text: "This turn's pipeline page"}), h("span", {cls: "muted", text: " (receipt, capture check, records, closure, retrievals)"})));
      } else if (c.turn_id) {
        app.appendChild(h("p", {cls: "muted", text: "No pipeline page for this turn yet. Write it with python3 scripts/pipeline_view.py --turn-id " + c.turn_id + ", then reopen the dashboard."}));
      }
    });
  }

  // --- Sessions -----------------------------------------------------------------------
  function sessionsPage(_arg, params) {
    PU.heading("Sessions", "Conversations as they happened, the latest first.");
    return PU.mount(PU.listView({name: "sessions", params: params, empty: "No capture names a session.",
      renderRow: function (r) {
        return h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("session", r.id, r.id), h("span", {cls: "muted", text: fmt(r.captures) + " messages · " + fmt(r.user) + " yours · " + fmt(r.other) + " others'"})),
          h("div", {cls: "muted small"}, PU.timeEl(r.first_said, "from "), " ", PU.timeEl(r.last_said, "to "), r.speakers.length ? " · " + r.speakers.join(", ") : null));
      }}));
  }
  function sessionRoute(id, params) {
    return PU.getItem("ses", id).then(function (s) {
      if (!s) { PU.notFound("Session", id); return; }
      PU.heading("Session " + s.id, fmt(s.total) + " messages in the order they were said.");
      var pages = Math.max(1, Math.ceil(s.captures.length / PU.PAGE)), page = Math.min(pages, Math.max(1, parseInt(params.page || "1", 10) || 1));
      if (s.total > s.captures.length) { PU.app.appendChild(h("p", {cls: "muted", text: "The first " + fmt(s.captures.length) + " are listed here; the rest are in Sources."})); }
      PU.app.appendChild(h("ol", {cls: "rows chat", "data-list": "session"}, s.captures.slice((page - 1) * PU.PAGE, page * PU.PAGE).map(function (r) {
        return h("li", {"data-id": r.id, cls: "role-" + r.role}, h("div", {cls: "row-head"}, PU.timeEl(r.said, ""), badge(r.speaker || "user", "role-" + r.role),
          itemLink("capture", r.id, "open")), r.words ? h("div", {cls: "chat-words", text: r.words}) : null);
      })));
      if (pages > 1) { PU.app.appendChild(PU.pager(page, pages, params, "page")); }
    });
  }

  Object.assign(PU.pages, {record: recordRoute, entity: recordRoute, entities: entitiesPage, sources: sourcesPage, capture: captureRoute,
    sessions: sessionsPage, session: sessionRoute});
  Object.assign(PU.nav, {entity: "entities", record: "timeline", capture: "sources", session: "sources", sessions: "sources"});
}());
