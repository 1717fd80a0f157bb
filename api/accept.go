package api

import (
	"mime"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// mediaKey holds, in the request's context, the media type negotiate chose.
const mediaKey = "tsekh.media"

// mediaOf is the media type the answer is to be in: the one the Accept
// header prefers among what the operation produces (negotiate), JSON when
// the operation is not described.
func mediaOf(c echo.Context) string {
	if m, ok := c.Get(mediaKey).(string); ok {
		return m
	}
	m, _ := preferred(c.Request().Header.Values(echo.HeaderAccept), []string{echo.MIMEApplicationJSON, MIMETextCSV, MIMEImageSVG})
	return m
}

// negotiate picks, for every operation the OpenAPI document describes, the
// media type of the answer among those it produces ("produces"), by the
// Accept header's q-values (RFC 9110 §12.5.1): the most specific range that
// matches a type gives its weight, q=0 refuses it, the highest weight wins
// and a tie goes to the order the operation lists them in (JSON first). An
// Accept that allows none of them is a 406 problem+json (problems are always
// JSON: RFC 9110 lets a server answer in a type the client did not ask for
// rather than not at all). No Accept header takes the first.
func (d contract) negotiate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		offers := d.produces[operationKey(c)]
		if len(offers) == 0 {
			return next(c)
		}
		m, ok := preferred(c.Request().Header.Values(echo.HeaderAccept), offers)
		if !ok {
			return apperr.Errorf(apperr.ENOTACCEPTABLE, "this endpoint answers in %s only; the Accept header %q allows none of them",
				strings.Join(offers, ", "), printableHeader(strings.Join(c.Request().Header.Values(echo.HeaderAccept), ", ")))
		}
		c.Set(mediaKey, m)
		return next(c)
	}
}

// acceptRange is one media range of an Accept header.
type acceptRange struct {
	typ, sub string
	q        float64
}

// parseAccept reads the media ranges of Accept header values; a range that
// cannot be read, or whose q is not a weight from 0 to 1, is left out.
func parseAccept(values []string) []acceptRange {
	var out []acceptRange
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			mt, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			typ, sub, ok := strings.Cut(mt, "/")
			if !ok || typ == "" || sub == "" || (typ == "*" && sub != "*") {
				continue
			}
			q := 1.0
			if qs, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(qs, 64); err != nil || q < 0 || q > 1 || len(qs) > 5 {
					continue
				}
			}
			out = append(out, acceptRange{typ: typ, sub: sub, q: q})
		}
	}
	return out
}

// weight is the q of the most specific range that matches the media type
// (exact, then type/*, then */*); -1 when none does.
func weight(ranges []acceptRange, media string) float64 {
	typ, sub, _ := strings.Cut(media, "/")
	best, q := -1, -1.0
	for _, r := range ranges {
		spec := -1
		switch {
		case r.typ == typ && r.sub == sub:
			spec = 2
		case r.typ == typ && r.sub == "*":
			spec = 1
		case r.typ == "*" && r.sub == "*":
			spec = 0
		}
		if spec > best || (spec == best && spec >= 0 && r.q > q) {
			best, q = spec, r.q
		}
	}
	return q
}

// preferred is the offer the Accept header values prefer (see negotiate);
// false when they allow none. No Accept, or one that holds no range that can
// be read, takes the first offer.
func preferred(accept []string, offers []string) (string, bool) {
	ranges := parseAccept(accept)
	if len(ranges) == 0 {
		return offers[0], true
	}
	best, bestQ := "", 0.0
	for _, o := range offers {
		if q := weight(ranges, o); q > bestQ {
			best, bestQ = o, q
		}
	}
	return best, best != ""
}
