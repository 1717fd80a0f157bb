package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/cutplan"
	"github.com/tsekh/tsekh/internal/jobs"
	"github.com/tsekh/tsekh/internal/labels"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// JobView is a background job as the API shows it: its state, progress
// and, once done, where its result is (and, for a cutting plan, the plan).
type JobView struct {
	jobs.Job
	// ResultURL is where a done job's result is, e.g. /api/v1/cutting-plans/7,
	// or /api/v1/jobs/8/document for a labels job's document.
	ResultURL string `json:"result_url,omitempty" example:"/api/v1/cutting-plans/7"`
	// Plan is a done cutting_plan job's plan, with its sheets.
	Plan *cutplan.Plan `json:"plan,omitempty" extensions:"x-nullable"`
}

// JobList is a page of jobs.
type JobList = List[jobs.Job]

// queueJob queues a job and answers 202 with its location.
func (s *server) queueJob(c echo.Context, kind string, input any) error {
	j, err := s.Jobs.Enqueue(c.Request().Context(), kind, input)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, fmt.Sprintf("/api/v1/jobs/%d", j.ID))
	return c.JSON(http.StatusAccepted, JobView{Job: j})
}

// getJob godoc
//
//	@Summary	A background job: its state, progress and result
//	@ID			getJob
//	@Description	status queued (waiting, in the order queued, for one of the JOBS_CONCURRENCY runners of a replica), running (progress, a fraction from 0 to 1, and message say how far), done (result names what it made: plan_id for a cutting_plan job, whose plan is given in full as plan, result_url where it lives; labels and bytes for a labels job, its document at result_url while it is kept), failed (error: the problem's code, detail and fields), or cancelled. A job whose replica stopped while it ran is queued again when its lease (JOBS_LEASE) runs out, and failed with the reason after two starts. Each change is a job.* event in the journal and its stream.
//	@Tags		jobs
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"job id"	minimum(1) example(1)
//	@Success	200	{object}	JobView
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/jobs/{id} [get]
func (s *server) getJob(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	j, err := s.Jobs.Get(ctx, id)
	if err != nil {
		return err
	}
	v := JobView{Job: j}
	if planID, ok := j.Result["plan_id"]; ok && j.Kind == cutplan.JobKind && j.Status == jobs.StatusDone {
		p, err := s.CutPlans.Get(ctx, planID)
		if err != nil {
			return err
		}
		v.Plan, v.ResultURL = &p, "/api/v1/cutting-plans/"+strconv.FormatInt(planID, 10)
	}
	if j.Kind == labels.JobKind && j.Status == jobs.StatusDone {
		kept, err := s.Jobs.HasDocument(ctx, id)
		if err != nil {
			return err
		}
		if kept {
			v.ResultURL = fmt.Sprintf("/api/v1/jobs/%d/document", id)
		}
	}
	return c.JSON(http.StatusOK, v)
}

// getJobDocument godoc
//
//	@Summary	The document a done job made (a labels job's PDF or ZPL)
//	@ID			getJobDocument
//	@Description	The file as the request that queued the job would have answered it: its media type (application/pdf, application/zpl) and file name (Content-Disposition). Kept JOBS_DOCUMENT_RETENTION after the job is done (7 days by default), then removed by the maintenance job. 409 for a job not done yet (queued, running, failed or cancelled: see getJob); 404 for an unknown job, one that makes no document, or one whose document was removed.
//	@Tags		jobs
//	@Produce	application/pdf
//	@Produce	application/zpl
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"job id"	minimum(1) example(2)
//	@Success	200	{string}	string	"the document"
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	409	{object}	Problem	"the job is not done"
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/jobs/{id}/document [get]
func (s *server) getJobDocument(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	doc, err := s.Jobs.Document(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return sendDocument(c, doc)
}

// listJobs godoc
//
//	@Summary	Background jobs, newest first
//	@ID			listJobs
//	@Description	Every job with its state and progress (without a done job's plan: see getJob).
//	@Tags		jobs
//	@Produce	json
//	@Security	BearerAuth
//	@Param		kind	query		string	false	"only jobs of this kind"	Enums(cutting_plan, replan, labels) example(cutting_plan)
//	@Param		limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9qb2JzIiwiaWQiOjF9)
//	@Success	200		{object}	JobList
//	@Failure	400		{object}	Problem
//	@Failure	401		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/jobs [get]
func (s *server) listJobs(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	kind := c.QueryParam("kind")
	if kind != "" && kind != cutplan.JobKind && kind != plan.ReplanJobKind && kind != labels.JobKind {
		return apperr.Invalid("invalid query", apperr.Field("kind", "must be %s, %s or %s", cutplan.JobKind, plan.ReplanJobKind, labels.JobKind))
	}
	js, next, err := s.Jobs.List(c.Request().Context(), kind, pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, js, next))
}

// cancelJob godoc
//
//	@Summary		Cancel a background job (admin, planner)
//	@ID			cancelJob
//	@Description	A queued job is cancelled at once (job.cancelled) and never runs; a running one is asked to stop (cancel_requested, job.cancel_requested) and its runner cancels it at its next step (a cutting plan: before its next board), storing nothing. 409 for a job done, failed or cancelled already.
//	@Tags			jobs
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		int	true	"job id"	minimum(1) example(1)
//	@Success		200	{object}	JobView
//	@Failure		401	{object}	Problem
//	@Failure		403	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Failure		409	{object}	Problem	"the job has ended already"
//	@Failure		422	{object}	Problem
//	@Router			/api/v1/jobs/{id}/cancel [post]
func (s *server) cancelJob(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	j, err := s.Jobs.Cancel(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, JobView{Job: j})
}
