// convo serve's one script: search as you type. Results come as JSON and are built with
// textContent, never as HTML: a hit's text cannot become markup. Nothing else runs.
(function () {
  "use strict";
  var q = document.getElementById("q");
  var out = document.getElementById("results");
  var status = document.getElementById("status");
  if (!q || !out) return;
  var timer = null;
  var asked = 0;
  function show(data, n, text) {
    if (n !== asked) return;
    out.textContent = "";
    data.hits.forEach(function (h) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = h.href;
      a.textContent = h.title;
      li.appendChild(a);
      var where = document.createElement("span");
      where.className = "where";
      where.textContent = " " + h.short + " · " + h.where;
      li.appendChild(where);
      var line = document.createElement("div");
      line.className = "line";
      h.parts.forEach(function (p) {
        var e = document.createElement(p[1] ? "mark" : "span");
        e.textContent = p[0];
        line.appendChild(e);
      });
      li.appendChild(line);
      out.appendChild(li);
    });
    if (status) {
      var k = data.hits.length;
      status.textContent = !text.trim() ? "" : k === 0 ? "no hits" :
        data.more ? "the first " + k + " hits: add words to narrow it" : k + " hits";
    }
    out.setAttribute("data-live", text);
  }
  function search() {
    var n = ++asked;
    var text = q.value;
    history.replaceState(null, "", "/search?q=" + encodeURIComponent(text));
    if (!text.trim()) { show({ hits: [], more: false }, n, text); return; }
    fetch("/api/search?q=" + encodeURIComponent(text), { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (d) { show(d, n, text); });
  }
  q.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(search, 150);
  });
  // Opened with ?q=: the page came with its hits; asking again proves the live path works.
  if (q.value) search();
})();
