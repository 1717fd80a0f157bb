package sales

import (
	"context"
	"encoding/json"
	"fmt"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// MaxCRMImportRows is the most orders one import request may carry; the
// command line streams files of any size.
const MaxCRMImportRows = 1000

// Results of one row of a CRM import.
const (
	ImportCreated = "created" // a new order
	ImportExists  = "exists"  // an order with this crm_order_id was imported before
	ImportRefused = "refused" // invalid; nothing stored
	ImportFailed  = "failed"  // an unexpected error; nothing stored, the error is logged
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
	Row int `json:"row" validate:"required"`
	// The row's crm_order_id, when it is a positive whole number.
	CRMOrderID *int64              `json:"crm_order_id" extensions:"x-nullable"`
	Result     string              `json:"result" validate:"required" enums:"created,exists,refused,failed"`
	OrderID    *int64              `json:"order_id" extensions:"x-nullable"`
	Detail     string              `json:"detail,omitempty" validate:"optional"`
	Errors     []apperr.FieldError `json:"errors,omitempty" validate:"optional"`
	// Err is the unexpected error of a failed row, for the logs; never shown to a client.
	Err error `json:"-" swaggerignore:"true"`
}

// ImportReport is the outcome of a CRM import, row by row.
type ImportReport struct {
	Created int         `json:"created" validate:"required"`
	Exists  int         `json:"exists" validate:"required"`
	Refused int         `json:"refused" validate:"required"`
	Failed  int         `json:"failed" validate:"required"`
	Rows    []ImportRow `json:"rows" validate:"required"`
}

// Add counts a row into the report.
func (r *ImportReport) Add(row ImportRow) {
	switch row.Result {
	case ImportCreated:
		r.Created++
	case ImportExists:
		r.Exists++
	case ImportFailed:
		r.Failed++
	default:
		r.Refused++
	}
	r.Rows = append(r.Rows, row)
}

// ImportCRMOrders imports a batch of CRM orders, each in its own transaction,
// so that a bad row spoils no other: whatever goes wrong with a row is
// reported on that row, and the rows after it are imported. Only an
// unreachable database (EUNAVAILABLE) or the end of ctx stops the import; the
// rows before it stay imported, and running it again is harmless.
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
// exists, whatever the row says now. The actor comes from ctx. An invalid row
// is refused, naming its fields (relative to the row: "items[0].sku"); a row
// that fails for any other reason is failed, with the error in ImportRow.Err.
// It returns an error only when the database cannot be reached or ctx ends,
// when the rows after this one could not be imported either.
func (s *Service) ImportCRMOrder(ctx context.Context, row int, raw json.RawMessage) (ImportRow, error) {
	res := ImportRow{Row: row}
	in, err := parseCRMOrder(raw)
	if in.CRMOrderID != nil && *in.CRMOrderID > 0 {
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
	switch e := apperr.As(err); {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case apperr.Code(err) == apperr.EUNAVAILABLE || (e == nil && database.IsUnavailable(err)):
		return res, err
	case e == nil || e.Code == apperr.EINTERNAL:
		res.Result, res.Err = ImportFailed, err
		res.Detail = "the row could not be stored because of an unexpected error, which has been logged; nothing of it was stored"
	default:
		res.Result, res.Detail, res.Errors = ImportRefused, e.Message, e.Fields
	}
	return res, nil
}

// parseCRMOrder reads one CRM row into a NewOrder with source crm. On error
// the NewOrder still carries the row's crm_order_id when it could be read.
func parseCRMOrder(raw json.RawMessage) (NewOrder, error) {
	var co crmOrder
	if err := input.DecodeObject(raw, &co); err != nil {
		return NewOrder{CRMOrderID: crmOrderIDOf(raw)}, err
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

// crmOrderIDOf reads the crm_order_id of a row that cannot be decoded, so
// that the report still names it: a positive whole number, or nil (a
// mistyped one is not its number, whatever a decoder made of it).
func crmOrderIDOf(raw json.RawMessage) *int64 {
	var row struct {
		CRMOrderID json.RawMessage `json:"crm_order_id"`
	}
	var id int64
	if json.Unmarshal(raw, &row) != nil || json.Unmarshal(row.CRMOrderID, &id) != nil || id <= 0 {
		return nil
	}
	return &id
}
