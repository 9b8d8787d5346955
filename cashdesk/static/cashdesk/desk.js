// Keyboard-only cash desk: Esc goes back to the scan field; on a receipt page
// the receipt's print dialog opens by itself and P prints it again.
document.addEventListener("keydown", function (event) {
  if (event.key === "Escape" && document.body.dataset.back) {
    window.location.href = document.body.dataset.back;
  }
  if ((event.key === "p" || event.key === "P") && document.getElementById("receipt-frame")) {
    document.getElementById("receipt-frame").contentWindow.print();
  }
});
window.addEventListener("load", function () {
  var frame = document.getElementById("receipt-frame");
  if (frame) {
    try { frame.contentWindow.print(); } catch (error) { /* the link still prints */ }
  }
});
