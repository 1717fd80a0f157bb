package sales

import (
	"context"
	"time"
)

// ExpireIdempotencyKeysInBatches is ExpireIdempotencyKeys with batches of
// the size given, for tests.
func (s *Service) ExpireIdempotencyKeysInBatches(ctx context.Context, ttl time.Duration, batch int) (int64, error) {
	return s.expireIdempotencyKeys(ctx, ttl, batch)
}
