package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/purchasing"
)

// stockEpsilon is below any quantity stock tells apart.
const stockEpsilon = 1e-6

// ProposalList is what to buy, per supplier.
type ProposalList struct {
	Items []purchasing.Proposal `json:"items"`
}

// purchaseProposals composes the proposals: the shortages (backlog and
// reorder points), the day each material is first needed (the planned
// start of the step using it up, of the live production orders that still
// need it) and today, as the plan counts days.
func (s *server) purchaseProposals(ctx context.Context) ([]purchasing.Proposal, error) {
	short, err := s.Stock.Shortages(ctx, s.Plan.BacklogItems())
	if err != nil {
		return nil, err
	}
	starts, err := s.Plan.ConsumingStarts(ctx)
	if err != nil {
		return nil, err
	}
	orders := make([]int64, 0, len(starts))
	for id := range starts {
		orders = append(orders, id)
	}
	needs, err := s.Stock.NeedsOf(ctx, s.DB, orders)
	if err != nil {
		return nil, err
	}
	kind := map[string]string{}
	for _, m := range short {
		kind[m.Code] = m.Kind
	}
	needed := map[string]purchasing.NeededOn{}
	for order, ns := range needs {
		for _, n := range ns {
			k, ok := kind[n.Code]
			if !ok || n.Needed <= stockEpsilon {
				continue
			}
			st, ok := starts[order][k]
			if have := needed[n.Code]; ok && (have.Day.IsZero() || st.Day.Before(have.Day)) {
				needed[n.Code] = purchasing.NeededOn{Day: st.Day, Weekdays: st.Weekdays, Holidays: st.Holidays}
			}
		}
	}
	today, err := s.Plan.Today(ctx)
	if err != nil {
		return nil, err
	}
	return s.Purchasing.Proposals(ctx, short, needed, today)
}

// listPurchaseProposals godoc
//
//	@Summary	What to buy, per supplier, and by when
//	@ID			listPurchaseProposals
//	@Description	From the shortages (what the backlog needs beyond what is available, brought up to the reorder points: getShortages' to_buy), less what open purchase orders (draft, ordered, partially received) still bring (on_order): per material, the supplier with the shortest lead time for it (then the lowest price), the quantity brought up to its min_qty and rounded up to whole packs (pack_qty), and the dates: needed_on, the planned start of the first live production order still needing it at the step that uses it up (cutting for boards, edge banding for bands, assembly for fittings); order_by, needed_on less the supplier's lead time in working days (of that step's work centre); expected_on, needed_on, or today plus the lead time when order_by has passed (late) or no live order needs it yet (needed_on null, order_by today). Materials no supplier sells come last, without supplier_id.
//	@Tags		purchasing
//	@Produce	json
//	@Security	BearerAuth
//	@Success	200	{object}	ProposalList
//	@Failure	401	{object}	Problem
//	@Router		/api/v1/purchase-proposals [get]
func (s *server) listPurchaseProposals(c echo.Context) error {
	ps, err := s.purchaseProposals(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ProposalList{Items: ps})
}

// DraftProposalsRequest is the body of POST /api/v1/purchase-proposals/orders.
type DraftProposalsRequest struct {
	// Only this supplier's proposal; absent: every supplier's.
	SupplierID int64 `json:"supplier_id" validate:"optional" minimum:"1" example:"1"`
}

// DraftedOrders are the purchase orders drafted from the proposals.
type DraftedOrders struct {
	Items []purchasing.Order `json:"items"`
}

// draftPurchaseProposals godoc
//
//	@Summary		Turn the proposals into draft purchase orders (admin, planner, buyer)
//	@ID			draftPurchaseProposals
//	@Description	Drafts a purchase order per supplier of listPurchaseProposals (of the one supplier when supplier_id is given), its lines the proposal's quantities and prices, each expected on the line's expected_on, and writes purchase_order.created for each, in one transaction; the materials no supplier sells are left out. Nothing to propose drafts nothing (an empty list); 422 naming supplier_id when the proposals have nothing for that supplier.
//	@Tags			purchasing
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			body	body		DraftProposalsRequest	true	"which supplier's proposal"
//	@Success		201		{object}	DraftedOrders
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"invalid fields, named in errors"
//	@Router			/api/v1/purchase-proposals/orders [post]
func (s *server) draftPurchaseProposals(c echo.Context) error {
	var req DraftProposalsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	ps, err := s.purchaseProposals(ctx)
	if err != nil {
		return err
	}
	os, err := s.Purchasing.DraftProposals(ctx, ps, req.SupplierID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, DraftedOrders{Items: os})
}
