// The count room's forms with a barcode scanner as a keyboard: a scanner types the code and presses Enter. In a
// one-line field Enter goes on to the next field instead of sending the form half filled; in the tickets' box it
// starts the next line (the browser does that itself). From the form's last field, Enter sends it.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    var field = event.target;
    if (event.key !== "Enter" || !field.form || !field.form.hasAttribute("data-scan")) {
      return;
    }
    if (field.tagName !== "INPUT" || field.type === "submit") {
      return;
    }
    var fields = Array.prototype.filter.call(field.form.elements, function (element) {
      return !element.disabled && element.type !== "hidden" && /^(INPUT|SELECT|TEXTAREA)$/.test(element.tagName);
    });
    var next = fields[fields.indexOf(field) + 1];
    if (!next) {
      return; // the last field: Enter sends the form
    }
    event.preventDefault();
    next.focus();
    if (next.select) {
      next.select();
    }
  });
})();
