// Package render draws what people print, scan and look at from the data
// the modules own: the labels of parts (PDF with Code 128 barcodes), the
// cutting plans' sheets for the saw operator (SVG, and the whole plan as
// one printable page) and the schedule's Gantt chart (SVG). It reads
// nothing from the database: the API hands it the modules' answers.
package render
