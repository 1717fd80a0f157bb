package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/auth"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
)

type tokenView struct {
	ID         int64
	Name       string
	Status     string
	Bootstrap  bool
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

type userView struct {
	ID            int64
	Name          string
	Role          string
	CreatedAt     time.Time  `json:"created_at"`
	DeactivatedAt *time.Time `json:"deactivated_at"`
	Tokens        []tokenView
}

type issued struct {
	ID        int64
	UserID    int64 `json:"user_id"`
	Name      string
	Token     string
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
}

type journalEntry struct {
	ID      int64
	Type    string
	Payload map[string]any
	Actor   *struct {
		ID   int64
		Name string
	}
}

func createUser(t *testing.T, env *apptest.Env, name, role string) userView {
	t.Helper()
	r := env.Admin(http.MethodPost, "/api/v1/users", map[string]any{"name": name, "role": role})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var u userView
	r.JSON(t, &u)
	return u
}

func issueToken(t *testing.T, env *apptest.Env, userID int64, body any) issued {
	t.Helper()
	r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/users/%d/tokens", userID), body)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var tok issued
	r.JSON(t, &tok)
	require.True(t, strings.HasPrefix(tok.Token, "tsk_"), tok.Token)
	return tok
}

func getUser(t *testing.T, env *apptest.Env, id int64) (userView, []byte) {
	t.Helper()
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/users/%d", id), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var u userView
	r.JSON(t, &u)
	return u, r.Body
}

// userEvents returns the journal's events about the user, oldest first.
func userEvents(t *testing.T, env *apptest.Env, id int64) []journalEntry {
	t.Helper()
	var page struct{ Items []journalEntry }
	env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?aggregate_type=auth_users&aggregate_id=%d&limit=500", id), nil).JSON(t, &page)
	for i, j := 0, len(page.Items)-1; i < j; i, j = i+1, j-1 {
		page.Items[i], page.Items[j] = page.Items[j], page.Items[i]
	}
	return page.Items
}

func eventTypes(es []journalEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}

// requireUnauthorized checks that the token is refused with a 401 problem
// whose detail says why.
func requireUnauthorized(t *testing.T, env *apptest.Env, token, why string) {
	t.Helper()
	r := env.Do(http.MethodGet, "/api/v1/me", nil, token)
	p := requireProblem(t, r, http.StatusUnauthorized)
	require.Contains(t, p.Detail, why)
	require.Contains(t, r.Header.Get("WWW-Authenticate"), "Bearer")
}

func TestUsers_ListAndShowWithoutSecrets(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		before := time.Now().Add(-time.Minute)
		olga := createUser(t, env, "Ольга", "planner")
		// The real created_at, from the database clock, not 0001-01-01.
		require.True(t, olga.CreatedAt.After(before), "created_at %s", olga.CreatedAt)
		require.True(t, olga.CreatedAt.Before(time.Now().Add(time.Minute)), "created_at %s", olga.CreatedAt)
		require.Nil(t, olga.DeactivatedAt)
		tok := issueToken(t, env, olga.ID, map[string]any{"name": "laptop"})
		require.Equal(t, olga.ID, tok.UserID)
		require.False(t, tok.CreatedAt.IsZero())
		require.Nil(t, tok.ExpiresAt)
		for i := range 3 {
			createUser(t, env, fmt.Sprintf("Пользователь %d", i), "viewer")
		}

		// The list, page by page: the administrator, Ольга and three more.
		var ids []int64
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10)
			r := env.Admin(http.MethodGet, "/api/v1/users?limit=2&cursor="+cursor, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var page struct {
				Items      []userView
				NextCursor string `json:"next_cursor"`
			}
			r.JSON(t, &page)
			require.LessOrEqual(t, len(page.Items), 2)
			for _, u := range page.Items {
				ids = append(ids, u.ID)
				if u.ID == olga.ID {
					require.Equal(t, olga.CreatedAt.UTC(), u.CreatedAt.UTC())
					require.Nil(t, u.Tokens, "the list does not carry tokens")
				}
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
		require.Len(t, ids, 5)
		require.IsIncreasing(t, ids)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/users?limit=0", nil), http.StatusUnprocessableEntity, "limit")

		// One user with their tokens: when, but never the secret or its hash.
		require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/me", nil, tok.Token).Status)
		u, body := getUser(t, env, olga.ID)
		require.Equal(t, "Ольга", u.Name)
		require.Equal(t, olga.CreatedAt.UTC(), u.CreatedAt.UTC())
		require.Len(t, u.Tokens, 1)
		got := u.Tokens[0]
		require.Equal(t, tok.ID, got.ID)
		require.Equal(t, "laptop", got.Name)
		require.Equal(t, "active", got.Status)
		require.False(t, got.Bootstrap)
		require.Equal(t, tok.CreatedAt.UTC(), got.CreatedAt.UTC())
		require.NotNil(t, got.LastUsedAt, "the request above used it")
		require.Nil(t, got.ExpiresAt)
		require.Nil(t, got.RevokedAt)
		require.NotContains(t, string(body), tok.Token)
		require.NotContains(t, string(body), auth.HashToken(tok.Token))
		var raw map[string]any
		require.NoError(t, json.Unmarshal(body, &raw))
		for _, tk := range raw["tokens"].([]any) {
			require.NotContains(t, tk, "token")
			require.NotContains(t, tk, "hash")
		}
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/users/999999", nil), http.StatusNotFound)

		// Administrators only.
		r := env.Do(http.MethodGet, "/api/v1/users", nil, tok.Token)
		requireProblem(t, r, http.StatusForbidden)
		requireProblem(t, env.Do(http.MethodGet, fmt.Sprintf("/api/v1/users/%d", olga.ID), nil, tok.Token), http.StatusForbidden)
		requireProblem(t, env.Do(http.MethodPost, fmt.Sprintf("/api/v1/users/%d/deactivate", olga.ID), nil, tok.Token), http.StatusForbidden)
		requireProblem(t, env.Do(http.MethodDelete, fmt.Sprintf("/api/v1/users/%d/tokens/%d", olga.ID, tok.ID), nil, tok.Token), http.StatusForbidden)
	})
}

// last_used_at costs one write per token and minute, not one per request.
func TestTokens_LastUsedIsWrittenAtMostOnceAMinute(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		u := createUser(t, env, "Ольга", "planner")
		tok := issueToken(t, env, u.ID, nil)
		d, _ := getUser(t, env, u.ID)
		require.Nil(t, d.Tokens[0].LastUsedAt, "never used yet")

		require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/me", nil, tok.Token).Status)
		d, _ = getUser(t, env, u.ID)
		first := d.Tokens[0].LastUsedAt
		require.NotNil(t, first)
		for range 3 {
			require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/me", nil, tok.Token).Status)
		}
		d, _ = getUser(t, env, u.ID)
		require.Equal(t, first.UTC(), d.Tokens[0].LastUsedAt.UTC(), "used again within the minute: not written")

		// A minute later (the row is moved back), the next use writes it.
		require.NoError(t, env.App.DB.Exec("UPDATE auth_tokens SET last_used_at = "+database.NowPlus(env.App.DB, -2*time.Minute)+" WHERE id = ?", tok.ID).Error)
		d, _ = getUser(t, env, u.ID)
		moved := *d.Tokens[0].LastUsedAt
		require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/me", nil, tok.Token).Status)
		d, _ = getUser(t, env, u.ID)
		require.True(t, d.Tokens[0].LastUsedAt.After(moved.Add(time.Minute)), "%s after %s", d.Tokens[0].LastUsedAt, moved)
	})
}

func TestTokens_Expire(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		u := createUser(t, env, "Интеграция", "manager")
		t.Run("OK", func(t *testing.T) {
			tok := issueToken(t, env, u.ID, map[string]any{"name": "month", "expires_in": "720h"})
			require.NotNil(t, tok.ExpiresAt)
			require.WithinDuration(t, tok.CreatedAt.Add(720*time.Hour), *tok.ExpiresAt, time.Second)
			require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/me", nil, tok.Token).Status)

			// The clock moves on: the token's expiry is moved into the past.
			require.NoError(t, dbtest.Fixture(env.App.DB, func(tx *gorm.DB) error {
				return tx.Exec("UPDATE auth_tokens SET expires_at = "+database.NowPlus(tx, -time.Second)+" WHERE id = ?", tok.ID).Error
			}))
			requireUnauthorized(t, env, tok.Token, "this API token expired on ")
			requireProblem(t, env.Do(http.MethodGet, "/api/v1/orders", nil, tok.Token), http.StatusUnauthorized)
			d, _ := getUser(t, env, u.ID)
			require.Equal(t, "expired", d.Tokens[len(d.Tokens)-1].Status)
		})
		t.Run("ErrInvalidLifetime", func(t *testing.T) {
			n := env.Count("auth_tokens")
			for _, bad := range []any{"0s", "-5m", "30s", "8761h", "soon", "30 days", 3600, true} {
				r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/users/%d/tokens", u.ID), map[string]any{"expires_in": bad})
				requireProblem(t, r, http.StatusUnprocessableEntity, "expires_in")
			}
			require.Equal(t, n, env.Count("auth_tokens"), "nothing stored")
			// The bounds themselves are allowed.
			issueToken(t, env, u.ID, map[string]any{"expires_in": "1m"})
			issueToken(t, env, u.ID, map[string]any{"expires_in": "8760h"})
		})
	})
}

func TestTokens_Revoke(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		u := createUser(t, env, "Ольга", "planner")
		other := createUser(t, env, "Пётр", "viewer")
		keep := issueToken(t, env, u.ID, map[string]any{"name": "desktop"})
		gone := issueToken(t, env, u.ID, map[string]any{"name": "lost phone"})
		require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/me", nil, gone.Token).Status)

		path := fmt.Sprintf("/api/v1/users/%d/tokens/%d", u.ID, gone.ID)
		r := env.Admin(http.MethodDelete, path, nil)
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		require.Empty(t, r.Body)
		requireUnauthorized(t, env, gone.Token, "this API token was revoked on ")
		require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/me", nil, keep.Token).Status, "the user's other token works")

		// Again: nothing changes, no second event.
		require.Equal(t, http.StatusNoContent, env.Admin(http.MethodDelete, path, nil).Status)
		requireProblem(t, env.Admin(http.MethodDelete, fmt.Sprintf("/api/v1/users/%d/tokens/%d", u.ID, gone.ID+1000), nil), http.StatusNotFound)
		requireProblem(t, env.Admin(http.MethodDelete, fmt.Sprintf("/api/v1/users/%d/tokens/%d", other.ID, keep.ID), nil), http.StatusNotFound)
		requireProblem(t, env.Admin(http.MethodDelete, fmt.Sprintf("/api/v1/users/%d/tokens/x", u.ID), nil), http.StatusUnprocessableEntity, "token_id")
		require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/me", nil, keep.Token).Status, "a 404 revoked nothing")

		d, _ := getUser(t, env, u.ID)
		require.Len(t, d.Tokens, 2)
		require.Equal(t, "active", d.Tokens[0].Status)
		require.Equal(t, "revoked", d.Tokens[1].Status)
		require.NotNil(t, d.Tokens[1].RevokedAt)

		// Journalled with the administrator as actor, without a secret.
		evs := userEvents(t, env, u.ID)
		require.Equal(t, []string{"user.created", "token.issued", "token.issued", "token.revoked"}, eventTypes(evs))
		rev := evs[3]
		require.NotNil(t, rev.Actor)
		require.Equal(t, auth.AdminName, rev.Actor.Name)
		require.EqualValues(t, gone.ID, rev.Payload["token_id"])
		require.EqualValues(t, u.ID, rev.Payload["user_id"])
		require.Equal(t, "lost phone", rev.Payload["name"])
		require.Equal(t, "revoked", rev.Payload["reason"])
		requireNoSecrets(t, evs, keep.Token, gone.Token)
	})
}

func requireNoSecrets(t *testing.T, evs []journalEntry, secrets ...string) {
	t.Helper()
	for _, e := range evs {
		b, err := json.Marshal(e.Payload)
		require.NoError(t, err)
		require.NotContains(t, string(b), "tsk_", e.Type)
		for _, s := range secrets {
			require.NotContains(t, string(b), auth.HashToken(s), e.Type)
		}
	}
}

func TestUsers_Deactivate(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		u := createUser(t, env, "Менеджер Анна", "manager")
		t1 := issueToken(t, env, u.ID, map[string]any{"name": "one"})
		t2 := issueToken(t, env, u.ID, map[string]any{"name": "two", "expires_in": "24h"})
		r := env.Do(http.MethodPost, "/api/v1/orders", validOrder, t1.Token)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)

		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/users/%d/deactivate", u.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var got userView
		r.JSON(t, &got)
		require.NotNil(t, got.DeactivatedAt)
		require.Equal(t, u.ID, got.ID)

		// Every token stops at once, with a message a person can act on.
		for _, tok := range []issued{t1, t2} {
			requireUnauthorized(t, env, tok.Token, "the user Менеджер Анна was deactivated on ")
		}
		d, _ := getUser(t, env, u.ID)
		require.NotNil(t, d.DeactivatedAt)
		for _, tk := range d.Tokens {
			require.Equal(t, "revoked", tk.Status, tk.Name)
		}
		// No new tokens for them.
		requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/users/%d/tokens", u.ID), map[string]any{}), http.StatusConflict)

		// Their events keep naming them.
		var orders struct{ Items []journalEntry }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?actor_id=%d&type=order.received", u.ID), nil).JSON(t, &orders)
		require.Len(t, orders.Items, 1)
		require.Equal(t, "Менеджер Анна", orders.Items[0].Actor.Name)

		// Journalled once, by the administrator.
		require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/users/%d/deactivate", u.ID), nil).Status, "again: nothing changes")
		evs := userEvents(t, env, u.ID)
		require.Equal(t, []string{"user.created", "token.issued", "token.issued", "user.deactivated"}, eventTypes(evs))
		deact := evs[3]
		require.Equal(t, auth.AdminName, deact.Actor.Name)
		require.Equal(t, []any{float64(t1.ID), float64(t2.ID)}, deact.Payload["revoked_token_ids"])
		requireNoSecrets(t, evs, t1.Token, t2.Token)
		requireProblem(t, env.Admin(http.MethodPost, "/api/v1/users/999999/deactivate", nil), http.StatusNotFound)
	})
}

func TestUsers_DeactivateErrConflict(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		admin, err := env.App.Auth.EnsureAdmin(ctx, apptest.AdminToken)
		require.NoError(t, err)
		t.Run("Yourself", func(t *testing.T) {
			p := requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/users/%d/deactivate", admin.ID), nil), http.StatusConflict)
			require.Contains(t, p.Detail, "yourself")
			require.Equal(t, http.StatusOK, env.Admin(http.MethodGet, "/api/v1/me", nil).Status)
		})
		t.Run("LastAdmin", func(t *testing.T) {
			// Two administrators deactivate each other at the same moment:
			// the one who comes second finds the other gone and is refused.
			second := createUser(t, env, "Второй администратор", "admin")
			secondTok := issueToken(t, env, second.ID, nil)
			require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/users/%d/deactivate", second.ID), nil).Status)
			// The second one's request had been let in before; its deactivation
			// of the first takes its turn now.
			_, err := env.App.Auth.DeactivateUser(ctx, admin.ID, auth.User{ID: second.ID, Name: second.Name, Role: auth.RoleAdmin})
			require.Equal(t, "conflict", apperr.Code(err), "%v", err)
			require.Contains(t, err.Error(), "last active administrator")
			// Any later request of theirs is refused at the door.
			p := requireProblem(t, env.Do(http.MethodPost, fmt.Sprintf("/api/v1/users/%d/deactivate", admin.ID), nil, secondTok.Token), http.StatusUnauthorized)
			require.Contains(t, p.Detail, "deactivated")
			require.Equal(t, http.StatusOK, env.Admin(http.MethodGet, "/api/v1/me", nil).Status, "the last administrator still works")
		})
	})
}

// A changed BOOTSTRAP_ADMIN_TOKEN retires the token of the old one; a
// revoked bootstrap token does not come back with a restart.
func TestAuth_BootstrapTokenRotation(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		const newToken = "rotated-admin-token-9876543210"
		env.App.Config.BootstrapAdminToken = newToken
		_, err := env.App.Bootstrap(ctx)
		require.NoError(t, err)

		requireUnauthorized(t, env, apptest.AdminToken, "this API token was revoked on ")
		me := env.Do(http.MethodGet, "/api/v1/me", nil, newToken).Map(t)
		require.Equal(t, auth.AdminName, me["name"])
		id := int64(me["id"].(float64))

		// Restarting with the same setting changes nothing.
		_, err = env.App.Bootstrap(ctx)
		require.NoError(t, err)
		r := env.Do(http.MethodGet, fmt.Sprintf("/api/v1/users/%d", id), nil, newToken)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var d userView
		r.JSON(t, &d)
		var live []tokenView
		for _, tk := range d.Tokens {
			require.True(t, tk.Bootstrap)
			if tk.Status == "active" {
				live = append(live, tk)
			}
		}
		require.Len(t, d.Tokens, 2)
		require.Len(t, live, 1, "one working bootstrap token")

		// The journal says so, with no actor: the system did it at start-up.
		var page struct{ Items []journalEntry }
		env.Do(http.MethodGet, "/api/v1/events?type=token.revoked", nil, newToken).JSON(t, &page)
		require.Len(t, page.Items, 1)
		require.Nil(t, page.Items[0].Actor)
		require.Equal(t, "bootstrap_replaced", page.Items[0].Payload["reason"])
		require.EqualValues(t, d.Tokens[0].ID, page.Items[0].Payload["token_id"])

		// Back to the old, revoked setting: it stays revoked and the service
		// still starts.
		env.App.Config.BootstrapAdminToken = apptest.AdminToken
		_, err = env.App.Bootstrap(ctx)
		require.NoError(t, err)
		_, err = env.App.Auth.EnsureAdmin(ctx, apptest.AdminToken)
		require.ErrorIs(t, err, auth.ErrBootstrapTokenRevoked)
		requireUnauthorized(t, env, apptest.AdminToken, "revoked")
		require.Equal(t, http.StatusOK, env.Do(http.MethodGet, "/api/v1/me", nil, newToken).Status)
	})
}

func TestAuth_ForbiddenNamesTheRoles(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		planner := env.UserToken("Ольга", "planner")
		viewer := env.UserToken("Пётр", "viewer")
		p := requireProblem(t, env.Do(http.MethodPost, "/api/v1/users", map[string]any{"name": "x", "role": "viewer"}, planner), http.StatusForbidden)
		require.Equal(t, "this needs the role admin; you are planner", p.Detail)
		p = requireProblem(t, env.Do(http.MethodPost, "/api/v1/work-centers", map[string]any{}, viewer), http.StatusForbidden)
		require.Equal(t, "this needs one of the roles admin, planner; you are viewer", p.Detail)
	})
}
