package events

import (
	"net/url"
	"regexp"
	"strings"
)

// urlInText finds URLs in an error's text: a scheme, "://", then anything
// up to a space or a quote (Go's *url.Error quotes its URL).
var urlInText = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// RedactURLs returns the text with every URL in it cut to its scheme, host
// and path: no user or password, no query string, no fragment. A failed
// call's error names the URL it called (a shop callback's API key may be in
// its query string, a NATS token in its user), and what the journal keeps
// (a delivery's last_error) or the logs show is read by people who must
// not learn them.
func RedactURLs(text string) string {
	return urlInText.ReplaceAllStringFunc(text, func(s string) string {
		u, err := url.Parse(s)
		if err != nil {
			scheme, _, _ := strings.Cut(s, "://")
			return scheme + "://…"
		}
		if u.User == nil && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery {
			return s
		}
		u.User, u.RawQuery, u.Fragment, u.ForceQuery = nil, "", "", false
		return u.String()
	})
}

// ErrorText is an error's text as the journal and the logs keep it: its URLs
// redacted (RedactURLs).
func ErrorText(err error) string {
	if err == nil {
		return ""
	}
	return RedactURLs(err.Error())
}
