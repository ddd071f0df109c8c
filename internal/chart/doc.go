// Package chart draws line charts of resources over time as inline SVG,
// for the dashboard's pages and the simulator's report: no script and no
// external asset, every text escaped. It also formats amounts of
// resources (bytes in binary units) and shares as percentages.
package chart
