// Picks the page the data names, stamps its template into #page and runs its
// renderer. A renderer that throws leaves the error on the page and
// data-rendered="error", so a browser test sees it instead of a blank page.
(function () {
  "use strict";
  const doc = JSON.parse(document.getElementById("edgemem-data").textContent);
  const render = EM.pages[doc.kind];
  try {
    if (!render) throw new Error("this report page cannot show '" + doc.kind + "' data");
    const template = document.getElementById("page-" + doc.kind);
    if (template) document.getElementById("page").append(template.content.cloneNode(true));
    render(doc);
    document.body.dataset.rendered = "ok";
  } catch (e) {
    const error = document.getElementById("error");
    error.textContent = "edgemem: the report could not be drawn: " + e.message;
    error.hidden = false;
    document.body.dataset.rendered = "error";
    throw e;
  }
})();
