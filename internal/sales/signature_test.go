package sales_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/sales"
)

// The signed example in docs/sales.md and the webhook's OpenAPI description.
const (
	docSecret    = "demo-shop-secret-at-least-32-bytes"
	docTimestamp = 1795000000
	docBody      = `{"id":"7826d8468b3d","customer":{"name":"Иван Петров","phone":"+7 900 123-45-67"},"items":[{"sku":"SHK-KUPE-1600","qty":1}]}`
	docSignature = "sha256=e84a0b30b0407497df8383fc51e6b1dfae6632bef72f72dfb43524f18da1fb09"
)

func TestSign_DocumentedExample(t *testing.T) {
	t.Parallel()
	require.Equal(t, docSignature, sales.Sign(docSecret, docTimestamp, []byte(docBody)))
	in, err := sales.VerifyShopWebhook(docSecret, strconv.Itoa(docTimestamp), docSignature, []byte(docBody), time.Unix(docTimestamp+60, 0))
	require.NoError(t, err)
	require.Equal(t, "shop-7826d8468b3d", *in.SyncID)
	require.Equal(t, sales.SourceShop, in.Source)
}

func TestVerifySignature(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id": "a1"}`)
	ts := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	sig := func(d time.Duration, b []byte) string { return sales.Sign("s3cret", now.Add(d).Unix(), b) }

	t.Run("OK", func(t *testing.T) {
		require.NoError(t, sales.VerifySignature("s3cret", ts(0), sig(0, body), body, now))
		// Within the tolerance, either way.
		require.NoError(t, sales.VerifySignature("s3cret", ts(-4*time.Minute), sig(-4*time.Minute, body), body, now))
		require.NoError(t, sales.VerifySignature("s3cret", ts(4*time.Minute), sig(4*time.Minute, body), body, now))
	})
	for _, tc := range []struct {
		name, secret, ts, sig string
		body                  []byte
		detail                string
	}{
		{"ErrBadSignature", "s3cret", ts(0), sig(0, []byte(`{"id": "a2"}`)), body, "does not match"},
		{"ErrWrongSecret", "other", ts(0), sig(0, body), body, "does not match"},
		{"ErrSignatureOfOtherTime", "s3cret", ts(time.Second), sig(0, body), body, "does not match"},
		{"ErrReplayAfter5Minutes", "s3cret", ts(-5*time.Minute - time.Second), sig(-5*time.Minute-time.Second, body), body, "timestamp"},
		{"ErrFromTheFuture", "s3cret", ts(6 * time.Minute), sig(6*time.Minute, body), body, "timestamp"},
		{"ErrNoTimestamp", "s3cret", "", sig(0, body), body, "X-Shop-Timestamp"},
		{"ErrTimestampNotUnix", "s3cret", now.Format(time.RFC3339), sig(0, body), body, "Unix seconds"},
		{"ErrNoSignature", "s3cret", ts(0), "", body, "X-Shop-Signature"},
		{"ErrNoPrefix", "s3cret", ts(0), sig(0, body)[len("sha256="):], body, "sha256="},
		{"ErrShortSignature", "s3cret", ts(0), sig(0, body)[:20], body, "sha256="},
		{"ErrNotHex", "s3cret", ts(0), "sha256=" + string(make([]byte, 64)), body, "sha256="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := sales.VerifySignature(tc.secret, tc.ts, tc.sig, tc.body, now)
			require.Equal(t, apperr.EUNAUTHORIZED, apperr.Code(err), "%v", err)
			require.Contains(t, err.Error(), tc.detail)
		})
	}
}

func TestParseShopOrder(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		in, err := sales.ParseShopOrder([]byte(`{"id": 7826, "customer": {"name": " Анна "}, "items": [{"sku": "SHK-KUPE-1600", "qty": 2, "note": "дуб"}], "due_date": "2026-12-20", "extra": true}`))
		require.NoError(t, err)
		require.Equal(t, "shop-7826", *in.SyncID)
		require.Equal(t, "Анна", in.Customer.Name)
		require.Equal(t, []sales.NewItem{{SKU: "SHK-KUPE-1600", Qty: 2, Note: "дуб"}}, in.Items)
		require.Equal(t, "2026-12-20", in.DueDate.String())
	})
	for _, tc := range []struct {
		name, body string
		code       string
		fields     []string
	}{
		{"ErrMalformed", `{"id": "a",`, apperr.EBADREQUEST, nil},
		{"ErrEmpty", ``, apperr.EBADREQUEST, nil},
		{"ErrNotObject", `[1]`, apperr.EBADREQUEST, nil},
		{"ErrTwoObjects", `{} {}`, apperr.EBADREQUEST, nil},
		{"ErrNoID", `{"customer": {"name": "x"}, "items": [{"sku": "A", "qty": 1}]}`, apperr.EINVALID, []string{"id"}},
		{"ErrFractionalID", `{"id": 1.5, "customer": {"name": "x"}, "items": [{"sku": "A", "qty": 1}]}`, apperr.EINVALID, []string{"id"}},
		{"ErrIDWithSpace", `{"id": "a b", "customer": {"name": "x"}, "items": [{"sku": "A", "qty": 1}]}`, apperr.EINVALID, []string{"id"}},
		{"ErrEmptyItems", `{"id": "a", "customer": {"name": "x"}, "items": []}`, apperr.EINVALID, []string{"items"}},
		{"ErrBadQuantities", `{"id": "a", "customer": {"name": "x"}, "items": [{"sku": "A", "qty": 0}, {"sku": "B", "qty": 10001}]}`, apperr.EINVALID, []string{"items[0].qty", "items[1].qty"}},
		{"ErrQtyNotNumber", `{"id": "a", "customer": {"name": "x"}, "items": [{"sku": "A", "qty": "two"}]}`, apperr.EINVALID, []string{"items[0].qty"}},
		{"ErrEverything", `{"id": "", "customer": {}, "items": [{"qty": 1}], "due_date": "tomorrow"}`, apperr.EINVALID, []string{"id", "due_date", "customer.name", "items[0].sku"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sales.ParseShopOrder([]byte(tc.body))
			require.Equal(t, tc.code, apperr.Code(err), "%v", err)
			var got []string
			for _, f := range apperr.As(err).Fields {
				got = append(got, f.Field)
			}
			require.ElementsMatch(t, tc.fields, got)
		})
	}
}

// FuzzShopWebhook feeds the webhook's verification and parsing arbitrary
// bodies, signed or not, at any clock skew. Whatever comes in, it must not
// panic, must accept only a correctly signed, timely, valid order, and must
// refuse everything else with a client error. The seeds run with go test;
// go test -fuzz=FuzzShopWebhook ./internal/sales explores further.
func FuzzShopWebhook(f *testing.F) {
	f.Add([]byte(docBody), true, int64(0))
	f.Add([]byte(docBody), false, int64(0))
	f.Add([]byte(docBody), true, int64(301))
	f.Add([]byte(docBody), true, int64(-301))
	f.Add([]byte(`{"id": 1, "customer": {"name": "x"}, "items": [{"sku": "A", "qty": 1}]}`), true, int64(10))
	f.Add([]byte(`{"id": "a", "customer": {"name": "x"}, "items": []}`), true, int64(0))
	f.Add([]byte(`{"id": "a", "customer": {"name": "x"}, "items": [{"sku": "A", "qty": -1}]}`), true, int64(0))
	f.Add([]byte(`{"id": "a", "items": [{"sku": "A", "qty": "1"}]}`), true, int64(0))
	f.Add([]byte(`{"id": {"nested": 1}}`), true, int64(0))
	f.Add([]byte(`{"id": "a"`), true, int64(0))
	f.Add([]byte(`null`), true, int64(0))
	f.Add([]byte(``), true, int64(0))
	f.Add([]byte("{\"id\": \"\u0000\"}"), true, int64(0))
	// The hardening report's inputs: NUL, invalid UTF-8, dates out of range,
	// text over its length in characters, mistyped and truncated JSON.
	for _, field := range []string{`"id": "`, `"name": "`, `"phone": "`, `"sku": "`} {
		for _, bad := range []string{`\u0000`, "\xff", "\xc0\xaf", `\u001b`} {
			f.Add([]byte(strings.Replace(docBody, field, field+bad, 1)), true, int64(0))
		}
	}
	f.Add([]byte(strings.Replace(docBody, `"qty":1`, `"qty":1,"note":"строка\nвторая\tстрока"`, 1)), true, int64(0))
	f.Add([]byte(strings.Replace(docBody, `}]}`, `}],"due_date":"0000-01-01"}`, 1)), true, int64(0))
	f.Add([]byte(strings.Replace(docBody, `}]}`, `}],"due_date":"9999-12-31"}`, 1)), true, int64(0))
	f.Add([]byte(strings.Replace(docBody, "Иван Петров", strings.Repeat("Ж", 201), 1)), true, int64(0))
	f.Add([]byte(strings.Replace(docBody, "Иван Петров", strings.Repeat("Ж", 101), 1)), true, int64(0))
	f.Add([]byte(strings.Replace(docBody, `"qty":1`, `"qty":"1"`, 1)), true, int64(0))
	f.Add([]byte(docBody[:len(docBody)-5]), true, int64(0))
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, body []byte, sign bool, skew int64) {
		ts := now.Unix() + skew%100_000
		sig := "sha256=" + "00"
		if sign {
			sig = sales.Sign("fuzz-secret", ts, body)
		}
		in, err := sales.VerifyShopWebhook("fuzz-secret", strconv.FormatInt(ts, 10), sig, body, now)
		if err == nil {
			require.True(t, sign, "accepted an unsigned body")
			require.LessOrEqual(t, abs(ts-now.Unix()), int64(300), "accepted a stale timestamp")
			require.NotNil(t, in.SyncID)
			require.Greater(t, len(*in.SyncID), len(sales.SyncIDPrefix))
			require.Equal(t, sales.SourceShop, in.Source)
			require.NoError(t, in.Validate(), "accepted an invalid order")
			return
		}
		code := apperr.Code(err)
		require.Contains(t, []string{apperr.EUNAUTHORIZED, apperr.EBADREQUEST, apperr.EINVALID}, code, "%v", err)
		if !sign || abs(ts-now.Unix()) > 300 {
			require.Equal(t, apperr.EUNAUTHORIZED, code)
		}
		if code == apperr.EINVALID {
			require.NotEmpty(t, apperr.As(err).Fields)
			for _, fe := range apperr.As(err).Fields {
				if strings.Contains(fe.Field, "qty") {
					require.Regexp(t, `^items\[\d+\]\.qty$`, fe.Field, "an item's field keeps its index")
				}
			}
			for _, fe := range apperr.As(err).Fields {
				require.NotEmpty(t, fe.Field)
				require.NotEmpty(t, fe.Message)
			}
		}
	})
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
