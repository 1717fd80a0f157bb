package sales

import (
	"context"
	"encoding/json"
	"fmt"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// MaxCRMImportRows is the most orders one import request may carry; the
// command line streams files of any size.
const MaxCRMImportRows = 1000

// Results of one row of a CRM import.
const (
	ImportCreated = "created" // a new order
	ImportExists  = "exists"  // an order with this crm_order_id was imported before
	ImportRefused = "refused" // invalid; nothing stored
)

// crmOrder is one order as the CRM exports it.
type crmOrder struct {
	CRMOrderID *int64     `json:"crm_order_id"`
	Customer   Customer   `json:"customer"`
	Items      []shopItem `json:"items"`
	DueDate    string     `json:"due_date"`
}

// ImportRow reports what became of one row of a CRM import.
type ImportRow struct {
	// Row is the row's position in the batch or file, from 0.
	Row        int                 `json:"row" validate:"required"`
	CRMOrderID *int64              `json:"crm_order_id" extensions:"x-nullable"`
	Result     string              `json:"result" validate:"required" enums:"created,exists,refused"`
	OrderID    *int64              `json:"order_id" extensions:"x-nullable"`
	Detail     string              `json:"detail,omitempty" validate:"optional"`
	Errors     []apperr.FieldError `json:"errors,omitempty" validate:"optional"`
}

// ImportReport is the outcome of a CRM import, row by row.
type ImportReport struct {
	Created int         `json:"created" validate:"required"`
	Exists  int         `json:"exists" validate:"required"`
	Refused int         `json:"refused" validate:"required"`
	Rows    []ImportRow `json:"rows" validate:"required"`
}

// Add counts a row into the report.
func (r *ImportReport) Add(row ImportRow) {
	switch row.Result {
	case ImportCreated:
		r.Created++
	case ImportExists:
		r.Exists++
	default:
		r.Refused++
	}
	r.Rows = append(r.Rows, row)
}

// ImportCRMOrders imports a batch of CRM orders, each in its own transaction,
// so that a bad row spoils no other. Invalid rows are reported as refused;
// only a failure of the database stops the import (the rows before it stay
// imported, and running it again is harmless).
func (s *Service) ImportCRMOrders(ctx context.Context, rows []json.RawMessage) (ImportReport, error) {
	rep := ImportReport{Rows: make([]ImportRow, 0, len(rows))}
	for i, raw := range rows {
		row, err := s.ImportCRMOrder(ctx, i, raw)
		if err != nil {
			return rep, err
		}
		rep.Add(row)
	}
	return rep, nil
}

// ImportCRMOrder imports one CRM order (row is its position, for the report),
// idempotent by crm_order_id: an order imported before is reported as
// exists, whatever the row says now. The actor comes from ctx. It returns an
// error only when the database fails; an invalid row is a refused ImportRow
// naming its fields (relative to the row: "items[0].sku").
func (s *Service) ImportCRMOrder(ctx context.Context, row int, raw json.RawMessage) (ImportRow, error) {
	res := ImportRow{Row: row}
	in, err := parseCRMOrder(raw)
	if in.CRMOrderID != nil {
		res.CRMOrderID = in.CRMOrderID
	}
	if err == nil {
		var o Order
		var created bool
		err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			o, created, err = createOrderOnce(ctx, tx, in, "crm_order_id")
			return err
		})
		if err == nil {
			res.OrderID, res.Result = &o.ID, ImportExists
			if created {
				res.Result = ImportCreated
			}
			return res, nil
		}
	}
	e := apperr.As(err)
	if e == nil || e.Code == apperr.EINTERNAL || e.Code == apperr.EUNAVAILABLE {
		return res, err
	}
	res.Result, res.Detail, res.Errors = ImportRefused, e.Message, e.Fields
	return res, nil
}

// parseCRMOrder reads one CRM row into a NewOrder with source crm.
func parseCRMOrder(raw json.RawMessage) (NewOrder, error) {
	var co crmOrder
	if err := decodeObject(raw, &co); err != nil {
		// A field of the wrong type: the row's number, if it was read, still names it in the report.
		return NewOrder{CRMOrderID: co.CRMOrderID}, err
	}
	in := NewOrder{Customer: co.Customer, Source: SourceCRM, CRMOrderID: co.CRMOrderID}
	for _, it := range co.Items {
		in.Items = append(in.Items, NewItem(it))
	}
	var fields []apperr.FieldError
	if co.CRMOrderID == nil {
		fields = append(fields, apperr.Field("crm_order_id", "is required"))
	} else if *co.CRMOrderID <= 0 {
		fields = append(fields, apperr.Field("crm_order_id", "must be a positive whole number"))
	}
	due, dueErrs := ParseDueDate(co.DueDate)
	in.DueDate = due
	fields = append(fields, dueErrs...)
	if err := in.Validate(); err != nil {
		fields = append(fields, apperr.As(err).Fields...)
	}
	if len(fields) > 0 {
		return in, apperr.Invalid(fmt.Sprintf("the CRM order is not valid (%d fields)", len(fields)), fields...)
	}
	return in, nil
}
