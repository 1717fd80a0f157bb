package render

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	"codeberg.org/go-pdf/fpdf"

	"github.com/tsekh/tsekh/internal/purchasing"
)

// PurchaseOrderPDF writes the purchase order as the letter sent to its
// supplier, on A4 portrait pages: the order's number, date and supplier,
// then a row per line (the supplier's article, the material, its unit,
// quantity, price, sum and expected date), the total and the note.
func PurchaseOrderPDF(w io.Writer, o purchasing.Order) error {
	pdf := fpdf.New("P", "mm", "A4", "")
	newPDF(pdf, fmt.Sprintf("Заказ поставщику №%d", o.ID))
	pdf.AddPage()
	line := func(y, size float64, s string) {
		pdf.SetFont("dejavu", "", size)
		pdf.SetTextColor(0, 0, 0)
		pdf.Text(15, y, fitText(printable(s), size, 180))
	}
	date := o.CreatedAt
	if o.OrderedAt != nil {
		date = *o.OrderedAt
	}
	line(20, 16, fmt.Sprintf("Заказ поставщику №%d от %s", o.ID, date.Format("02.01.2006")))
	line(29, 11, "Поставщик: "+o.Supplier)
	line(35, 10, "Состояние: "+purchaseStatusRU(o.Status))
	cols := []struct {
		head  string
		w     float64
		align string
	}{{"№", 8, "R"}, {"Артикул", 20, "L"}, {"Код", 28, "L"}, {"Материал", 48, "L"}, {"Ед.", 9, "L"}, {"Кол-во", 14, "R"}, {"Цена", 16, "R"},
		{"Сумма", 19, "R"}, {"Срок", 18, "L"}}
	y := 42.0
	row := func(cells []string) {
		x := 15.0
		pdf.SetFont("dejavu", "", 8)
		for i, c := range cols {
			pdf.SetXY(x, y)
			pdf.CellFormat(c.w, 6, fitText(printable(cells[i]), 8, c.w-2), "1", 0, c.align, false, 0, "")
			x += c.w
		}
		y += 6
	}
	heads := make([]string, len(cols))
	for i, c := range cols {
		heads[i] = c.head
	}
	row(heads)
	for _, l := range o.Lines {
		if y > 270 {
			pdf.AddPage()
			y = 15
			row(heads)
		}
		row([]string{strconv.Itoa(l.N), cmp.Or(l.SupplierCode, "—"), l.Code, l.Name, unitRU(l.Unit), qtyText(l.Qty), money(l.Price), money(l.Qty * l.Price),
			l.ExpectedOn.Format("02.01.2006")})
	}
	y += 6
	line(y, 11, "Итого: "+money(o.Total))
	if o.Note != "" {
		line(y+7, 10, "Примечание: "+o.Note)
	}
	doc, err := outputPDF(pdf)
	if err != nil {
		return err
	}
	_, err = w.Write(doc)
	return err
}

func purchaseStatusRU(s string) string {
	switch s {
	case purchasing.StatusDraft:
		return "черновик"
	case purchasing.StatusOrdered:
		return "заказан"
	case purchasing.StatusPartiallyReceived:
		return "получен частично"
	case purchasing.StatusReceived:
		return "получен"
	}
	return "отменён"
}

func unitRU(u string) string {
	switch u {
	case "sheet":
		return "лист"
	case "m":
		return "м"
	}
	return "шт"
}

func qtyText(v float64) string {
	return strings.ReplaceAll(strconv.FormatFloat(v, 'f', -1, 64), ".", ",")
}

func money(v float64) string { return strings.ReplaceAll(strconv.FormatFloat(v, 'f', 2, 64), ".", ",") }
