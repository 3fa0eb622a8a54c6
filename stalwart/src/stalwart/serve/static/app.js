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
    localise(el);
    markTarget();
  });
}
// Times: every <time datetime> is written in the viewer's own zone; one marked
// data-relative reads "3 min ago", its full time in its title. Again after each update.
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const absolute = new Intl.DateTimeFormat(undefined, {
  year: "numeric", month: "short", day: "numeric",
  hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short",
});
const short = new Intl.DateTimeFormat(undefined, {
  month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit",
  hourCycle: "h23",
});
function ago(date) {
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  const steps = [[60, "second"], [3600, "minute"], [86400, "hour"], [Infinity, "day"]];
  let unit = 1;
  for (const [limit, name] of steps) {
    if (Math.abs(seconds) < limit) return relative.format(Math.round(seconds / unit), name);
    unit = limit;
  }
  return absolute.format(date);
}
function localise(root) {
  for (const el of root.querySelectorAll("time[datetime]")) {
    const date = new Date(el.getAttribute("datetime"));
    if (Number.isNaN(date.getTime())) continue;
    const full = absolute.format(date);
    if (el.hasAttribute("data-relative")) {
      el.textContent = ago(date);
      el.title = full;
    } else if (el.hasAttribute("data-short")) {
      el.textContent = short.format(date);
      el.title = full;
    } else {
      el.textContent = full;
    }
  }
}
localise(document);
setInterval(() => localise(document), 30000);
// The row a link points at (#call-...) stays marked when the stream redraws its table.
function markTarget() {
  const id = location.hash.slice(1);
  const found = id && document.getElementById(id);
  if (found && !found.classList.contains("targeted")) {
    found.classList.add("targeted");
    found.scrollIntoView({ block: "center" });
  }
}
markTarget();
