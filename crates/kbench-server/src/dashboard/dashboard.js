// The query forms navigate to the same page with their non-empty fields as
// the query (the page's policy sends no form anywhere else, and an empty
// field would override a default).
(function () {
  "use strict";
  Array.prototype.forEach.call(document.querySelectorAll("form.query"), function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var query = new URLSearchParams();
      new FormData(form).forEach(function (value, key) {
        if (value !== "") {
          query.append(key, value);
        }
      });
      location.search = query.toString();
    });
  });
})();
