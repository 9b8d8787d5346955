// Keyboard-only cash desk: Esc goes back to the scan field. On a transaction's page the receipt is shown
// on the page itself; P opens its PDF in a tab of its own (the browser prints it from there) and Enter,
// on the focused "Next" link, goes back to the desk. No page prints by itself: a PDF frame told to print
// crashed headless Chromium's tab.
document.addEventListener("keydown", function (event) {
  if (event.key === "Escape" && document.body.dataset.back) {
    window.location.href = document.body.dataset.back;
    return;
  }
  var typing = event.target.closest && event.target.closest("input, select, textarea");
  if (typing || event.ctrlKey || event.metaKey || event.altKey) {
    return;
  }
  var receipt = document.getElementById("receipt");
  if ((event.key === "p" || event.key === "P") && receipt) {
    event.preventDefault();
    receipt.click();
  }
});

// The visitor picked from today's visitors (issue 26): their age and document show under the list.
document.addEventListener("change", function (event) {
  if (!event.target || event.target.id !== "id_visitor") {
    return;
  }
  var detail = document.getElementById("visitor-detail");
  var item = document.querySelector('#visitor-details li[data-card="' + event.target.value + '"]');
  if (detail) {
    detail.textContent = item ? item.textContent : "";
  }
});
