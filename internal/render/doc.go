// Package render draws what people print, scan and look at from the data
// the modules own: the labels of parts and offcuts (PDF with Code 128
// barcodes, ZPL for thermal printers), the cutting plans' sheets for the
// saw operator (SVG, the whole plan as one PDF or one printable page) and
// the schedule's Gantt chart (SVG). It reads nothing from the database:
// the API hands it the modules' answers.
package render
