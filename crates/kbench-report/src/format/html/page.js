// Sorting and filtering of the metrics table (and of the charts with it).
// The page is complete without this script; it only adds the controls.
// The state is kept in the address's fragment (#v=regression&q=pipe&sort=c1-desc)
// so that a filtered view can be linked to.
(function () {
  "use strict";
  var table = document.getElementById("metrics");
  var controls = document.getElementById("controls");
  if (!table || !controls || !table.tHead || !table.tBodies.length) {
    return;
  }
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var text = document.getElementById("f-text");
  // No verdict filter on a page without comparisons.
  var verdict = document.getElementById("f-verdict") || {
    value: "",
    addEventListener: function () {}
  };
  var count = document.getElementById("f-count");
  var sort = { key: "", dir: 0 };

  function index(row) {
    return Number(row.getAttribute("data-i"));
  }

  function matches(el) {
    var q = text.value.trim().toLowerCase();
    var name = (el.getAttribute("data-name") || "").toLowerCase();
    if (q && name.indexOf(q) < 0) {
      return false;
    }
    var v = verdict.value;
    if (!v) {
      return true;
    }
    var verdicts = (el.getAttribute("data-verdicts") || "").split(" ");
    if (v === "changed") {
      return verdicts.indexOf("regression") >= 0 || verdicts.indexOf("improvement") >= 0;
    }
    return verdicts.indexOf(v) >= 0;
  }

  function cellValue(row, column, numeric) {
    var cell = row.cells[column];
    if (!cell) {
      return null;
    }
    var v = cell.getAttribute("data-v");
    if (numeric) {
      var n = parseFloat(v);
      return isNaN(n) ? null : n;
    }
    return v === null ? cell.textContent : v;
  }

  function order() {
    var column = -1;
    var numeric = false;
    heads.forEach(function (h, i) {
      h.removeAttribute("aria-sort");
      if (sort.dir && h.getAttribute("data-key") === sort.key) {
        column = i;
        numeric = h.getAttribute("data-type") === "num";
        h.setAttribute("aria-sort", sort.dir > 0 ? "ascending" : "descending");
      }
    });
    var list = rows.slice();
    list.sort(function (a, b) {
      if (column >= 0) {
        var x = cellValue(a, column, numeric);
        var y = cellValue(b, column, numeric);
        if (x !== null || y !== null) {
          if (x === null) {
            return 1;
          }
          if (y === null) {
            return -1;
          }
          var c = numeric ? x - y : x.localeCompare(y);
          if (c) {
            return c * sort.dir;
          }
        }
      }
      return index(a) - index(b);
    });
    list.forEach(function (row) {
      tbody.appendChild(row);
    });
  }

  function save() {
    var parts = [];
    if (text.value) {
      parts.push("q=" + encodeURIComponent(text.value));
    }
    if (verdict.value) {
      parts.push("v=" + encodeURIComponent(verdict.value));
    }
    if (sort.dir) {
      parts.push("sort=" + encodeURIComponent(sort.key) + (sort.dir < 0 ? "-desc" : ""));
    }
    var hash = parts.length ? "#" + parts.join("&") : "";
    if (hash === location.hash || (!hash && !isState(location.hash))) {
      return;
    }
    try {
      history.replaceState(null, "", hash || location.pathname + location.search);
    } catch (e) {
      // Some viewers refuse to change the address of a local file: the
      // view still works, it just cannot be linked to.
    }
  }

  function isState(hash) {
    return /^#(q|v|sort)=/.test(hash);
  }

  function load() {
    if (!isState(location.hash)) {
      return;
    }
    location.hash.slice(1).split("&").forEach(function (part) {
      var eq = part.indexOf("=");
      var key = part.slice(0, eq);
      var value;
      try {
        value = decodeURIComponent(part.slice(eq + 1));
      } catch (e) {
        return;
      }
      if (key === "q") {
        text.value = value;
      } else if (key === "v") {
        verdict.value = value;
        if (verdict.value !== value) {
          verdict.value = "";
        }
      } else if (key === "sort") {
        var desc = /-desc$/.test(value);
        sort.key = desc ? value.slice(0, -5) : value;
        sort.dir = desc ? -1 : 1;
      }
    });
  }

  function apply() {
    var shown = 0;
    rows.forEach(function (row) {
      var visible = matches(row);
      row.hidden = !visible;
      var chart = document.getElementById(row.getAttribute("data-chart") || "");
      if (chart) {
        chart.hidden = !visible;
      }
      if (visible) {
        shown += 1;
      }
    });
    count.textContent = shown + " of " + rows.length + " metric" + (rows.length === 1 ? "" : "s");
    save();
  }

  heads.forEach(function (h) {
    if (!h.getAttribute("data-key")) {
      return;
    }
    // Move the header's content into a button (no markup is re-parsed).
    var button = document.createElement("button");
    button.type = "button";
    while (h.firstChild) {
      button.appendChild(h.firstChild);
    }
    h.appendChild(button);
    button.addEventListener("click", function () {
      var key = h.getAttribute("data-key");
      if (sort.key !== key) {
        sort.key = key;
        sort.dir = 1;
      } else {
        sort.dir = sort.dir === 1 ? -1 : sort.dir === -1 ? 0 : 1;
      }
      order();
      save();
    });
  });
  text.addEventListener("input", apply);
  verdict.addEventListener("change", apply);
  load();
  controls.hidden = false;
  table.classList.add("sortable");
  order();
  apply();
})();
