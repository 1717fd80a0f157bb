package sales

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// Headers of the shop's signed requests, in both directions: the webhook the
// shop calls and the callback tsekh sends back.
const (
	HeaderShopTimestamp = "X-Shop-Timestamp"
	HeaderShopSignature = "X-Shop-Signature"
)

// SignatureTolerance is how far a signed request's timestamp may be from the
// receiver's clock; older captured requests cannot be replayed.
const SignatureTolerance = 5 * time.Minute

// Sign returns the X-Shop-Signature value of a body sent at the Unix time ts:
// "sha256=" + hex HMAC-SHA256(secret, ts + "." + body).
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// VerifySignature checks the headers of a signed request against its raw
// body: the signature must be the HMAC of timestamp and body (compared in
// constant time) and the timestamp within SignatureTolerance of now. It
// returns EUNAUTHORIZED saying which check failed, never why a signature
// differs.
func VerifySignature(secret, timestamp, signature string, body []byte, now time.Time) error {
	if timestamp == "" {
		return apperr.Errorf(apperr.EUNAUTHORIZED, "the %s header is missing", HeaderShopTimestamp)
	}
	ts, err := strconv.ParseInt(strings.TrimSpace(timestamp), 10, 64)
	if err != nil {
		return apperr.Errorf(apperr.EUNAUTHORIZED, "the %s header must be Unix seconds", HeaderShopTimestamp)
	}
	if signature == "" {
		return apperr.Errorf(apperr.EUNAUTHORIZED, "the %s header is missing", HeaderShopSignature)
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(signature), "sha256=")
	got, err := hex.DecodeString(hexSig)
	if !ok || err != nil || len(got) != sha256.Size {
		return apperr.Errorf(apperr.EUNAUTHORIZED, "the %s header must be sha256=<64 hex digits>", HeaderShopSignature)
	}
	want, _ := hex.DecodeString(strings.TrimPrefix(Sign(secret, ts, body), "sha256="))
	if !hmac.Equal(got, want) {
		return apperr.Errorf(apperr.EUNAUTHORIZED, "the signature does not match the body and timestamp")
	}
	// Checked after the signature, so that a forger learns nothing about the
	// clock; a replayed capture fails here.
	if d := now.Sub(time.Unix(ts, 0)); d > SignatureTolerance || d < -SignatureTolerance {
		return apperr.Errorf(apperr.EUNAUTHORIZED, "the timestamp is more than %s away from the server's clock", SignatureTolerance)
	}
	return nil
}
