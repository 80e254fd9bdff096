// scenes ui: keeps each pair's merge draft while a person moves between pairs (in this
// tab's sessionStorage, never sent anywhere). Reading works without it.
(function () {
  function keep() {
    var form = document.querySelector("form.draft[data-pair]");
    if (!form) return;
    var key = "scenes-draft:" + form.dataset.pair;
    var fields = ["title", "summary"];
    var saved = null;
    try { saved = JSON.parse(sessionStorage.getItem(key) || "null"); } catch (e) { saved = null; }
    if (saved && !document.querySelector(".refused")) {
      fields.forEach(function (name) {
        if (typeof saved[name] === "string") form.elements[name].value = saved[name];
      });
    }
    form.addEventListener("input", function () {
      var draft = {};
      fields.forEach(function (name) { draft[name] = form.elements[name].value; });
      sessionStorage.setItem(key, JSON.stringify(draft));
    });
    form.addEventListener("submit", function (event) {
      var button = event.submitter;
      if (button && button.value === "merge") sessionStorage.removeItem(key);
    });
  }
  document.addEventListener("DOMContentLoaded", keep);
  document.addEventListener("htmx:afterSettle", keep);
})();
