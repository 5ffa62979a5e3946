// The web UI's one script: a running build's log follows live from the API's log stream
// (Server-Sent Events on the same origin, the session cookie authenticating it). Each event
// carries a chunk of the log, its id the byte offset; "end" carries the final state. Without
// this script the page still shows the log as it was when loaded.
"use strict";
(function () {
  const log = document.getElementById("log");
  if (!log || !log.dataset.follow || typeof EventSource === "undefined") return;
  const status = document.getElementById("build-status");
  const live = document.getElementById("live");
  const url = new URL(log.dataset.follow, location.href);
  url.searchParams.set("offset", log.dataset.offset || "0");
  const es = new EventSource(url.toString());
  let pending = "";
  const textOf = function (data) {
    try {
      const v = JSON.parse(data);
      if (typeof v === "string") return v;
      if (v && typeof v.data === "string") return v.data;
      if (v && typeof v.text === "string") return v.text;
    } catch (e) { /* plain text */ }
    return data;
  };
  const append = function (text) {
    const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    pending += text;
    const parts = pending.split("\n");
    pending = parts.pop();
    for (const line of parts) {
      const span = document.createElement("span");
      span.className = "line";
      span.textContent = line;
      log.appendChild(span);
      log.appendChild(document.createTextNode("\n"));
    }
    if (atBottom) log.scrollTop = log.scrollHeight;
  };
  const onChunk = function (ev) { append(textOf(ev.data)); };
  es.onmessage = onChunk;
  es.addEventListener("log", onChunk);
  es.addEventListener("end", function (ev) {
    es.close();
    if (pending) append("\n");
    let state = ev.data;
    try {
      const v = JSON.parse(ev.data);
      state = (v && (v.status || v.state)) || state;
    } catch (e) { /* plain text */ }
    if (status && state) status.textContent = state;
    if (live) live.textContent = "The build ended: " + state + ".";
  });
  es.onerror = function () {
    if (es.readyState === EventSource.CLOSED && live) live.textContent = "The live log stopped; reload to see more.";
  };
})();
