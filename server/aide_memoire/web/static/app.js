// The page's only script: ask before a destructive form is sent (forms that carry a
// data-confirm text), and move focus to a message shown after a redirect.
"use strict";
document.addEventListener("submit", (event) => {
  const text = event.target.dataset ? event.target.dataset.confirm : "";
  if (text && !window.confirm(text)) event.preventDefault();
});
document.addEventListener("DOMContentLoaded", () => {
  const message = document.querySelector("[role=alert], [role=status]");
  if (message) { message.setAttribute("tabindex", "-1"); message.focus(); }
});
