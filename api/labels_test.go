package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// Labels asked for with Prefer: respond-async are drawn by a job: 202 at
// once, nothing drawn while the client waits; the job's document is the
// document the request would have answered (its bytes, media type and
// file name); what the request would refuse is refused before a job is
// queued; the document is there only once the job is done and until its
// retention ends.
func TestLabels_AsJob(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, ids := receiveOrder(t, env, map[string]any{"customer": map[string]any{"name": "Мария"}, "items": []line{{"SHK-KUPE-1600", 1}}})
		o := launch(t, env, map[string]any{"items": ids})
		path := fmt.Sprintf("/api/v1/production-orders/%d/labels?format=zpl&dpi=300", o.ID)
		now := env.Admin(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, now.Status, "%s", now.Body)
		require.Equal(t, 13, strings.Count(string(now.Body), "^XA"))

		r := env.Do(http.MethodGet, path, nil, apptest.AdminToken, "Prefer", "respond-async")
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		require.Equal(t, "respond-async", r.Header.Get("Preference-Applied"))
		loc := r.Header.Get("Location")
		var queued jobOf
		r.JSON(t, &queued)
		requireProblem(t, env.Admin(http.MethodGet, loc+"/document", nil), http.StatusConflict)
		j := runJob(t, env, r)
		require.Equal(t, "labels", j.Kind)
		require.Equal(t, "done", j.Status, "%+v", j.Error)
		require.Equal(t, map[string]int64{"labels": 13, "bytes": int64(len(now.Body))}, j.Result)
		require.Equal(t, loc+"/document", j.ResultURL)
		doc := env.Admin(http.MethodGet, j.ResultURL, nil)
		require.Equal(t, http.StatusOK, doc.Status, "%s", doc.Body)
		require.Equal(t, "application/zpl", doc.Header.Get("Content-Type"))
		require.Equal(t, now.Header.Get("Content-Disposition"), doc.Header.Get("Content-Disposition"))
		require.Equal(t, string(now.Body), string(doc.Body), "the job's document is the request's answer")

		// a PDF, A4 sheets: the job's document is one
		r = env.Do(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/labels?layout=a4", o.ID), nil, apptest.AdminToken, "Prefer", "respond-async")
		pdf := runJob(t, env, r)
		require.Equal(t, "done", pdf.Status, "%+v", pdf.Error)
		doc = env.Admin(http.MethodGet, pdf.ResultURL, nil)
		require.Equal(t, http.StatusOK, doc.Status, "%s", doc.Body)
		require.Equal(t, "application/pdf", doc.Header.Get("Content-Type"))
		require.Equal(t, fmt.Sprintf(`inline; filename="labels-%d-a4.pdf"`, o.ID), doc.Header.Get("Content-Disposition"))
		require.True(t, strings.HasPrefix(string(doc.Body), "%PDF-"))
		require.Equal(t, 1, strings.Count(string(doc.Body), "/Type /Page\n"), "13 labels on one A4 sheet")

		// refused before any job is queued
		for query, field := range map[string]string{"?layout=a5": "layout", "?format=xml": "format", "?format=zpl&dpi=600": "dpi", "?dpi=300": "dpi"} {
			requireProblem(t, env.Do(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d/labels%s", o.ID, query), nil,
				apptest.AdminToken, "Prefer", "respond-async"), http.StatusUnprocessableEntity, field)
		}
		requireProblem(t, env.Do(http.MethodGet, "/api/v1/production-orders/999999/labels", nil, apptest.AdminToken, "Prefer", "respond-async"), http.StatusNotFound)
		requireProblem(t, env.Do(http.MethodGet, "/api/v1/cutting-plans/999999/labels", nil, apptest.AdminToken, "Prefer", "respond-async"), http.StatusNotFound)
		var list struct{ Items []jobOf }
		env.Admin(http.MethodGet, "/api/v1/jobs?kind=labels", nil).JSON(t, &list)
		require.Len(t, list.Items, 2, "only the two jobs asked for rightly")

		// a job that makes no document has none; an unknown job neither
		rj := runJob(t, env, env.Do(http.MethodPost, "/api/v1/plan/replan", nil, apptest.AdminToken, "Prefer", "respond-async"))
		require.Empty(t, rj.ResultURL)
		requireProblem(t, env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/jobs/%d/document", rj.ID), nil), http.StatusNotFound)
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/jobs/999999/document", nil), http.StatusNotFound)

		// the maintenance job removes the documents past their retention;
		// the jobs stay
		n, err := env.App.Jobs.ExpireDocuments(context.Background(), time.Hour)
		require.NoError(t, err)
		require.Zero(t, n, "made just now")
		n, err = env.App.Jobs.ExpireDocuments(context.Background(), -time.Minute)
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		requireProblem(t, env.Admin(http.MethodGet, j.ResultURL, nil), http.StatusNotFound)
		var gone jobOf
		env.Admin(http.MethodGet, loc, nil).JSON(t, &gone)
		require.Equal(t, "done", gone.Status)
		require.Empty(t, gone.ResultURL)
	})
}
