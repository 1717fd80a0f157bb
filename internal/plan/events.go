package plan

import (
	"context"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
)

// AggregateType is the table production-order events are about.
const AggregateType = "plan_prod_orders"

// RegisterEvents declares the plan module's event types (internal/contracts,
// plan.go) and its subscribers: to the sales module's orders, to purchase
// orders (materials) and to the work centres' hours (capacity).
func (s *Service) RegisterEvents(r *events.Registrar) {
	r.Declare(contracts.ProdOrderLaunched, contracts.ProdOrderCancelled, contracts.ProdOrderItemsReleased, contracts.ProdOrderNeedsAttention,
		contracts.ProdOrderRescheduled, contracts.ProdOrderPriorityChanged, contracts.PlanReplanned)
	r.Subscribe(events.Subscriber{
		Name:        "plan.backlog",
		Types:       events.Names(contracts.OrderReceived, contracts.OrderChanged),
		Description: "Adds the items of every received sales order to the planning backlog and follows its changes (quantities, items added or removed, the due date); flags for the planner a production order whose items changed after they were launched.",
		HandleTx:    s.followBacklog,
	}, events.Subscriber{
		Name:        "plan.backlog-cancel",
		Types:       events.Names(contracts.OrderCancelled),
		Description: "Takes the items of a cancelled sales order out of the planning backlog, for good, and out of the production orders on which no work has started (cancelling one left empty); flags for the planner those on which work has started.",
		HandleTx:    s.orderCancelled,
	}, events.Subscriber{
		Name:        "plan.materials",
		Types:       events.Names(contracts.PurchaseOrderOrdered, contracts.PurchaseOrderReceived, contracts.PurchaseOrderCancelled),
		Description: "Re-plans the unfinished production orders when a purchase order is sent, received or cancelled, so that the steps using materials up wait for them (held_by) and the ETAs follow the deliveries (prod_order.rescheduled, plan.replanned with reason materials).",
		HandleTx:    s.materialsMoved,
	}, events.Subscriber{
		Name:        "plan.capacity",
		Types:       events.Names(contracts.WorkCenterUpdated),
		Description: "Re-plans when a work centre's capacity, shift or calendar changed: the first unfinished production order in the plan with work left on it and every order behind it, so that their slots and ETAs follow the new hours (prod_order.rescheduled, plan.replanned with reason capacity).",
		HandleTx:    s.capacityChanged,
	})
}

// materialsMoved re-plans the whole plan, journalled as plan.replanned
// with reason materials: a purchase order sent, received or cancelled
// changes when materials are available to the live orders.
func (s *Service) materialsMoved(ctx context.Context, tx *gorm.DB, _ events.Event) error {
	return s.replanFollowing(ctx, tx, contracts.ReplanMaterials, "1 = 1")
}
