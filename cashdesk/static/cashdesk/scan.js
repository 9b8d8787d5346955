// The count room's forms with a barcode scanner as a keyboard: a scanner types the code and presses Enter. In a
// one-line field Enter goes to the next field instead of sending the form half filled; in the tickets' box it
// starts the next line (the browser does that itself). The form is sent with its button, or Enter on it.
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
    event.preventDefault();
    var fields = Array.prototype.filter.call(field.form.elements, function (element) {
      return !element.disabled && element.type !== "hidden" && element.tagName !== "FIELDSET";
    });
    var next = fields[fields.indexOf(field) + 1];
    if (next) {
      next.focus();
      if (next.select) {
        next.select();
      }
    }
  });
})();
