package sales

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// MaxCRMImportRows is the most orders one import request may carry; the
// command line streams files of any size.
const MaxCRMImportRows = 1000

// Results of one row of a CRM import.
const (
	ImportCreated  = "created"  // a new order
	ImportExists   = "exists"   // imported before, and the row says the same
	ImportChanged  = "changed"  // imported before; the row differs, is newer and was applied
	ImportConflict = "conflict" // imported before; the row differs but was not applied (older, unmarked, or the order cannot change)
	ImportRefused  = "refused"  // invalid; nothing stored
	ImportFailed   = "failed"   // an unexpected error; nothing stored, the error is logged
)

// crmOrder is one order as the CRM exports it.
type crmOrder struct {
	// Text, or a whole number as older CRM exports send it; read by
	// parseCRMOrderID, so that a bad id hides none of the row's other
	// problems.
	CRMOrderID json.RawMessage `json:"crm_order_id"`
	Customer   Customer        `json:"customer"`
	Items      []crmItem       `json:"items"`
	DueDate    string          `json:"due_date"`
	Version    *int64          `json:"version"`
	UpdatedAt  string          `json:"updated_at"`
}

type crmItem struct {
	SKU  string `json:"sku"`
	Qty  int    `json:"qty"`
	Note string `json:"note"`
	// Options choose a board per decor slot, by decor or board code.
	Options map[string]string `json:"options"`
}

// ImportRow reports what became of one row of a CRM import.
type ImportRow struct {
	// Row is the row's position in the batch or file, from 1.
	Row int `json:"row" validate:"required" minimum:"1" example:"1"`
	// The row's crm_order_id, when it is a valid one.
	CRMOrderID *string             `json:"crm_order_id" extensions:"x-nullable" example:"CRM-10452"`
	Result     string              `json:"result" validate:"required" enums:"created,exists,changed,conflict,refused,failed"`
	OrderID    *int64              `json:"order_id" extensions:"x-nullable"`
	Detail     string              `json:"detail,omitempty" validate:"optional"`
	Errors     []apperr.FieldError `json:"errors,omitempty" validate:"optional"`
	// Err is the unexpected error of a failed row, for the logs; never shown to a client.
	Err error `json:"-" swaggerignore:"true"`
}

// ImportReport is the outcome of a CRM import, row by row.
type ImportReport struct {
	Created  int         `json:"created" validate:"required"`
	Exists   int         `json:"exists" validate:"required"`
	Changed  int         `json:"changed" validate:"required"`
	Conflict int         `json:"conflict" validate:"required"`
	Refused  int         `json:"refused" validate:"required"`
	Failed   int         `json:"failed" validate:"required"`
	Rows     []ImportRow `json:"rows" validate:"required"`
}

// Add counts a row into the report.
func (r *ImportReport) Add(row ImportRow) {
	switch row.Result {
	case ImportCreated:
		r.Created++
	case ImportExists:
		r.Exists++
	case ImportChanged:
		r.Changed++
	case ImportConflict:
		r.Conflict++
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
		row, err := s.ImportCRMOrder(ctx, i+1, raw)
		if err != nil {
			return rep, err
		}
		rep.Add(row)
	}
	return rep, nil
}

// ImportCRMOrder imports one CRM order (row is its position from 1, for the report),
// idempotent by crm_order_id. A row of an order imported before is exists
// when it says the same as the order (or as the row last applied), changed
// when it differs and its version (or, without one, its updated_at) is newer
// than the last applied one (order.changed written), and conflict, with the
// reason in Detail, when it differs but is not applied: older, without
// version or updated_at, or the order cannot take the change (an item in
// production, the order cancelled or shipped). The actor comes from ctx. An
// invalid row is refused, naming every field at fault at once (relative to
// the row: "items[0].sku", the unknown SKUs beside the bad quantities and
// dates). A refused or conflicting row that names its crm_order_id and an
// item is kept in the intake inbox (intake.rejected), for a manager to
// retry or dismiss; a row that fails for any other reason is failed, with the
// error in ImportRow.Err. It returns an error only when the database cannot
// be reached or ctx ends, when the rows after this one could not be
// imported either.
func (s *Service) ImportCRMOrder(ctx context.Context, row int, raw json.RawMessage) (ImportRow, error) {
	res := ImportRow{Row: row}
	in, err := parseCRMOrder(raw)
	res.CRMOrderID = in.CRMOrderID
	if err == nil {
		var o Order
		var out Outcome
		o, out, err = s.receiveOnce(ctx, in, "crm_order_id", ViaCRM, nil)
		if o.ID != 0 {
			res.OrderID = &o.ID
		}
		if err == nil {
			switch out {
			case OutcomeCreated:
				res.Result = ImportCreated
			case OutcomeChanged:
				res.Result = ImportChanged
			case OutcomeStale:
				res.Result = ImportConflict
				res.Detail = fmt.Sprintf("order %d differs from the row, but the row is not newer than the one last applied (%s); nothing was changed", o.ID, marksOf(o))
			default:
				res.Result = ImportExists
			}
			return res, nil
		}
		if apperr.Code(err) == apperr.ECONFLICT {
			// Kept in the intake inbox, for a retry once the order can take it.
			err = s.refuse(ctx, SourceCRM, in, raw, err, nil)
			if e := apperr.As(err); e != nil && e.Code == apperr.ECONFLICT {
				res.Result, res.Detail, res.Errors = ImportConflict, e.Message+"; nothing was changed", e.Fields
				return res, nil
			}
		}
	}
	res.OrderID = nil
	if c := apperr.Code(err); c == apperr.EINVALID {
		// Every reason at once (the unknown SKUs beside the bad fields),
		// and the row kept in the intake inbox.
		err = s.refuse(ctx, SourceCRM, in, raw, err, nil)
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

// marksOf says which version and updated_at were last applied to an order.
func marksOf(o Order) string {
	var parts []string
	if o.SourceVersion != nil {
		parts = append(parts, fmt.Sprintf("version %d", *o.SourceVersion))
	}
	switch {
	case o.SourceUpdatedNS != nil:
		parts = append(parts, "updated_at "+formatMark(time.Unix(0, *o.SourceUpdatedNS)))
	case o.SourceUpdatedAt != nil:
		parts = append(parts, "updated_at "+formatMark(*o.SourceUpdatedAt))
	}
	if len(parts) == 0 {
		return "none was marked"
	}
	return strings.Join(parts, ", ")
}

// parseCRMOrder reads one CRM row into a NewOrder with source crm, naming
// every problem of the row at once: the values of the wrong kind beside the
// fields out of bounds (what could be read is checked as a good row's
// would be). On error the NewOrder still carries what could be read, its
// crm_order_id included when it is a valid one.
func parseCRMOrder(raw json.RawMessage) (NewOrder, error) {
	var co crmOrder
	var fields []apperr.FieldError
	decodeErr := input.DecodeObject(raw, &co)
	if decodeErr != nil {
		e := apperr.As(decodeErr)
		if e == nil || e.Code != apperr.EINVALID {
			id, _ := parseCRMOrderID(crmOrderIDMember(raw))
			return NewOrder{CRMOrderID: id}, decodeErr
		}
		fields = e.Fields
		co = crmOrder{}
		_ = json.Unmarshal(raw, &co) // goes on past values of the wrong kind
	}
	in := NewOrder{Customer: co.Customer, Source: SourceCRM}
	for _, it := range co.Items {
		in.Items = append(in.Items, NewItem{SKU: it.SKU, Qty: it.Qty, Note: it.Note, Options: it.Options})
	}
	id, idErrs := parseCRMOrderID(co.CRMOrderID)
	in.CRMOrderID = id
	more := idErrs
	due, dueErrs := ParseDueDate(co.DueDate)
	in.DueDate = due
	more = append(more, dueErrs...)
	more = append(more, parseMarks(&in, co.Version, co.UpdatedAt)...)
	if err := in.Validate(); err != nil {
		more = append(more, apperr.As(err).Fields...)
	}
	named := len(fields)
	fields = mergeFields(fields, more)
	if decodeErr != nil && len(fields) == named {
		return in, decodeErr // the decoder's own words name the kinds of problem
	}
	if len(fields) > 0 {
		return in, apperr.Invalid(fmt.Sprintf("the CRM order is not valid (%d fields)", len(fields)), fields...)
	}
	return in, nil
}

// mergeFields adds to fields those of more about a field not named yet: a
// value of the wrong kind is named once, by its kind.
func mergeFields(fields, more []apperr.FieldError) []apperr.FieldError {
	named := map[string]bool{}
	for _, f := range fields {
		named[f.Field] = true
	}
	for _, f := range more {
		if !named[f.Field] {
			named[f.Field] = true
			fields = append(fields, f)
		}
	}
	return fields
}

// parseCRMOrderID reads a row's crm_order_id: text of 1 to 64 characters on
// one line (blanks around it dropped), or a whole number, read as its
// decimal text. nil, with the problem, when it is not one.
func parseCRMOrderID(raw json.RawMessage) (*string, []apperr.FieldError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, []apperr.FieldError{apperr.Field("crm_order_id", "is required")}
	}
	var c contracts.CRMOrderID
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, []apperr.FieldError{apperr.Field("crm_order_id", "must be text of 1 to %d characters (or a whole number)", contracts.MaxCRMOrderID)}
	}
	id := strings.TrimSpace(string(c))
	if f := input.RequiredLine("crm_order_id", id, contracts.MaxCRMOrderID); len(f) > 0 {
		return nil, f
	}
	return &id, nil
}

// crmOrderIDMember is the crm_order_id member of a row that cannot be
// decoded, so that the report still names it when it is valid.
func crmOrderIDMember(raw json.RawMessage) json.RawMessage {
	var row struct {
		CRMOrderID json.RawMessage `json:"crm_order_id"`
	}
	if json.Unmarshal(raw, &row) != nil {
		return nil
	}
	return row.CRMOrderID
}
