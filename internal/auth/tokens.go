package auth

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// The lifetimes a token may be given (NewToken.ExpiresIn); without one a
// token works until it is revoked.
const (
	MinTokenLifetime = time.Minute
	MaxTokenLifetime = 365 * 24 * time.Hour
)

// lastUsedResolution is how stale a token's last_used_at may get: it is
// written at most once per this time and token, so that authenticating a
// request costs a read, not a write.
const lastUsedResolution = time.Minute

// Token statuses, as administrators see them.
const (
	TokenStatusActive  = "active"
	TokenStatusExpired = "expired"
	TokenStatusRevoked = "revoked" // by an administrator, with its user's deactivation, or as a replaced bootstrap token
)

// Reasons of token.revoked.
const (
	RevokedByAdmin           = "revoked"
	RevokedBootstrapReplaced = "bootstrap_replaced"
)

// Errors of EnsureAdmin that leave the service running without the
// bootstrap token: an administrator's decision outlives a restart.
var (
	ErrBootstrapTokenRevoked     = errors.New("BOOTSTRAP_ADMIN_TOKEN was revoked by an administrator and does not log in; set a new one")
	ErrBootstrapAdminDeactivated = errors.New(`the administrator "` + AdminName + `" was deactivated; BOOTSTRAP_ADMIN_TOKEN does not log in`)
)

// Token is an API token as administrators see it; its secret is shown once,
// when it is issued, and neither it nor its hash ever again.
type Token struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status" enums:"active,expired,revoked"`
	// Made from BOOTSTRAP_ADMIN_TOKEN: a changed setting revokes it.
	Bootstrap bool      `json:"bootstrap"`
	CreatedAt time.Time `json:"created_at" format:"date-time"`
	// The last request it authenticated, to the minute; null if never used.
	LastUsedAt *time.Time `json:"last_used_at" format:"date-time" extensions:"x-nullable"`
	// When it stops working; null: never (until revoked).
	ExpiresAt *time.Time `json:"expires_at" format:"date-time" extensions:"x-nullable"`
	// When it was revoked; null while it is not.
	RevokedAt *time.Time `json:"revoked_at" format:"date-time" extensions:"x-nullable"`
}

// IssuedToken is a new token; Token is shown this once and never stored.
type IssuedToken struct {
	ID        int64     `json:"id"`
	UserID    int64     `json:"user_id"`
	Name      string    `json:"name"`
	Token     string    `json:"token" example:"tsk_orzwk23ifvsxqylnobwgkllun5vwk3rb"`
	CreatedAt time.Time `json:"created_at" format:"date-time"`
	// When it stops working; null: never (until revoked).
	ExpiresAt *time.Time `json:"expires_at" format:"date-time" extensions:"x-nullable"`
}

// NewToken is the input of IssueToken.
type NewToken struct {
	Name string
	// ExpiresIn, when given, is the token's lifetime, from MinTokenLifetime
	// to MaxTokenLifetime; nil: the token works until it is revoked.
	ExpiresIn *time.Duration
}

// IssueToken creates a new API token for the user. It returns EINVALID for
// a name that is not one line of at most 200 characters or
// a lifetime out of bounds, ENOTFOUND for an unknown user and ECONFLICT for
// a deactivated one.
func (s *Service) IssueToken(ctx context.Context, userID int64, in NewToken) (IssuedToken, error) {
	in.Name = strings.TrimSpace(in.Name)
	fields := input.Line("name", in.Name, input.MaxName)
	if d := in.ExpiresIn; d != nil && (*d < MinTokenLifetime || *d > MaxTokenLifetime) {
		fields = append(fields, apperr.Field("expires_in", "must be from 1m to 8760h (365 days)"))
	}
	if len(fields) > 0 {
		return IssuedToken{}, apperr.Invalid("the token is not valid", fields...)
	}
	var out IssuedToken
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, err := mustUser(ctx, tx, userID, true)
		if err != nil {
			return err
		}
		if u.DeactivatedAt != nil {
			return apperr.Conflict("%s was deactivated and can get no new tokens", u.Name)
		}
		out, err = issueToken(ctx, tx, userID, strings.TrimSpace(in.Name), NewTokenSecret(), in.ExpiresIn, false)
		return err
	})
	return out, err
}

func issueToken(ctx context.Context, tx *gorm.DB, userID int64, name, secret string, expiresIn *time.Duration, bootstrap bool) (IssuedToken, error) {
	t, err := insertToken(ctx, tx, userID, name, HashToken(secret), expiresIn, bootstrap)
	if err != nil {
		return IssuedToken{}, err
	}
	t.Token = secret
	err = events.Add(ctx, tx, contracts.TokenIssued.New(userID,
		contracts.TokenIssuedPayload{UserID: userID, TokenID: t.ID, Name: name, ExpiresAt: t.ExpiresAt, Bootstrap: bootstrap}))
	return t, err
}

// tokensOf returns every token of the user in id order.
func tokensOf(ctx context.Context, tx *gorm.DB, userID int64) ([]Token, error) {
	rows, err := tokensOfUser(ctx, tx, userID)
	if err != nil {
		return nil, err
	}
	ts := make([]Token, len(rows))
	for i, r := range rows {
		ts[i] = r.Token
		switch {
		case r.RevokedAt != nil:
			ts[i].Status = TokenStatusRevoked
		case r.Expired:
			ts[i].Status = TokenStatusExpired
		default:
			ts[i].Status = TokenStatusActive
		}
	}
	return ts, nil
}

// RevokeToken revokes the user's token: it stops working at once. It returns
// ENOTFOUND when the user has no such token; revoking a revoked token
// changes nothing and writes no event.
func (s *Service) RevokeToken(ctx context.Context, userID, tokenID int64) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		name, revoked, err := revokeToken(ctx, tx, userID, tokenID)
		if err != nil {
			return err
		}
		if !revoked {
			has, err := hasToken(ctx, tx, userID, tokenID)
			if err == nil && !has {
				err = apperr.NotFound("user %d has no token %d", userID, tokenID)
			}
			return err
		}
		return events.Add(ctx, tx, contracts.TokenRevoked.New(userID,
			contracts.TokenRevokedPayload{UserID: userID, TokenID: tokenID, Name: name, Reason: RevokedByAdmin}))
	})
}

// Authenticate returns the user a bearer token belongs to. It returns
// EUNAUTHORIZED, with what to do about it, for a missing or unknown token, a
// revoked or expired one and one whose user was deactivated. It refreshes
// the token's last_used_at when it is older than a minute.
func (s *Service) Authenticate(ctx context.Context, secret string) (User, error) {
	if secret == "" {
		return User{}, apperr.Errorf(apperr.EUNAUTHORIZED, "an API token is required: send Authorization: Bearer <token>")
	}
	row, err := loginByHash(ctx, s.db, HashToken(secret))
	if err != nil {
		return User{}, err
	}
	switch {
	case row.TokenID == 0:
		return User{}, apperr.Errorf(apperr.EUNAUTHORIZED, "the API token is not valid")
	case row.DeactivatedAt != nil:
		return User{}, apperr.Errorf(apperr.EUNAUTHORIZED, "the user %s was deactivated on %s and their API tokens no longer work; ask an administrator",
			row.Name, fmtTime(*row.DeactivatedAt))
	case row.RevokedAt != nil:
		return User{}, apperr.Errorf(apperr.EUNAUTHORIZED, "this API token was revoked on %s; ask an administrator for a new one", fmtTime(*row.RevokedAt))
	case row.Expired:
		return User{}, apperr.Errorf(apperr.EUNAUTHORIZED, "this API token expired on %s; ask an administrator for a new one", fmtTime(*row.ExpiresAt))
	}
	if row.Stale {
		if err := touchToken(ctx, s.db, row.TokenID); err != nil {
			return User{}, err
		}
	}
	return row.User, nil
}

// EnsureAdmin makes sure the administrator "Администратор" exists and that
// the token (BOOTSTRAP_ADMIN_TOKEN) logs in as them. A token of the setting
// that is not this one is revoked (token.revoked, reason bootstrap_replaced),
// so changing the setting retires the old token. It is idempotent; on
// PostgreSQL replicas starting at once take turns. An administrator's
// decision outlives a restart: it returns ErrBootstrapTokenRevoked when this
// token was revoked and ErrBootstrapAdminDeactivated when the administrator
// was deactivated, and changes nothing then.
func (s *Service) EnsureAdmin(ctx context.Context, secret string) (User, error) {
	var admin User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := database.LockName(tx, "auth.bootstrap"); err != nil {
			return err
		}
		found, err := userNamed(ctx, tx, AdminName, RoleAdmin)
		if err != nil {
			return err
		}
		admin = deref(found)
		if found == nil {
			admin = User{Name: AdminName, Role: RoleAdmin}
			if err := createUser(ctx, tx, &admin); err != nil {
				return err
			}
		}
		if admin.DeactivatedAt != nil {
			return ErrBootstrapAdminDeactivated
		}
		currentID, revokedAt, err := tokenByHash(ctx, tx, HashToken(secret))
		if err != nil {
			return err
		}
		if revokedAt != nil {
			return ErrBootstrapTokenRevoked
		}
		replaced, err := revokeBootstrapBut(ctx, tx, currentID)
		if err != nil {
			return err
		}
		for _, t := range replaced {
			err := events.Add(ctx, tx, contracts.TokenRevoked.New(t.UserID,
				contracts.TokenRevokedPayload{UserID: t.UserID, TokenID: t.ID, Name: t.Name, Reason: RevokedBootstrapReplaced}))
			if err != nil {
				return err
			}
		}
		if currentID != 0 {
			return nil
		}
		_, err = issueToken(ctx, tx, admin.ID, "bootstrap", secret, nil, true)
		return err
	})
	return admin, err
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
