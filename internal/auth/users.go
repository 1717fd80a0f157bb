package auth

import (
	"context"
	"errors"
	"slices"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

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
	var us []User
	err := s.db.WithContext(ctx).Where("id > ?", pr.After).Order("id").Limit(pr.Limit + 1).Find(&us).Error
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
		u, err := userByID(tx, id, false)
		if err != nil {
			return err
		}
		d.User = u
		d.Tokens, err = tokensOf(ctx, tx, id)
		return err
	})
	return d, err
}

// userByID reads the user, locking the row on PostgreSQL when forUpdate (to
// serialise issuing tokens with deactivating the user). It returns ENOTFOUND
// for an unknown id.
func userByID(tx *gorm.DB, id int64, forUpdate bool) (User, error) {
	var u User
	q := tx
	if forUpdate {
		q = q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate}) // SQLite has one writer and ignores it
	}
	err := q.First(&u, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return u, apperr.NotFound("user %d does not exist", id)
	}
	return u, err
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
		if u, err = userByID(tx, id, true); err != nil || u.DeactivatedAt != nil {
			return err
		}
		if u.ID == by.ID {
			return apperr.Conflict("you cannot deactivate yourself; another administrator can")
		}
		if u.Role == RoleAdmin {
			var others int64
			err := tx.Model(&User{}).Where("role = ? AND deactivated_at IS NULL AND id <> ?", RoleAdmin, u.ID).Count(&others).Error
			if err != nil {
				return err
			}
			if others == 0 {
				return apperr.Conflict("%s is the last active administrator; make another user an administrator first", u.Name)
			}
		}
		now := database.Now(tx)
		if err := tx.Exec("UPDATE auth_users SET deactivated_at = "+now+" WHERE id = ?", u.ID).Error; err != nil {
			return err
		}
		revoked := []int64{}
		err = database.Scan(tx.Raw("UPDATE auth_tokens SET revoked_at = "+now+" WHERE user_id = ? AND revoked_at IS NULL RETURNING id", u.ID),
			&revoked)
		if err != nil {
			return err
		}
		slices.Sort(revoked) // RETURNING gives the rows in no set order
		if u, err = userByID(tx, id, false); err != nil {
			return err
		}
		return events.Add(ctx, tx, contracts.UserDeactivated.New(u.ID,
			contracts.UserDeactivatedPayload{UserID: u.ID, Name: u.Name, RevokedTokenIDs: revoked}))
	})
	return u, err
}
