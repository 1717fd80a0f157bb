package auth

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/platform/page"
)

func newUser(t *testing.T, tx *gorm.DB, name, role string) User {
	t.Helper()
	u := User{Name: name, Role: role}
	require.NoError(t, insertUser(context.Background(), tx, &u))
	return u
}

// The auth module's store, statement by statement, on both databases.
func TestStore(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()

		t.Run("users", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				any, err := anyUser(ctx, db)
				require.NoError(t, err)
				require.False(t, any)
				email := "a@example.com"
				a := User{Name: "Анна", Email: &email, Role: RoleManager}
				require.NoError(t, insertUser(ctx, db, &a))
				require.Positive(t, a.ID)
				require.WithinDuration(t, time.Now(), a.CreatedAt, time.Hour, "the database's clock")
				any, err = anyUser(ctx, db)
				require.NoError(t, err)
				require.True(t, any)

				got, found, err := userByID(ctx, db, a.ID, true)
				require.NoError(t, err)
				require.True(t, found)
				require.Equal(t, "a@example.com", *got.Email)
				_, found, err = userByID(ctx, db, a.ID+100, false)
				require.NoError(t, err)
				require.False(t, found)

				b := newUser(t, db, "Борис", RolePlanner)
				newUser(t, db, "Борис", RolePlanner)
				named, err := userNamed(ctx, db, "Борис", RolePlanner)
				require.NoError(t, err)
				require.Equal(t, b.ID, named.ID, "the first by id")
				named, err = userNamed(ctx, db, "Борис", RoleAdmin)
				require.NoError(t, err)
				require.Nil(t, named, "the name with another role")

				us, err := usersPage(ctx, db, page.Request{Limit: 1})
				require.NoError(t, err)
				require.Equal(t, []int64{a.ID, b.ID}, []int64{us[0].ID, us[1].ID}, "one more than the limit, in id order")
				us, err = usersPage(ctx, db, page.Request{Limit: 10, After: b.ID})
				require.NoError(t, err)
				require.Len(t, us, 1)
			})
		})

		t.Run("a taken email", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				email := "same@example.com"
				require.NoError(t, insertUser(ctx, db, &User{Name: "A", Email: &email, Role: RoleViewer}))
				err := db.Transaction(func(tx *gorm.DB) error {
					return insertUser(ctx, tx, &User{Name: "B", Email: &email, Role: RoleViewer})
				})
				require.True(t, database.IsUniqueViolation(err), "%v", err)
			})
		})

		t.Run("deactivation", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				a := newUser(t, db, "A", RoleAdmin)
				b := newUser(t, db, "B", RoleAdmin)
				newUser(t, db, "M", RoleManager)
				n, err := activeAdminsBut(ctx, db, a.ID)
				require.NoError(t, err)
				require.EqualValues(t, 1, n)
				t1, err := insertToken(ctx, db, b.ID, "t1", "h1", nil, false)
				require.NoError(t, err)
				t2, err := insertToken(ctx, db, b.ID, "t2", "h2", nil, false)
				require.NoError(t, err)
				_, _, err = revokeToken(ctx, db, b.ID, t1.ID)
				require.NoError(t, err)

				require.NoError(t, markDeactivated(ctx, db, b.ID))
				got, _, err := userByID(ctx, db, b.ID, false)
				require.NoError(t, err)
				require.NotNil(t, got.DeactivatedAt)
				n, err = activeAdminsBut(ctx, db, a.ID)
				require.NoError(t, err)
				require.Zero(t, n, "a deactivated administrator is not active")
				revoked, err := revokeTokensOf(ctx, db, b.ID)
				require.NoError(t, err)
				require.Equal(t, []int64{t2.ID}, revoked, "only the live ones")
				revoked, err = revokeTokensOf(ctx, db, b.ID)
				require.NoError(t, err)
				require.Empty(t, revoked)
			})
		})

		t.Run("tokens", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				u := newUser(t, db, "A", RoleManager)
				other := newUser(t, db, "B", RoleManager)
				day := 24 * time.Hour
				live, err := insertToken(ctx, db, u.ID, "live", "h-live", &day, false)
				require.NoError(t, err)
				require.WithinDuration(t, live.CreatedAt.Add(day), *live.ExpiresAt, time.Second)
				past := -time.Hour
				gone, err := insertToken(ctx, db, u.ID, "gone", "h-gone", &past, false)
				require.NoError(t, err)
				never, err := insertToken(ctx, db, u.ID, "never", "h-never", nil, true)
				require.NoError(t, err)
				require.Nil(t, never.ExpiresAt)

				rows, err := tokensOfUser(ctx, db, u.ID)
				require.NoError(t, err)
				require.Equal(t, []int64{live.ID, gone.ID, never.ID}, []int64{rows[0].ID, rows[1].ID, rows[2].ID})
				require.Equal(t, []bool{false, true, false}, []bool{rows[0].Expired, rows[1].Expired, rows[2].Expired})
				require.True(t, rows[2].Bootstrap)

				has, err := hasToken(ctx, db, u.ID, live.ID)
				require.NoError(t, err)
				require.True(t, has)
				has, err = hasToken(ctx, db, other.ID, live.ID)
				require.NoError(t, err)
				require.False(t, has, "another user's token")
				name, revoked, err := revokeToken(ctx, db, other.ID, live.ID)
				require.NoError(t, err)
				require.False(t, revoked, "not the user's")
				require.Empty(t, name)
				name, revoked, err = revokeToken(ctx, db, u.ID, live.ID)
				require.NoError(t, err)
				require.True(t, revoked)
				require.Equal(t, "live", name)
				_, revoked, err = revokeToken(ctx, db, u.ID, live.ID)
				require.NoError(t, err)
				require.False(t, revoked, "revoked once")
				has, err = hasToken(ctx, db, u.ID, live.ID)
				require.NoError(t, err)
				require.True(t, has, "a revoked token is still the user's")

				id, revokedAt, err := tokenByHash(ctx, db, "h-live")
				require.NoError(t, err)
				require.Equal(t, live.ID, id)
				require.NotNil(t, revokedAt)
				id, revokedAt, err = tokenByHash(ctx, db, "h-none")
				require.NoError(t, err)
				require.Zero(t, id)
				require.Nil(t, revokedAt)
			})
		})

		t.Run("login", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				u := newUser(t, db, "A", RoleMaster)
				past := -time.Hour
				tok, err := insertToken(ctx, db, u.ID, "t", "h", nil, false)
				require.NoError(t, err)
				old, err := insertToken(ctx, db, u.ID, "old", "h-old", &past, false)
				require.NoError(t, err)

				l, err := loginByHash(ctx, db, "h")
				require.NoError(t, err)
				require.Equal(t, tok.ID, l.TokenID)
				require.Equal(t, u.ID, l.ID)
				require.Equal(t, RoleMaster, l.Role)
				require.False(t, l.Expired)
				require.True(t, l.Stale, "never used")
				require.NoError(t, touchToken(ctx, db, tok.ID))
				l, err = loginByHash(ctx, db, "h")
				require.NoError(t, err)
				require.False(t, l.Stale, "used just now")
				usedAgo := func(ago time.Duration) time.Time {
					t.Helper()
					require.NoError(t, db.Exec("UPDATE auth_tokens SET last_used_at = "+database.NowPlus(db, -ago)+" WHERE id = ?", tok.ID).Error)
					rows, err := tokensOfUser(ctx, db, u.ID)
					require.NoError(t, err)
					return *rows[0].LastUsedAt
				}
				lastUsed := func() time.Time {
					rows, err := tokensOfUser(ctx, db, u.ID)
					require.NoError(t, err)
					return *rows[0].LastUsedAt
				}
				was := usedAgo(30 * time.Second)
				require.NoError(t, touchToken(ctx, db, tok.ID))
				require.Equal(t, was, lastUsed(), "used within the minute, it is not written again")
				was = usedAgo(2 * time.Minute)
				require.NoError(t, touchToken(ctx, db, tok.ID))
				require.True(t, lastUsed().After(was), "used longer ago, it is")

				l, err = loginByHash(ctx, db, "h-old")
				require.NoError(t, err)
				require.Equal(t, old.ID, l.TokenID)
				require.True(t, l.Expired)
				l, err = loginByHash(ctx, db, "h-none")
				require.NoError(t, err)
				require.Zero(t, l.TokenID)
			})
		})

		t.Run("bootstrap tokens", func(t *testing.T) {
			dbtest.RolledBack(t, db, func(db *gorm.DB) {
				a := newUser(t, db, AdminName, RoleAdmin)
				b1, err := insertToken(ctx, db, a.ID, "bootstrap", "b1", nil, true)
				require.NoError(t, err)
				b2, err := insertToken(ctx, db, a.ID, "bootstrap", "b2", nil, true)
				require.NoError(t, err)
				b3, err := insertToken(ctx, db, a.ID, "bootstrap", "b3", nil, true)
				require.NoError(t, err)
				plain, err := insertToken(ctx, db, a.ID, "own", "p", nil, false)
				require.NoError(t, err)
				replaced, err := revokeBootstrapBut(ctx, db, b2.ID)
				require.NoError(t, err)
				require.Equal(t, []revokedToken{{b1.ID, a.ID, "bootstrap"}, {b3.ID, a.ID, "bootstrap"}}, replaced, "in id order, not the kept one nor another kind")
				_, revokedAt, err := tokenByHash(ctx, db, "p")
				require.NoError(t, err)
				require.Nil(t, revokedAt, "token %d is not a bootstrap token", plain.ID)
				replaced, err = revokeBootstrapBut(ctx, db, 0)
				require.NoError(t, err)
				require.Equal(t, []revokedToken{{b2.ID, a.ID, "bootstrap"}}, replaced)
			})
		})
	})
}

// Every statement of the store has its case.
func TestStore_EveryStatementHasACase(t *testing.T) {
	t.Parallel()
	dbtest.EveryStatementHasACase(t)
}
