// Package api is tsekh's HTTP layer: Echo routes, middleware, one error
// handler that writes RFC 9457 problems, and one file per resource with its
// handlers and their request and response types.
//
//	@title						tsekh API
//	@version					1.0
//	@description				Order-to-production service of a furniture factory: sales orders, production orders and the journal of every event, dispatched through a transactional outbox.
//	@description				Every error is an RFC 9457 application/problem+json document. Lists use keyset pagination: `limit` (default 50, at most 500) and the opaque `cursor` returned as `next_cursor`; a cursor sent to another list or sort is a 422 naming cursor. Any request may get a 406 (an Accept header, read with its q-values, that allows none of the media types the operation answers in), a 431 (headers over 64 KiB) or a 422 naming a member the body does not have (member names are case-sensitive), a member it has twice, a query parameter given twice, or a whole number beyond its column (-2147483648 to 2147483647, but ids).
//	@description				OpenAPI 3.1, the contract clients generate from: [/openapi.json](/openapi.json). Swagger 2.0, for older tools and the Swagger UI: [/swagger/doc.json](/swagger/doc.json).
//	@BasePath					/
//	@contact.name				tsekh engineers
//	@license.name				Proprietary
//	@license.url				https://github.com/tsekh/tsekh#license
//	@tag.name					sales
//	@tag.description			Sales orders and their items: manual orders, the shop's webhook, the CRM import, the order life cycle.
//	@tag.name					plan
//	@tag.description			Production planning: the backlog, production orders, the shop floor and the schedule.
//	@tag.name					catalog
//	@tag.description			Work centres, route templates and products with their parts.
//	@tag.name					events
//	@tag.description			The journal of events, their deliveries to subscribers, event types and subscribers.
//	@tag.name					auth
//	@tag.description			The caller, users and API tokens.
//	@tag.name					purchasing
//	@tag.description			Suppliers and their terms, purchase orders, proposals of what to buy.
//	@tag.name					stock
//	@tag.description			Stock per material, receipts, counts, requirements and shortages.
//	@tag.name					cutting
//	@tag.description			Cutting plans: production orders' parts laid out on sheets and offcuts, drawn for the saw, reported cut.
//	@tag.name					jobs
//	@tag.description			Long work in the background (a cutting plan): its state, progress and result; cancel.
//	@tag.name					operations
//	@tag.description			Health, readiness and the OpenAPI document.
//	@securityDefinitions.apikey	BearerAuth
//	@in							header
//	@name						Authorization
//	@description				An API token, sent as "Bearer <token>".
package api

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	echoSwagger "github.com/swaggo/echo-swagger"
	"gorm.io/gorm"

	_ "github.com/tsekh/tsekh/docs" // the generated OpenAPI document
	"github.com/tsekh/tsekh/internal/auth"
	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/cutplan"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/jobs"
	"github.com/tsekh/tsekh/internal/labels"
	"github.com/tsekh/tsekh/internal/plan"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/purchasing"
	"github.com/tsekh/tsekh/internal/sales"
	"github.com/tsekh/tsekh/internal/stock"
)

// MaxBodyBytes is the largest request body accepted: 1 MiB.
const MaxBodyBytes = 1 << 20

// Deps is what the HTTP layer needs.
type Deps struct {
	DB      *gorm.DB
	Auth    *auth.Service
	Catalog *catalog.Service
	Stock   *stock.Service
	// Purchasing keeps suppliers and purchase orders.
	Purchasing *purchasing.Service
	Sales      *sales.Service
	Plan       *plan.Service
	Floor      *floor.Service
	CutPlans   *cutplan.Service
	Jobs       *jobs.Service
	Journal    *events.Journal
	Registry   *events.Registry
	// Metrics is served at /metrics to administrators (bearer token); nil:
	// not on this app (METRICS_ADDR serves it on a listener of its own, see
	// MetricsHandler).
	Metrics  prometheus.Gatherer
	Logger   *slog.Logger
	OnCommit func() // called after a request that may have written (any but GET, HEAD or OPTIONS that succeeded)
	// ShopWebhookSecret signs the shop's webhook deliveries; empty: the
	// webhook answers 503 (not configured).
	ShopWebhookSecret string
	// AsyncAPI is the AsyncAPI document of the events, served at
	// /asyncapi.json; nil: not served.
	AsyncAPI []byte
	// RequestTimeout is the longest a request may take
	// (HTTP_REQUEST_TIMEOUT; 0: 30s).
	RequestTimeout time.Duration
	// TimeZone is the factory's (FACTORY_TIMEZONE), in which the journal's
	// CSV writes its times; nil: UTC.
	TimeZone *time.Location
	// Stream serves GET /api/v1/events/stream; nil: that route answers 503.
	Stream *events.Stream
	// StreamHeartbeat is how often an idle stream sends a comment line
	// (EVENTS_STREAM_HEARTBEAT); 0: DefaultStreamHeartbeat.
	StreamHeartbeat time.Duration
	// Labels makes the labels of parts and offcuts, at the size
	// LABEL_SIZE_MM gives.
	Labels *labels.Service
}

type server struct {
	Deps
	ready *database.Readiness
}

// New returns the Echo app with every route.
func New(d Deps) *echo.Echo {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	s := &server{Deps: d, ready: database.NewReadiness(d.DB)}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(d.Logger)
	e.JSONSerializer = jsonSerializer{}
	e.Pre(recoverPanics(d.Logger))
	e.Pre(headLikeGet)
	e.Pre(limitHeaders)
	e.Use(hardeningHeaders)
	e.Use(requestID)
	e.Use(traceRequests)
	e.Use(s.logRequests)
	e.Use(s.boundRequest)
	e.Use(limitBody)
	e.Use(checkParams)
	if d, err := declaredContract(); err == nil {
		e.Use(d.query.onlyDeclaredQuery)
		e.Use(d.negotiate)
	} else {
		s.Logger.Error("the OpenAPI document cannot be read; query parameters and Accept are not checked against it", "err", err)
	}
	e.Use(s.afterWrite)

	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/swagger/*", swaggerUI)
	e.GET("/openapi.json", s.openAPI)
	if d.AsyncAPI != nil {
		e.GET("/asyncapi.json", s.asyncAPI)
	}

	// Routes under /api/v1 take the authenticate middleware one by one: a
	// group-level middleware would answer 404 instead of 405 for a known
	// path with the wrong method.
	v1 := e.Group("/api/v1")
	authed := func(roles ...string) []echo.MiddlewareFunc {
		if len(roles) == 0 {
			return []echo.MiddlewareFunc{s.authenticate}
		}
		return []echo.MiddlewareFunc{s.authenticate, requireRole(roles...)}
	}
	if d.Metrics != nil {
		// Whoever reaches the API port may not read the metrics: they name
		// subscribers, volumes and the process. METRICS_ADDR serves them on
		// an address of their own instead.
		e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(d.Metrics, promhttp.HandlerOpts{})), authed(auth.RoleAdmin)...)
	}
	v1.GET("/me", s.me, authed()...)
	v1.GET("/users", s.listUsers, authed(auth.RoleAdmin)...)
	v1.POST("/users", s.createUser, authed(auth.RoleAdmin)...)
	v1.GET("/users/:id", s.getUser, authed(auth.RoleAdmin)...)
	v1.POST("/users/:id/deactivate", s.deactivateUser, authed(auth.RoleAdmin)...)
	v1.POST("/users/:id/tokens", s.issueToken, authed(auth.RoleAdmin)...)
	v1.DELETE("/users/:id/tokens/:token_id", s.revokeToken, authed(auth.RoleAdmin)...)

	v1.GET("/work-centers", s.listWorkCenters, authed()...)
	v1.POST("/work-centers", s.createWorkCenter, authed(auth.RolePlanner)...)
	v1.GET("/work-centers/:id", s.getWorkCenter, authed()...)
	v1.PUT("/work-centers/:id", s.updateWorkCenter, authed(auth.RolePlanner)...)
	v1.GET("/routes", s.listRoutes, authed()...)
	v1.POST("/routes", s.createRoute, authed(auth.RolePlanner)...)
	v1.GET("/routes/:id", s.getRoute, authed()...)
	v1.PUT("/routes/:id", s.updateRoute, authed(auth.RolePlanner)...)
	v1.GET("/products", s.listProducts, authed()...)
	v1.POST("/products", s.createProduct, authed(auth.RolePlanner)...)
	v1.GET("/products/:id", s.getProduct, authed()...)
	v1.PUT("/products/:id", s.updateProduct, authed(auth.RolePlanner)...)
	v1.GET("/materials", s.listMaterials, authed()...)
	v1.POST("/materials", s.createMaterial, authed(auth.RolePlanner)...)
	v1.GET("/materials/requirements", s.getRequirements, authed()...)
	v1.GET("/materials/shortages", s.getShortages, authed()...)
	v1.GET("/stock", s.listStock, authed()...)
	v1.POST("/stock/receipts", s.receiveStock, authed(auth.RolePlanner, auth.RoleBuyer)...)
	v1.POST("/stock/counts", s.countStock, authed(auth.RolePlanner, auth.RoleBuyer)...)
	v1.POST("/stock/write-offs", s.writeOffStock, authed(auth.RolePlanner)...)
	v1.GET("/suppliers", s.listSuppliers, authed()...)
	v1.POST("/suppliers", s.createSupplier, authed(auth.RolePlanner, auth.RoleBuyer)...)
	v1.GET("/suppliers/:id", s.getSupplier, authed()...)
	v1.PUT("/suppliers/:id", s.updateSupplier, authed(auth.RolePlanner, auth.RoleBuyer)...)
	v1.GET("/purchase-orders", s.listPurchaseOrders, authed()...)
	v1.POST("/purchase-orders", s.createPurchaseOrder, authed(auth.RolePlanner, auth.RoleBuyer)...)
	v1.GET("/purchase-orders/:id", s.getPurchaseOrder, authed()...)
	v1.PUT("/purchase-orders/:id", s.updatePurchaseOrder, authed(auth.RolePlanner, auth.RoleBuyer)...)
	v1.POST("/purchase-orders/:id/order", s.placePurchaseOrder, authed(auth.RolePlanner, auth.RoleBuyer)...)
	v1.POST("/purchase-orders/:id/cancel", s.cancelPurchaseOrder, authed(auth.RolePlanner, auth.RoleBuyer)...)
	v1.GET("/purchase-proposals", s.listPurchaseProposals, authed()...)
	v1.POST("/purchase-proposals/orders", s.draftPurchaseProposals, authed(auth.RolePlanner, auth.RoleBuyer)...)
	v1.GET("/stock/offcuts", s.listOffcuts, authed()...)
	v1.GET("/stock/offcuts/:code", s.getOffcut, authed()...)
	v1.GET("/stock/offcuts/:code/label", s.getOffcutLabel, authed()...)
	v1.POST("/cutting-plans", s.createCuttingPlan, authed(auth.RolePlanner)...)
	v1.GET("/cutting-plans", s.listCuttingPlans, authed()...)
	v1.GET("/cutting-plans/:id", s.getCuttingPlan, authed()...)
	v1.POST("/cutting-plans/:id/rebuild", s.rebuildCuttingPlan, authed(auth.RolePlanner)...)
	v1.GET("/jobs", s.listJobs, authed()...)
	v1.GET("/jobs/:id", s.getJob, authed()...)
	v1.GET("/jobs/:id/document", s.getJobDocument, authed()...)
	v1.POST("/jobs/:id/cancel", s.cancelJob, authed(auth.RolePlanner)...)
	v1.GET("/cutting-plans/:id/labels", s.getCuttingPlanLabels, authed()...)
	v1.GET("/cutting-plans/:id/sheets/:n", s.getCuttingSheet, authed()...)
	v1.POST("/cutting-plans/:id/sheets/:n/cut", s.cutCuttingSheet, authed(auth.RolePlanner, auth.RoleMaster)...)
	v1.GET("/materials/:id", s.getMaterial, authed()...)
	v1.PUT("/materials/:id", s.updateMaterial, authed(auth.RolePlanner)...)

	v1.POST("/orders", s.createOrder, authed(auth.RoleManager)...)
	v1.GET("/orders", s.listOrders, authed()...)
	v1.GET("/orders/:id", s.getOrder, authed()...)
	v1.GET("/orders/:id/history", s.getOrderHistory, authed()...)
	v1.PATCH("/orders/:id", s.changeOrder, authed(auth.RoleManager)...)
	v1.POST("/orders/:id/cancel", s.cancelOrder, authed(auth.RoleManager)...)
	v1.POST("/orders/:id/shipments", s.shipOrder, authed(auth.RoleManager)...)
	v1.DELETE("/orders/:id/attention", s.clearAttention, authed(auth.RoleManager)...)
	v1.POST("/webhooks/shop/orders", s.shopWebhook()) // authenticated by its signature
	v1.POST("/imports/crm/orders", s.importCRMOrders, authed(auth.RoleManager)...)
	v1.GET("/intake/rejections", s.listRejections, authed(auth.RoleManager)...)
	v1.GET("/intake/rejections/:id", s.getRejection, authed(auth.RoleManager)...)
	v1.POST("/intake/rejections/:id/retry", s.retryRejection, authed(auth.RoleManager)...)
	v1.POST("/intake/rejections/:id/dismiss", s.dismissRejection, authed(auth.RoleManager)...)
	v1.PUT("/intake/rejections/:id/body", s.editRejection, authed(auth.RoleManager)...)

	v1.GET("/plan/backlog", s.listBacklog, authed()...)
	v1.POST("/plan/quote", s.quote, authed()...)
	v1.GET("/plan/schedule", s.getSchedule, authed()...)
	v1.POST("/plan/replan", s.replan, authed(auth.RolePlanner)...)
	v1.POST("/production-orders", s.launchProdOrder, authed(auth.RolePlanner)...)
	v1.GET("/production-orders", s.listProdOrders, authed()...)
	v1.GET("/production-orders/:id", s.getProdOrder, authed()...)
	v1.GET("/production-orders/cutting-list", s.getCuttingLists, authed()...)
	v1.GET("/production-orders/:id/cutting-list", s.getCuttingList, authed()...)
	v1.PATCH("/production-orders/:id", s.changeProdOrder, authed(auth.RolePlanner)...)
	v1.POST("/production-orders/:id/operations/:op_id/start", s.startOperation, authed(auth.RolePlanner, auth.RoleMaster)...)
	v1.POST("/production-orders/:id/operations/:op_id/complete", s.completeOperation, authed(auth.RolePlanner, auth.RoleMaster)...)
	v1.POST("/production-orders/:id/progress", s.reportProgress, authed(auth.RolePlanner, auth.RoleMaster)...)
	v1.POST("/production-orders/:id/cancel", s.cancelProdOrder, authed(auth.RolePlanner)...)
	v1.POST("/production-orders/:id/close", s.closeProdOrder, authed(auth.RolePlanner)...)
	v1.GET("/production-orders/:id/parts", s.listParts, authed()...)
	v1.GET("/production-orders/:id/labels", s.getLabels, authed()...)
	v1.POST("/floor/scans", s.scan, authed(auth.RolePlanner, auth.RoleMaster)...)
	v1.POST("/floor/scrap", s.scrapPart, authed(auth.RolePlanner, auth.RoleMaster)...)
	v1.GET("/floor/recuts", s.listRecuts, authed()...)
	v1.GET("/floor/scrap-reasons", s.listScrapReasons, authed()...)

	v1.GET("/events", s.listEvents, authed()...)
	v1.GET("/events/stream", s.streamEvents, authed()...)
	v1.GET("/events/:id", s.getEvent, authed()...)
	v1.POST("/events/:id/retry", s.retryEvent, authed(auth.RoleAdmin)...)
	v1.GET("/event-types", s.listEventTypes, authed()...)
	v1.GET("/subscribers", s.listSubscribers, authed()...)
	v1.POST("/subscribers/:name/replay", s.replaySubscriber, authed(auth.RoleAdmin)...)
	v1.DELETE("/subscribers/:name", s.retireSubscriber, authed(auth.RoleAdmin)...)
	return e
}

// MetricsHandler serves the metrics at /metrics and nothing else, for a
// listener of their own (METRICS_ADDR) that only the monitoring reaches.
func MetricsHandler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	return hardeningHeadersHandler(mux)
}

// The headers every response carries: the body is what its Content-Type
// says (no sniffing), and no page of tsekh (the Swagger UI) may be framed.
func setHardeningHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
}

func hardeningHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		setHardeningHeaders(c.Response().Header())
		return next(c)
	}
}

func hardeningHeadersHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setHardeningHeaders(w.Header())
		next.ServeHTTP(w, r)
	})
}

// MaxHeaderBytes bounds a request's line and headers: the app answers a
// request over it with a 431 problem+json (limitHeaders). The server itself
// reads up to ServerMaxHeaderBytes before it gives up and answers 431 in
// plain text, as net/http does before any handler runs.
const (
	MaxHeaderBytes       = 64 << 10
	ServerMaxHeaderBytes = 1 << 20
)

// HTTPServer wraps the app in an http.Server with timeouts, so that slow or
// stalled clients cannot hold connections for ever; the response may be
// written until 30s after the request timeout (0: 30s).
func HTTPServer(addr string, h http.Handler, requestTimeout time.Duration) *http.Server {
	if requestTimeout <= 0 {
		requestTimeout = 30 * time.Second
	}
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      requestTimeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    ServerMaxHeaderBytes,
	}
}

// limitHeaders answers a request whose line and headers are over
// MaxHeaderBytes with a 431 problem+json: net/http's own limit
// (ServerMaxHeaderBytes) is set higher so that the app, not the server's
// plain-text answer, refuses what is between the two.
func limitHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		n := len(req.Method) + len(req.RequestURI) + len(req.Proto) + 4
		for name, values := range req.Header {
			for _, v := range values {
				n += len(name) + len(v) + 4
			}
		}
		n += len(req.Host) + 8
		if n > MaxHeaderBytes {
			return apperr.Errorf(apperr.EHEADERS, "the request's line and headers are about %d bytes, over the %d bytes (64 KiB) allowed", n, MaxHeaderBytes)
		}
		return next(c)
	}
}

func (s *server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		req, res := c.Request(), c.Response()
		level := slog.LevelInfo
		if res.Status >= 500 {
			level = slog.LevelError
		}
		s.Logger.LogAttrs(req.Context(), level, "request",
			slog.String("request_id", res.Header().Get(echo.HeaderXRequestID)),
			slog.String("method", methodOf(c)), slog.String("path", req.URL.Path),
			slog.Int("status", res.Status), slog.Int64("bytes", res.Size),
			slog.Duration("took", time.Since(start)))
		return nil
	}
}

// headKey marks a HEAD request served by the route's GET handler.
const headKey = "tsekh.head"

// headLikeGet lets every GET route answer HEAD (RFC 9110): the request is
// routed and handled as a GET whose body is dropped, so the status and
// headers are those of the GET. The method is HEAD again once the handler is
// done, so that the server sends no Content-Length of the dropped body.
func headLikeGet(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Method != http.MethodHead {
			return next(c)
		}
		req.Method = http.MethodGet
		defer func() { req.Method = http.MethodHead }()
		c.Response().Writer = bodyless{c.Response().Writer}
		c.Set(headKey, true)
		return next(c)
	}
}

// methodOf is the request's method as the client sent it (HEAD for a HEAD
// handled as a GET).
func methodOf(c echo.Context) string {
	if head, _ := c.Get(headKey).(bool); head {
		return http.MethodHead
	}
	return c.Request().Method
}

// bodyless is a response writer that drops the body.
type bodyless struct{ http.ResponseWriter }

func (b bodyless) Write(p []byte) (int, error) { return len(p), nil }

// Unwrap lets http.ResponseController reach the connection's writer.
func (b bodyless) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// maxRequestID is the longest X-Request-Id taken from a client.
const maxRequestID = 128

// requestID names every request: a client's X-Request-Id when it is one
// short, plain token (at most 128 of A-Z, a-z, 0-9, '.', '_', '-'), otherwise
// a new one. It is sent back in X-Request-Id and logged.
func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ids := c.Request().Header.Values(echo.HeaderXRequestID)
		id := ""
		if len(ids) == 1 && plainRequestID(ids[0]) {
			id = ids[0]
		} else {
			id = rand.Text()
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

func plainRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '.', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

// limitBody refuses a request body over MaxBodyBytes with 413: at once when
// its Content-Length says so, and while it is read when it is sent in chunks
// (readBody turns the reader's error into the problem).
func limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.ContentLength > MaxBodyBytes {
			return errTooLarge()
		}
		req.Body = http.MaxBytesReader(c.Response(), req.Body, MaxBodyBytes)
		return next(c)
	}
}

// boundRequest gives the request's context (which ends when its client goes
// away, and reaches every statement) a deadline: a little before the
// request timeout, so that a statement cut off at it, which may take up to
// database.CancelGrace to return on a silent link, is still answered, with
// 503 and Retry-After, within the timeout.
func (s *server) boundRequest(next echo.HandlerFunc) echo.HandlerFunc {
	timeout := s.RequestTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	budget := max(timeout-database.CancelGrace-250*time.Millisecond, timeout/2)
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), budget)
		defer cancel()
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}

// afterWrite tells the dispatcher that a write has committed.
func (s *server) afterWrite(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		m := c.Request().Method
		if err == nil && s.OnCommit != nil && m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions {
			s.OnCommit()
		}
		return err
	}
}

// healthz godoc
//
//	@Summary	Liveness: the process answers
//	@ID		healthz
//	@Description	Always 200 while the process runs. Public: no token. Like every request, one with a body over 1 MiB is refused (413).
//	@Tags		operations
//	@Produce	json
//	@Security
//	@Success	200	{object}	Status
//	@Failure	413	{object}	Problem
//	@Router		/healthz [get]
func (s *server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, Status{Status: "ok"})
}

// readyz godoc
//
//	@Summary	Readiness: the database answers and every migration is applied
//	@ID		readyz
//	@Description	503 while the database is unreachable, does not answer within half a second, or migrations are pending: the answer comes within a second whatever the database does. Public: no token. Like every request, one with a body over 1 MiB is refused (413).
//	@Tags		operations
//	@Produce	json
//	@Security
//	@Success	200	{object}	Status
//	@Failure	413	{object}	Problem
//	@Failure	503	{object}	Problem
//	@Router		/readyz [get]
func (s *server) readyz(c echo.Context) error {
	// The check runs aside: on a silent link its statements return only
	// database.CancelGrace after their context ends, and a load balancer
	// asking for readiness must hear within a second.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), readyWait)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		done <- s.ready.Check(ctx)
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(readyWait):
		err = errors.New("the database did not answer within " + readyWait.String())
	}
	if err != nil {
		return &apperr.Error{Code: apperr.EUNAVAILABLE, Message: "not ready: " + err.Error(), Err: err}
	}
	return c.JSON(http.StatusOK, Status{Status: "ready"})
}

// readyWait is how long /readyz waits for the database.
const readyWait = 500 * time.Millisecond

// Status is the body of the health endpoints.
type Status struct {
	Status string `json:"status" validate:"required" example:"ok"`
}

func jsonEncode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// swaggerMu makes swaggerUI serve one request at a time: swag's ReadDoc
// rewrites the document's description on every read (swaggo/swag v1.16.6,
// spec.go), a data race between two requests for /swagger/doc.json.
var swaggerMu sync.Mutex

// swaggerUI serves the Swagger UI and the Swagger 2.0 document it reads.
func swaggerUI(c echo.Context) error {
	swaggerMu.Lock()
	defer swaggerMu.Unlock()
	return echoSwagger.WrapHandler(c)
}
