package contracts

import (
	"time"

	"github.com/tsekh/tsekh/internal/events"
)

// The auth module's event types, about users and their API tokens; every one
// is about a user (auth_users), and none ever holds a token's secret or hash.
var (
	UserCreated = events.Declare[UserCreatedPayload]("user.created", "auth", "auth_users",
		"A user was created.")
	UserDeactivated = events.Declare[UserDeactivatedPayload]("user.deactivated", "auth", "auth_users",
		"A user was deactivated: their tokens were revoked with them, and they can get no new ones. Their earlier events keep naming them.")
	TokenIssued = events.Declare[TokenIssuedPayload]("token.issued", "auth", "auth_users",
		"An API token was issued to a user (the token itself is never recorded).")
	TokenRevoked = events.Declare[TokenRevokedPayload]("token.revoked", "auth", "auth_users",
		"An API token was revoked: by an administrator (reason revoked) or because BOOTSTRAP_ADMIN_TOKEN changed (reason bootstrap_replaced).")
)

// UserCreatedPayload is the payload of user.created.
type UserCreatedPayload struct {
	UserID int64  `json:"user_id" jsonschema_description:"the user"`
	Name   string `json:"name" jsonschema_description:"the display name the journal shows"`
	Role   string `json:"role" jsonschema_description:"admin, manager, planner, master, buyer or viewer"`
}

// UserDeactivatedPayload is the payload of user.deactivated.
type UserDeactivatedPayload struct {
	UserID          int64   `json:"user_id" jsonschema_description:"the user"`
	Name            string  `json:"name" jsonschema_description:"the display name the journal shows"`
	RevokedTokenIDs []int64 `json:"revoked_token_ids" jsonschema_description:"the tokens revoked with the user"`
}

// TokenIssuedPayload is the payload of token.issued.
type TokenIssuedPayload struct {
	UserID    int64      `json:"user_id" jsonschema_description:"the token's user"`
	TokenID   int64      `json:"token_id" jsonschema_description:"the token, to revoke it"`
	Name      string     `json:"name" jsonschema_description:"what the token is for"`
	ExpiresAt *time.Time `json:"expires_at,omitempty" jsonschema_description:"when it stops working; absent: never (until revoked)"`
	Bootstrap bool       `json:"bootstrap,omitempty" jsonschema_description:"true for the token of BOOTSTRAP_ADMIN_TOKEN"`
}

// TokenRevokedPayload is the payload of token.revoked.
type TokenRevokedPayload struct {
	UserID  int64  `json:"user_id" jsonschema_description:"the token's user"`
	TokenID int64  `json:"token_id" jsonschema_description:"the token"`
	Name    string `json:"name" jsonschema_description:"what the token was for"`
	Reason  string `json:"reason" jsonschema:"enum=revoked,enum=bootstrap_replaced" jsonschema_description:"revoked by an administrator, or replaced by a new BOOTSTRAP_ADMIN_TOKEN"`
}
