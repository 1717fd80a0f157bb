package contractstest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/contracts/contractstest"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

func TestValidate_Strictly(t *testing.T) {
	t.Parallel()
	launched := contracts.ProdOrderLaunched.Name()
	ok := `{"prod_order_id": 1, "items": [3], "route": "Корпус ЛДСП (типовой)", "parts_count": 12, "ops_count": 40, "eta": "2026-11-20"}`
	declared, err := contractstest.Validate(launched, []byte(ok))
	require.True(t, declared)
	require.NoError(t, err)
	for name, payload := range map[string]string{
		"missing field":   `{"prod_order_id": 1, "items": [3], "route": "R", "parts_count": 12, "ops_count": 40}`,
		"undeclared one":  `{"prod_order_id": 1, "items": [3], "route": "R", "parts_count": 12, "ops_count": 40, "eta": "2026-11-20", "priority": 1}`,
		"not a date":      `{"prod_order_id": 1, "items": [3], "route": "R", "parts_count": 12, "ops_count": 40, "eta": "2026-11-20T00:00:00Z"}`,
		"id as a string":  `{"prod_order_id": "1", "items": [3], "route": "R", "parts_count": 12, "ops_count": 40, "eta": "2026-11-20"}`,
		"null for a list": `{"prod_order_id": 1, "items": null, "route": "R", "parts_count": 12, "ops_count": 40, "eta": "2026-11-20"}`,
		"not JSON":        `{"prod_order_id": `,
	} {
		_, err := contractstest.Validate(launched, []byte(payload))
		require.Error(t, err, name)
	}
	_, err = contractstest.Validate(contracts.OrderReceived.Name(),
		[]byte(`{"order_id": 1, "lines": 1, "source": "shop", "items": [{"item_id": 1, "sku": "X", "qty": 1, "price": 10}]}`))
	require.Error(t, err, "nested objects are strict too")
	declared, err = contractstest.Validate("thing.created", []byte(`{"anything": true}`))
	require.False(t, declared, "tests' own types are not checked")
	require.NoError(t, err)
}

func TestStrict_KeepsThePublishedSchemaOpen(t *testing.T) {
	t.Parallel()
	published := contracts.OrderReceived.Describe().Schema
	strict := contractstest.Strict(published)
	require.Equal(t, false, strict["additionalProperties"])
	item := strict["properties"].(map[string]any)["items"].(map[string]any)["items"].(map[string]any)
	require.Equal(t, false, item["additionalProperties"])
	require.NotContains(t, published, "additionalProperties", "the published schema is left as it is")
}

func TestCheckJournal_FindsDriftingEvents(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
			if err := events.Add(ctx, tx, contracts.OrderCancelled.New(1, contracts.OrderCancelledPayload{OrderID: 1, Items: []int64{2}})); err != nil {
				return err
			}
			// A writer that bypasses the contract and forgets a field.
			if err := events.Add(ctx, tx, events.New{Type: contracts.OrderCancelled.Name(), AggregateType: "sales_orders", AggregateID: 2,
				Payload: map[string]any{"order_id": 2}}); err != nil {
				return err
			}
			return events.Add(ctx, tx, events.New{Type: "thing.created", AggregateType: "things", AggregateID: 1, Payload: map[string]any{"x": 1}})
		}))
		err := contractstest.CheckJournal(ctx, db)
		require.ErrorContains(t, err, "(order.cancelled)")
		require.ErrorContains(t, err, "missing property 'items'")
		require.NotContains(t, err.Error(), "thing.created")
		// Leave the database sound: dbtest checks it again when the test ends.
		require.NoError(t, db.Exec("DELETE FROM events WHERE aggregate_id = 2 AND type = ?", contracts.OrderCancelled.Name()).Error)
		require.NoError(t, contractstest.CheckJournal(ctx, db))
	})
}
