// Running totals on the count and exchange forms: each denomination's value as the cashier types its pieces,
// and the form's total. Worked in integer cents, never floating-point euros. The server renders the
// values of one piece (data-denomination, a decimal string) and checks the form again; without this script
// the form works the same, only without the totals.
(function () {
  "use strict";

  // "0.50" -> 50, "6502,65" -> 650265, "12" -> 1200; null for anything else.
  function cents(text) {
    var match = /^\s*(\d{1,13})(?:[.,](\d{1,2}))?\s*$/.exec(text || "");
    if (!match) {
      return null;
    }
    return Number(match[1]) * 100 + Number(((match[2] || "") + "00").slice(0, 2));
  }

  function pieces(text) {
    var match = /^\s*(\d{1,9})\s*$/.exec(text || "");
    return match ? Number(match[1]) : null;
  }

  var money = new Intl.NumberFormat(document.documentElement.lang || "lt", { style: "currency", currency: "EUR" });

  // The string form keeps the figure exact: Intl reads "1234.50" as a decimal, not as a binary fraction.
  function format(value) {
    var sign = value < 0 ? "-" : "";
    var whole = Math.floor(Math.abs(value) / 100);
    var rest = String(Math.abs(value) % 100).padStart(2, "0");
    return money.format(sign + whole + "." + rest);
  }

  function setUp(form) {
    var total = form.querySelector("output#running-total");
    var counted = form.querySelectorAll("input[data-denomination]");
    var euros = form.querySelectorAll("input[data-euros]");
    if (!total || counted.length + euros.length === 0) {
      return;
    }
    var subtotals = new Map();
    counted.forEach(function (input) {
      var output = document.createElement("output");
      output.className = "subtotal";
      output.htmlFor = input.id;
      input.insertAdjacentElement("afterend", output);
      subtotals.set(input, output);
    });

    function update() {
      var sum = 0;
      var unreadable = false;
      counted.forEach(function (input) {
        var output = subtotals.get(input);
        var count = input.value.trim() === "" ? 0 : pieces(input.value);
        var each = cents(input.dataset.denomination);
        if (count === null || each === null) {
          output.textContent = "?";
          unreadable = true;
          return;
        }
        sum += count * each;
        output.textContent = count ? "= " + format(count * each) : "";
      });
      euros.forEach(function (input) {
        var value = input.value.trim() === "" ? 0 : cents(input.value);
        if (value === null) {
          unreadable = true;
        } else {
          sum += value;
        }
      });
      total.textContent = unreadable ? "?" : format(sum);
    }

    form.addEventListener("input", update);
    total.parentElement.hidden = false;
    update();
  }

  document.querySelectorAll("form").forEach(setUp);
})();
