// The live page of a running session: each run event adds a row (text
// only), the end event says so and stops.
"use strict";
(function () {
  const status = document.getElementById("live-status");
  if (!status) return;
  const url = status.getAttribute("data-events");
  const table = document.getElementById("session-runs");
  const es = new EventSource(url);
  function tbody() {
    let t = document.getElementById("session-runs");
    if (!t) {
      const sec = document.getElementById("runs-section");
      t = document.createElement("table");
      t.id = "session-runs";
      const head = t.createTHead().insertRow();
      for (const h of ["id", "started", "command", "label", "arm", "score", "passed"]) {
        const th = document.createElement("th");
        th.textContent = h;
        head.appendChild(th);
      }
      t.createTBody();
      const empty = sec.querySelector(".empty");
      if (empty) empty.remove();
      sec.appendChild(t);
    }
    return t.tBodies[0];
  }
  es.addEventListener("run", function (ev) {
    const r = JSON.parse(ev.data);
    const row = tbody().insertRow();
    row.setAttribute("data-run", String(r.id));
    const cells = [String(r.id), r.started, r.command, r.label, r.arm, r.score, r.passed];
    cells.forEach(function (text, i) {
      const td = row.insertCell();
      if (i === 0) {
        const a = document.createElement("a");
        a.href = r.href;
        a.textContent = text;
        td.appendChild(a);
      } else {
        td.textContent = text;
      }
    });
  });
  es.addEventListener("end", function (ev) {
    const s = JSON.parse(ev.data);
    status.textContent = s.status;
    status.setAttribute("data-ended", "1");
    es.close();
  });
})();
