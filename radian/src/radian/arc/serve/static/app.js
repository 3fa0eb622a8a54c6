// The fleet's page stays live without a build step: each [data-stream] element is replaced
// by what the server streams (server-sent events carrying its rendered HTML). EventSource
// reconnects by itself when the server restarts.
"use strict";
for (const el of document.querySelectorAll("[data-stream]")) {
  const source = new EventSource(el.dataset.stream);
  source.addEventListener("update", (event) => {
    el.innerHTML = event.data;
    el.dataset.updates = String(Number(el.dataset.updates || "0") + 1);
  });
}
