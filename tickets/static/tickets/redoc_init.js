// ReDoc under the office's Content-Security-Policy: started from this file, not an inline script. ReDoc adds
// its styles as style elements (styled-components); they carry the page's nonce, which this script tag holds
// (the policy of that one page allows style elements with it, tickets/api/urls.py). No search: it would run in
// a worker made from a blob: URL.
(function () {
  "use strict";
  // The sidebar's footer shows Redocly's logo from their CDN, and no option turns it off: images on this page
  // come from the office only (the policy would refuse the logo; the closed network could not serve it).
  // React sets an image's address twice, as an attribute and then as the property.
  var ours = function (address) {
    return new URL(address, document.baseURI).origin === window.location.origin;
  };
  var src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  Object.defineProperty(HTMLImageElement.prototype, "src", {
    configurable: true,
    enumerable: src.enumerable,
    get: src.get,
    set: function (address) {
      if (ours(address)) {
        src.set.call(this, address);
      }
    },
  });
  var setAttribute = Element.prototype.setAttribute;
  HTMLImageElement.prototype.setAttribute = function (name, value) {
    if (String(name).toLowerCase() !== "src" || ours(value)) {
      setAttribute.call(this, name, value);
    }
  };
  var script = document.currentScript;
  Redoc.init(
    script.dataset.specUrl,
    { nonce: script.nonce, disableSearch: true },
    document.getElementById("redoc-container"),
  );
})();
