// mark each chart figure with what the browser laid out (read by the browser test)
document.querySelectorAll("figure.chart").forEach(function (fig) {
  var svg = fig.querySelector("svg");
  var marks = svg ? svg.querySelectorAll("g.role-mark > *").length : 0;
  var box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  fig.setAttribute("data-marks", String(marks));
  fig.setAttribute("data-rendered",
    svg && marks > 0 && box.width > 0 && box.height > 0 ? "yes" : "no");
});
// mark each table box with whether its table fits the window's width (no side scrolling)
document.querySelectorAll("div.wrap").forEach(function (box) {
  box.setAttribute("data-fits", box.scrollWidth <= box.clientWidth + 1 ? "yes" : "no");
});
