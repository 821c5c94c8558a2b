// The case explorer of the report (sections.py): draws, searches, sorts and expands the
// embedded rows of <script id="case-data">. Inline in the page; no network.
(function () {
  var node = document.getElementById("case-data");
  if (!node) { return; }
  var data = JSON.parse(node.textContent);
  var byGroup = {};
  data.forEach(function (r) { (byGroup[r.group] = byGroup[r.group] || []).push(r); });
  function num(x) { return x === null || x === undefined ? "—" : x.toFixed(3); }
  function signed(x) { return x === null || x === undefined ? "—" : (x >= 0 ? "+" : "") + x.toFixed(3); }
  function flag(x) { return x === null || x === undefined ? "—" : (x ? "pass" : "fail"); }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) {
      var b = document.createElement("bdi"); b.textContent = String(text); e.appendChild(b);
    }
    if (cls) { e.className = cls; }
    return e;
  }
  function list(xs) { return (xs || []).join("\n"); }
  var columns = {
    regression: [
      ["case", function (r) { return r.case_id; }, "l"],
      ["baseline", function (r) { return r.baseline_score; }, "n"],
      ["candidate", function (r) { return r.score; }, "n"],
      ["delta", function (r) { return r.score_delta; }, "s"],
      ["how it regressed", function (r) { return r.flip; }, "l"],
      ["evaluators behind it (lowest delta)", function (r) {
        var p = r.behind_paths || [];
        return p.length ? p.join(", ") + (p.length > 1 ? " (tie of " + p.length + ")" : "") : "—";
      }, "l"],
      ["their delta", function (r) { return r.behind_delta; }, "s"]
    ],
    fail: [
      ["case", function (r) { return r.case_id; }, "l"],
      ["score", function (r) { return r.score; }, "n"],
      ["outcome", function (r) { return r.flip; }, "l"],
      ["leaves not passing", function (r) { return (r.not_passed || []).join(", ") || "—"; }, "l"],
      ["failed checks", function (r) {
        return (r.outcomes || []).filter(function (o) { return o.side === "candidate" && o.passed === false; }).length;
      }, "i"]
    ]
  };
  function shown(v, how) {
    if (how === "n") { return num(v); }
    if (how === "s") { return signed(v); }
    return v === null || v === undefined ? "—" : v;
  }
  function searchText(r) {
    var parts = [r.case_id, r.flip].concat(r.behind_paths || [], r.not_passed || []);
    (r.evaluators || []).forEach(function (e) {
      parts.push(e.evaluator); parts = parts.concat(e.reasons || [], e.labels || [],
        e.baseline_reasons || [], e.baseline_labels || []);
    });
    (r.outcomes || []).forEach(function (o) { parts.push(o.outcome, o.justification); });
    return parts.filter(function (x) { return x; }).join("\n").toLowerCase();
  }
  function detail(r, kind, span) {
    var td = document.createElement("td"); td.colSpan = span;
    var ev = r.evaluators || [];
    if (ev.length) {
      var t = document.createElement("table"); var h = document.createElement("tr");
      (kind === "regression"
        ? ["evaluator", "baseline", "candidate", "delta", "passed", "labels", "judge reasons (candidate)", "judge reasons (baseline)"]
        : ["evaluator", "score", "passed", "labels", "judge reasons"]
      ).forEach(function (x) { h.appendChild(el("th", x)); });
      t.appendChild(h);
      ev.forEach(function (e) {
        var tr = document.createElement("tr"); tr.className = "evaluator-row";
        tr.appendChild(el("td", e.evaluator, "l"));
        if (kind === "regression") {
          tr.appendChild(el("td", num(e.baseline_score))); tr.appendChild(el("td", num(e.score)));
          tr.appendChild(el("td", signed(e.score_delta), e.score_delta < 0 ? "bad" : ""));
        } else { tr.appendChild(el("td", num(e.score))); }
        tr.appendChild(el("td", flag(e.passed)));
        tr.appendChild(el("td", list(e.labels), "text"));
        tr.appendChild(el("td", list(e.reasons), "text reason"));
        if (kind === "regression") { tr.appendChild(el("td", list(e.baseline_reasons), "text reason")); }
        t.appendChild(tr);
      });
      td.appendChild(t);
    } else { td.appendChild(el("p", "No per-evaluator scores for this case.", "note")); }
    var oc = r.outcomes || [];
    if (oc.length) {
      var o = document.createElement("table"); var oh = document.createElement("tr");
      ["outcome check", "run", "attempt", "passed", "justification"].forEach(function (x) { oh.appendChild(el("th", x)); });
      o.appendChild(oh);
      oc.forEach(function (c) {
        var tr = document.createElement("tr"); tr.className = "outcome-row";
        tr.appendChild(el("td", c.outcome, "text")); tr.appendChild(el("td", c.side));
        tr.appendChild(el("td", c.attempt)); tr.appendChild(el("td", flag(c.passed), c.passed ? "ok" : "bad"));
        tr.appendChild(el("td", c.justification || "—", "text justification"));
        o.appendChild(tr);
      });
      td.appendChild(o);
    } else { td.appendChild(el("p", "No outcome checks for this case.", "note")); }
    return td;
  }
  document.querySelectorAll("div.cases").forEach(function (box) {
    var kind = box.getAttribute("data-kind");
    var rows = byGroup[box.getAttribute("data-group")] || [];
    var cols = columns[kind];
    var table = box.querySelector("table.case-table");
    var head = document.createElement("thead"); var hr = document.createElement("tr");
    hr.appendChild(el("th", ""));
    var bodies = rows.map(function (r) {
      var tb = document.createElement("tbody"); tb.className = "case";
      tb.setAttribute("data-case", r.case_id);
      tb.setAttribute("data-search", searchText(r));
      var tr = document.createElement("tr"); tr.className = "case-row";
      tr.setAttribute("aria-expanded", "false"); tr.tabIndex = 0;
      tr.appendChild(el("td", "▸", "toggle"));
      cols.forEach(function (c) { tr.appendChild(el("td", shown(c[1](r), c[2]), c[2] === "l" ? "l" : "")); });
      var dr = document.createElement("tr"); dr.className = "case-detail"; dr.hidden = true;
      var filled = false;
      function toggle() {
        if (!filled) { dr.appendChild(detail(r, kind, cols.length + 1)); filled = true; }
        dr.hidden = !dr.hidden;
        tr.setAttribute("aria-expanded", dr.hidden ? "false" : "true");
        tr.firstChild.textContent = dr.hidden ? "▸" : "▾";
      }
      tr.addEventListener("click", toggle);
      tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(); } });
      tb.appendChild(tr); tb.appendChild(dr);
      return {body: tb, row: r};
    });
    cols.forEach(function (c, i) {
      var th = el("th", c[0], c[2] === "l" ? "l" : "");
      th.addEventListener("click", function () {
        var desc = th.classList.contains("sorted-asc");
        hr.querySelectorAll("th").forEach(function (x) { x.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(desc ? "sorted-desc" : "sorted-asc");
        bodies.sort(function (a, b) {
          var x = c[1](a.row), y = c[1](b.row);
          if (x === null || x === undefined) { return 1; }
          if (y === null || y === undefined) { return -1; }
          var d = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
          return desc ? -d : d;
        });
        bodies.forEach(function (b) { table.appendChild(b.body); });
      });
      hr.appendChild(th);
    });
    head.appendChild(hr); table.appendChild(head);
    bodies.forEach(function (b) { table.appendChild(b.body); });
    box.setAttribute("data-rows", String(bodies.length));
    var search = box.querySelector("input.case-search");
    search.addEventListener("input", function () {
      var q = search.value.toLowerCase();
      bodies.forEach(function (b) { b.body.hidden = q !== "" && b.body.getAttribute("data-search").indexOf(q) < 0; });
    });
  });
  // report.html#case=ID opens that case's rows (and scrolls to the first)
  var m = /^#case=(.+)$/.exec(window.location.hash);
  if (m) {
    var wanted = decodeURIComponent(m[1]), first = null;
    document.querySelectorAll("tbody.case").forEach(function (tb) {
      if (tb.getAttribute("data-case") === wanted) { tb.querySelector("tr.case-row").click(); first = first || tb; }
    });
    if (first) {
      for (var d = first.parentNode; d; d = d.parentNode) { if (d.tagName === "DETAILS") { d.open = true; } }
      first.scrollIntoView({block: "center"});
    }
  }
})();
