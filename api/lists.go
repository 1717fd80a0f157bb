package api

import (
	"github.com/tsekh/tsekh/internal/auth"
	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/sales"
)

// Named list types, so that the OpenAPI document has one schema per list.
type (
	// ProductList is a page of products.
	ProductList = List[catalog.Product]
	// OrderList is a page of sales orders.
	OrderList = List[sales.Order]
	// BacklogList is a page of the planning backlog.
	BacklogList = List[plan.BacklogItem]
	// EventList is a page of the journal.
	EventList = List[events.Entry]
	// EventTypeList is the catalogue of event types.
	EventTypeList = List[events.Type]
	// UserList is a page of users.
	UserList = List[auth.User]
	// SubscriberList is every subscriber.
	SubscriberList = List[events.SubscriberStats]
)
