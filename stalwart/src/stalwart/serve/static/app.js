// Live parts without a build step: forms marked data-live are sent with fetch (the page
// never waits frozen on a slow run), and [data-stream] elements are replaced by what
// the server streams (server-sent events carrying rendered HTML).
"use strict";
function notice(text) {
  const el = document.getElementById("notice");
  if (!el) return;
  el.textContent = text || "";
  el.hidden = !text;
}
document.addEventListener("submit", async (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-live")) return;
  event.preventDefault();
  const body = new FormData(form, event.submitter);
  const buttons = form.querySelectorAll("button");
  buttons.forEach((b) => (b.disabled = true));
  if (form.hasAttribute("data-reset")) form.reset();
  try {
    const response = await fetch(form.action, {
      method: "POST", body, headers: { Accept: "application/json" }, credentials: "same-origin",
    });
    const answer = await response.json().catch(() => ({}));
    notice(response.ok ? "" : answer.message || response.statusText);
  } catch (error) {
    notice(String(error));
  } finally {
    buttons.forEach((b) => (b.disabled = false));
  }
});
for (const el of document.querySelectorAll("[data-stream]")) {
  const source = new EventSource(el.dataset.stream);
  source.addEventListener("update", (event) => {
    el.innerHTML = event.data;
  });
}
