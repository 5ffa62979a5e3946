// The web UI's one script: a running build's log follows live from the API's log stream
// (GET /api/v1/builds/{id}/log?follow=1, Server-Sent Events on the same origin, the session
// cookie authenticating it). A message event carries log text, its id "<attempt>:<offset>";
// "attempt" starts a new attempt's log; "end" carries the build's final state. Without this
// script the page still shows the log as it was when loaded.
"use strict";
(function () {
  const log = document.getElementById("log");
  if (!log || !log.dataset.follow || typeof EventSource === "undefined") return;
  const status = document.getElementById("build-status");
  const live = document.getElementById("live");
  const es = new EventSource(log.dataset.follow);
  let pending = "";
  const line = function (text, cls) {
    const span = document.createElement("span");
    span.className = cls;
    span.textContent = text;
    log.appendChild(span);
    log.appendChild(document.createTextNode("\n"));
  };
  const append = function (text) {
    const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    const parts = (pending + text).split("\n");
    pending = parts.pop();
    for (const p of parts) line(p, "line");
    if (atBottom) log.scrollTop = log.scrollHeight;
  };
  const flush = function () {
    if (pending) line(pending, "line");
    pending = "";
  };
  es.onmessage = function (ev) { append(ev.data); };
  let attempt = log.dataset.attempt || "";
  es.addEventListener("attempt", function (ev) {
    let id = "";
    try { id = JSON.parse(ev.data).id || ""; } catch (e) { id = ""; }
    if (id === attempt) return; // the attempt the page shows, announced again on resuming
    attempt = id;
    flush();
    line("— a new attempt —", "line attempt");
  });
  es.addEventListener("attempt-end", flush);
  es.addEventListener("end", function (ev) {
    es.close(); // EventSource would reconnect after the server closes the stream
    flush();
    let state = "";
    try { state = JSON.parse(ev.data).status || ""; } catch (e) { state = ""; }
    if (status && state) {
      status.textContent = state;
      status.className = "state " + (/^(Completed|Substituted)$/.test(state) ? "done" : "failed");
    }
    if (live) live.textContent = "The build ended" + (state ? ": " + state : "") + ".";
  });
  es.onerror = function () {
    if (es.readyState === EventSource.CLOSED && live) live.textContent = "The live log stopped; reload the page to see more.";
  };
})();
