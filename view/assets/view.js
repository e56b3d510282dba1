// bottled view: "/" focuses the search box; a link to a bottle line finds
// the part of the page that holds it; the page follows its bottles live
// over server-sent events from the view process.
"use strict";
(function () {
  const body = document.body;
  const page = body.dataset.page;
  const session = body.dataset.session || "";

  document.addEventListener("keydown", (e) => {
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    const box = document.querySelector('input[type="search"]');
    if (box) { e.preventDefault(); box.focus(); box.select(); }
  });

  // A bottle line "#L<n>" is the heading of a block, the start of a part
  // of one, or a line inside one: show the nearest part at or before it.
  function showLine() {
    const m = /^#L(\d+)$/.exec(location.hash);
    if (!m) return;
    const n = Number(m[1]);
    let el = document.getElementById("L" + n);
    if (!el) {
      let best = null, bestLine = -1;
      for (const a of document.querySelectorAll('[id^="L"]')) {
        const k = Number(a.id.slice(1));
        if (k <= n && k > bestLine) { best = a; bestLine = k; }
      }
      el = best;
    }
    if (!el) return;
    const block = el.closest("[data-first]") || el;
    for (const old of document.querySelectorAll(".target")) old.classList.remove("target");
    block.classList.add("target");
    const fold = el.closest("details");
    if (fold) fold.open = true;
    el.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", showLine);
  if (page === "session") showLine();

  if (page !== "list" && page !== "session") return;
  const live = document.getElementById("live");
  let pending = null, busy = false, again = false;
  // refresh fetches the page's part again and puts it in place, keeping
  // where the reader is.
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const u = new URL(location.href);
      u.hash = "";
      u.searchParams.set("part", page === "list" ? "list" : "body");
      const r = await fetch(u, { credentials: "same-origin", cache: "no-store" });
      if (r.ok) {
        const html = await r.text();
        const openFolds = new Set([...live.querySelectorAll("details[data-first]")].filter((d) => d.open).map((d) => d.dataset.first));
        const atEnd = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
        live.innerHTML = html;
        for (const d of live.querySelectorAll("details[data-first]")) if (openFolds.has(d.dataset.first)) d.open = true;
        if (atEnd && page === "session") window.scrollTo(0, document.body.scrollHeight);
        live.dataset.updated = String(Date.now());
        body.dispatchEvent(new Event("bottled:updated"));
      }
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }
  const events = new EventSource("/events");
  events.addEventListener("bottle", (e) => {
    if (page === "session" && e.data !== session && e.data !== "*") return;
    if (pending) return;
    pending = setTimeout(() => { pending = null; refresh(); }, page === "list" ? 100 : 0);
  });
  events.addEventListener("daemon", (e) => {
    const b = document.getElementById("daemon");
    if (!b) return;
    b.textContent = e.data;
    b.hidden = e.data === "";
  });
  events.addEventListener("open", () => body.setAttribute("data-live", "1"));
})();
