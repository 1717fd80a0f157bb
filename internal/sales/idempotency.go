package sales

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// IdempotencyStale is how long a request may hold its Idempotency-Key in
// flight; after that (the process died with it) a retry may take the key
// over. It is longer than any request may take.
const IdempotencyStale = 2 * time.Minute

// idempotencyExpiryBatch is how many keys one statement of
// ExpireIdempotencyKeys deletes.
const idempotencyExpiryBatch = 1000

// IdempotencyKey names a request by its caller and the caller's key, with a
// hash of the request body (see RequestHash).
type IdempotencyKey struct {
	UserID      int64
	Key         string
	RequestHash string
}

// StoredResponse is the response to a request made with an Idempotency-Key:
// stored with the order and sent again, byte for byte, for every repeat.
type StoredResponse struct {
	Status   int
	Body     []byte
	Replayed bool // a repeat: the response was stored by an earlier request
}

// idempotencyRow is a row of sales_idempotency_keys.
type idempotencyRow struct {
	RequestHash    string
	State          string
	ResponseStatus *int
	ResponseBody   *string
	Stale          int
}

// RequestHash returns the hash by which repeats of a JSON request body are
// recognised: SHA-256 of its canonical form, so that spacing and the order of
// an object's keys do not matter.
func RequestHash(body []byte) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	canonical := body
	if err := dec.Decode(&v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			canonical = b
		}
	}
	h := sha256.Sum256(canonical)
	return hex.EncodeToString(h[:])
}

// CreateOrderOnce is CreateOrder under an Idempotency-Key. The request
// reserves its key inside the order's own transaction, with the order and the
// stored response (201 and the order): the key is taken only when the order
// is, and a request that fails for whatever cause (an error, its connection
// cut mid-transaction, the process killed) leaves no key behind, so a retry
// goes ahead at once. A request with a key another one holds in flight waits
// on the key's unique index until that one ends: then it gets the stored
// response, or, when the first failed, takes the key itself. A repeat with
// the same body gets the stored response; with another body, EUNPROCESSABLE.
// Keys are scoped to the user and kept until ExpireIdempotencyKeys removes
// them (IDEMPOTENCY_KEY_TTL).
func (s *Service) CreateOrderOnce(ctx context.Context, k IdempotencyKey, in NewOrder) (StoredResponse, error) {
	var res StoredResponse
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		res = StoredResponse{}
		reserved, err := reserveKey(ctx, tx, k)
		if err != nil {
			return err
		}
		if !reserved {
			var takeOver bool
			if res, takeOver, err = existingKey(ctx, tx, k); err != nil || !takeOver {
				return err
			}
		}
		o, err := createOrder(ctx, tx, in)
		if err != nil {
			return err
		}
		body, err := json.Marshal(o)
		if err != nil {
			return err
		}
		res = StoredResponse{Status: http.StatusCreated, Body: body}
		stored, err := storeResponse(ctx, tx, k, res, o.ID)
		if err == nil && !stored {
			// The key expired while the request was in flight: without it a
			// repeat would create the order again, so this one creates none.
			return apperr.Conflict("the Idempotency-Key expired while the request was in progress; retry it")
		}
		return err
	})
	if err != nil {
		return StoredResponse{}, err
	}
	return res, nil
}

// existingKey answers, inside tx, a request whose key is taken: the stored
// response, a refusal, or takeOver when the key is held in flight by a
// committed reservation older than IdempotencyStale (left by a version of
// tsekh that reserved keys in a statement of their own) and this request now
// holds it.
func existingKey(ctx context.Context, tx *gorm.DB, k IdempotencyKey) (res StoredResponse, takeOver bool, err error) {
	row, err := readKey(ctx, tx, k)
	switch {
	case err != nil:
		return res, false, err
	case row.State == "":
		// Expired between the insert and this read.
		return res, false, apperr.Conflict("a request with this Idempotency-Key has just ended; retry it")
	case row.RequestHash != k.RequestHash:
		return res, false, apperr.Errorf(apperr.EUNPROCESSABLE, "this Idempotency-Key was used with another request body; use a new key for a new request")
	case row.State == "done" && row.ResponseStatus != nil && row.ResponseBody != nil:
		return StoredResponse{Status: *row.ResponseStatus, Body: []byte(*row.ResponseBody), Replayed: true}, false, nil
	case row.Stale == 1:
		renewed, err := renewStaleKey(ctx, tx, k)
		if err != nil || renewed {
			return res, renewed, err
		}
	}
	return res, false, apperr.Conflict("a request with this Idempotency-Key is still in progress; retry it later")
}

// ExpireIdempotencyKeys deletes the Idempotency-Keys created more than ttl
// ago, oldest first, in statements of 1,000 rows, so that no statement holds
// many rows for long; it stops between two of them when ctx ends. A request
// repeated after its key expired is a new request. It returns how many keys
// it deleted.
func (s *Service) ExpireIdempotencyKeys(ctx context.Context, ttl time.Duration) (int64, error) {
	return s.expireIdempotencyKeys(ctx, ttl, idempotencyExpiryBatch)
}

func (s *Service) expireIdempotencyKeys(ctx context.Context, ttl time.Duration, batch int) (int64, error) {
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := expireKeys(ctx, s.db, ttl, batch)
		total += n
		if err != nil || n < int64(batch) {
			return total, err
		}
	}
}
