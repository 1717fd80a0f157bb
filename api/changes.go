package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/sales"
)

// ChangeOrderRequest is the body of PATCH /api/v1/orders/{id}, a JSON merge
// of what changes: a member left out stays as it is; null (or "") clears an
// optional text or the due date.
type ChangeOrderRequest struct {
	// The customer's contacts that change; the name cannot be cleared.
	Customer *ChangeCustomerRequest `json:"customer" validate:"optional"`
	// The new due date, from 2000-01-01 to 2100-12-31; null or "" clears it.
	DueDate nullable `json:"due_date" validate:"optional" swaggertype:"string" format:"date" extensions:"x-nullable" example:"2026-12-27"`
	// The order's note; null or "" clears it. Tabs and line breaks are allowed.
	Note nullable `json:"note" validate:"optional" swaggertype:"string" maxLength:"2000" extensions:"x-nullable" example:"звонить за час"`
	// Items to change ({"id", "qty"?, "note"?, "options"?}), remove ({"id", "remove": true}) or add ({"sku", "qty", "note"?, "options"?}).
	Items []ChangeItemRequest `json:"items" validate:"optional,max=200"`
}

// ChangeCustomerRequest are the customer's contacts that change.
// Text is counted in characters, one line each, without control characters.
type ChangeCustomerRequest struct {
	Name  nullable `json:"name" validate:"optional" swaggertype:"string" maxLength:"200" example:"Иван Петров"`
	Phone nullable `json:"phone" validate:"optional" swaggertype:"string" maxLength:"50" extensions:"x-nullable" example:"+7 900 765-43-21"`
	Email nullable `json:"email" validate:"optional" swaggertype:"string" maxLength:"254" extensions:"x-nullable" example:"ivan@example.com"`
}

// ChangeItemRequest changes, removes or adds one item of the order.
type ChangeItemRequest struct {
	// The item to change or remove (its id in the order's items); leave it out to add an item.
	ID int64 `json:"id" validate:"optional" minimum:"1" example:"53"`
	// The product of an item to add; an item's SKU does not change.
	SKU string `json:"sku" validate:"optional" maxLength:"64" example:"TMB-PRIK-450"`
	// The new quantity; required for an item to add.
	Qty *int `json:"qty" validate:"optional" minimum:"1" maximum:"10000" example:"2"`
	// The item's note; null or "" clears it.
	Note nullable `json:"note" validate:"optional" swaggertype:"string" maxLength:"2000" extensions:"x-nullable" example:"цвет: венге"`
	// A board per decor slot of the product, by decor or board code, e.g. {"корпус": "Дуб сонома"}, in place of the item's choices
	// ({}: each slot's default); left out or null: unchanged.
	Options map[string]string `json:"options" validate:"optional,max=20" example:"корпус:Дуб сонома"`
	// true removes the item from the order (with its id, nothing else).
	Remove bool `json:"remove" validate:"optional" example:"false"`
}

// ChangeOrderResponse is the order after a change, and whether anything
// changed.
type ChangeOrderResponse struct {
	// false when the request said what the order says already: nothing was written, no event.
	Changed bool        `json:"changed" validate:"required"`
	Order   sales.Order `json:"order" validate:"required"`
}

// nullable is a JSON member that may be absent (Set false), null or a
// string (Set true; null is "").
type nullable struct {
	Set   bool
	Null  bool
	Value string
}

func (n *nullable) UnmarshalJSON(b []byte) error {
	n.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		n.Null = true
		return nil
	}
	if err := json.Unmarshal(b, &n.Value); err != nil {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeOf("")}
	}
	return nil
}

// jsonKind names the kind of a JSON value as encoding/json's errors do.
func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "value"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	default:
		return "number"
	}
}

// ptr is the value of a member that is set, nil when it is absent.
func (n nullable) ptr() *string {
	if !n.Set {
		return nil
	}
	v := n.Value
	return &v
}

// toEdit reads the request into a sales.Edit: EINVALID naming a due date
// that is not one, or a customer name sent as null.
func (r ChangeOrderRequest) toEdit() (sales.Edit, error) {
	var e sales.Edit
	var fields []apperr.FieldError
	if c := r.Customer; c != nil {
		e.CustomerName, e.CustomerPhone, e.CustomerEmail = c.Name.ptr(), c.Phone.ptr(), c.Email.ptr()
		if c.Name.Null {
			fields = append(fields, apperr.Field("customer.name", "is required; it cannot be cleared"))
			e.CustomerName = nil
		}
	}
	if r.DueDate.Set {
		due, f := sales.ParseDueDate(r.DueDate.Value)
		fields = append(fields, f...)
		e.DueDate = &due
	}
	e.Note = r.Note.ptr()
	for _, it := range r.Items {
		e.Items = append(e.Items, sales.ItemEdit{ID: it.ID, SKU: it.SKU, Qty: it.Qty, Note: it.Note.ptr(), Remove: it.Remove, Options: it.Options})
	}
	if len(fields) > 0 {
		if err := e.Validate(); err != nil {
			fields = append(fields, apperr.As(err).Fields...)
		}
		return e, apperr.Invalid("the change is not valid", fields...)
	}
	return e, nil
}

// changeOrder godoc
//
//	@Summary		Change an order (manager)
//	@ID				changeOrder
//	@Description	A JSON merge of what changes: a member left out stays as it is; `null` (or `""`) clears an optional text or the due date
//	@Description	(`{"due_date": null}`); the customer's name cannot be cleared. Items: `{"id", "qty"?, "note"?, "options"?}` changes an item,
//	@Description	`{"id", "remove": true}` removes it, `{"sku", "qty", "note"?, "options"?}` adds one; an item's SKU does not change (remove it and add another).
//	@Description	An item's `options` (a board per decor slot, by decor or board code: `{"корпус": "Дуб сонома"}`) replace its choices as a whole
//	@Description	(`{}`: each slot's default); they are compared by the boards' codes, and a choice its product does not have is 422 naming
//	@Description	`items[i].options.<slot>`.
//	@Description
//	@Description	Contacts, the due date and the note change while the order is not cancelled or shipped. Items change or are removed
//	@Description	while production has not taken them up (item status new), and are added while the order is received or in production;
//	@Description	otherwise 409, naming the items in production. An order keeps at least one item (422: cancel it instead).
//	@Description	Validation as for POST /api/v1/orders: 422 naming the fields at fault (an unknown SKU, an item id not of the order).
//	@Description
//	@Description	A change writes order.changed (what changed, before and after, per field and per item) and, when the order's state follows
//	@Description	(ready once its last item not made is removed), order.status_changed; the plan's backlog follows. A request that alters nothing
//	@Description	answers `"changed": false` and writes nothing. An item launched by the planner just before sales heard of it can still change
//	@Description	here: the plan then flags its production order for the planner (needs_attention), never making the old quantity silently.
//	@Tags			sales
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int					true	"order id"	minimum(1) example(1)
//	@Param			body	body		ChangeOrderRequest	true	"what changes"
//	@Success		200		{object}	ChangeOrderResponse	"the order after the change; changed false when nothing differed"
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"the order cannot change any more, or items it touches are in production (named)"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/orders/{id} [patch]
func (s *server) changeOrder(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req ChangeOrderRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	e, err := req.toEdit()
	if err != nil {
		return err
	}
	o, changed, err := s.Sales.ChangeOrder(c.Request().Context(), id, e)
	if err != nil {
		return err
	}
	if err := s.Sales.WithBoards(c.Request().Context(), &o); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ChangeOrderResponse{Changed: changed, Order: o})
}
