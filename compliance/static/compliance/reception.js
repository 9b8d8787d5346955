// The reception's scanner (issue 26): a document scanner types the machine-readable zone as text, each line ended
// with Enter. Once the zone is whole (2 lines of 44 or 36 characters, or 3 of 30) and the scanner's last Enter comes,
// the form is sent: scan, decision, next visitor, with no click.
(function () {
  "use strict";
  var scan = document.getElementById("id_scan");
  if (!scan) { return; }
  var whole = function (text) {
    var lines = text.split(/\r?\n|\r/).map(function (line) { return line.replace(/\s/g, ""); })
      .filter(function (line) { return line.length > 0; });
    return (lines.length === 2 && (lines[0].length === 44 || lines[0].length === 36) && lines[1].length === lines[0].length) ||
      (lines.length === 3 && lines.every(function (line) { return line.length === 30; }));
  };
  scan.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && whole(scan.value)) {
      event.preventDefault();
      scan.form.requestSubmit();
    }
  });
  var lookup = document.getElementById("id_lookup");
  if (lookup) {
    lookup.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && lookup.value.trim()) {
        event.preventDefault();
        lookup.form.requestSubmit();
      }
    });
  }
}());
