package auth

import (
	"context"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// UserDetail is a user with every token ever issued to them, newest last;
// the tokens' secrets are never shown again.
type UserDetail struct {
	User
	Tokens []Token `json:"tokens"`
}

// Users returns a page of users in id order, deactivated ones included.
func (s *Service) Users(ctx context.Context, pr page.Request) ([]User, string, error) {
	us, err := usersPage(ctx, s.db, pr)
	if err != nil {
		return nil, "", err
	}
	us, next := page.Next(us, pr.Limit, func(u User) int64 { return u.ID })
	return us, next, nil
}

// UserDetail returns the user with their tokens, or ENOTFOUND.
func (s *Service) UserDetail(ctx context.Context, id int64) (UserDetail, error) {
	var d UserDetail
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, err := mustUser(ctx, tx, id, false)
		if err != nil {
			return err
		}
		d.User = u
		d.Tokens, err = tokensOf(ctx, tx, id)
		return err
	})
	return d, err
}

// DeactivateUser deactivates the user: every token of theirs is revoked with
// them, at once, and they can get no new ones; the journal keeps naming them
// as the actor of their earlier events. by is the administrator doing it. It
// returns ENOTFOUND for an unknown user and ECONFLICT when by would
// deactivate themselves or the last active administrator. Deactivating a
// deactivated user changes nothing and writes no event.
func (s *Service) DeactivateUser(ctx context.Context, id int64, by User) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Two administrators deactivating each other at once must not
		// leave none: deactivations take turns.
		if err := database.LockName(tx, "auth.deactivate"); err != nil {
			return err
		}
		var err error
		if u, err = mustUser(ctx, tx, id, true); err != nil || u.DeactivatedAt != nil {
			return err
		}
		if u.ID == by.ID {
			return apperr.Conflict("you cannot deactivate yourself; another administrator can")
		}
		if u.Role == RoleAdmin {
			others, err := activeAdminsBut(ctx, tx, u.ID)
			if err != nil {
				return err
			}
			if others == 0 {
				return apperr.Conflict("%s is the last active administrator; make another user an administrator first", u.Name)
			}
		}
		if err := markDeactivated(ctx, tx, u.ID); err != nil {
			return err
		}
		revoked, err := revokeTokensOf(ctx, tx, u.ID)
		if err != nil {
			return err
		}
		if u, err = mustUser(ctx, tx, id, false); err != nil {
			return err
		}
		return events.Add(ctx, tx, contracts.UserDeactivated.New(u.ID,
			contracts.UserDeactivatedPayload{UserID: u.ID, Name: u.Name, RevokedTokenIDs: revoked}))
	})
	return u, err
}
