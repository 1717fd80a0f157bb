package contracts

import "github.com/tsekh/tsekh/internal/events"

// The jobs module's event types: long work run in the background (a
// cutting plan), from queued to done, failed or cancelled, with its
// progress; every one is about a job (jobs_queue).
var (
	JobQueued = events.Declare[JobPayload]("job.queued", "jobs", "jobs_queue",
		"A job was queued: it waits for a free runner, in the order jobs were queued.")
	JobStarted = events.Declare[JobPayload]("job.started", "jobs", "jobs_queue",
		"A replica's runner started a job (again, after attempts > 1: the replica that ran it before stopped).")
	JobProgressed = events.Declare[JobPayload]("job.progressed", "jobs", "jobs_queue",
		"A running job reported its progress: a fraction of the work done and what it is doing.")
	JobCancelRequested = events.Declare[JobPayload]("job.cancel_requested", "jobs", "jobs_queue",
		"A running job was asked to stop: its runner cancels it at its next step.")
	JobRequeued = events.Declare[JobPayload]("job.requeued", "jobs", "jobs_queue",
		"A running job's lease ran out (the replica running it stopped): it waits again for a runner.")
	JobDone = events.Declare[JobPayload]("job.done", "jobs", "jobs_queue",
		"A job finished its work; its result names what it made.")
	JobFailed = events.Declare[JobPayload]("job.failed", "jobs", "jobs_queue",
		"A job failed, with the reason: the problem its work met, or its replica stopped while it ran once too often.")
	JobCancelled = events.Declare[JobPayload]("job.cancelled", "jobs", "jobs_queue",
		"A job was cancelled: before it started, or by its runner at a step once asked to stop; nothing of its work is kept.")
)

// JobPayload is the payload of every job.* event: the job as it then is.
type JobPayload struct {
	JobID    int64   `json:"job_id" jsonschema_description:"the job"`
	Kind     string  `json:"kind" jsonschema_description:"what the job does, e.g. cutting_plan"`
	Status   string  `json:"status" jsonschema:"enum=queued,enum=running,enum=done,enum=failed,enum=cancelled" jsonschema_description:"its state after the event"`
	Progress float64 `json:"progress" jsonschema:"minimum=0,maximum=1" jsonschema_description:"the fraction of its work done"`
	Message  string  `json:"message,omitempty" jsonschema_description:"what it is doing, or why it stopped"`
	Attempts int     `json:"attempts" jsonschema:"minimum=0" jsonschema_description:"how many times a runner started it"`
	// Result names what a done job made, e.g. {"plan_id": 7}, or
	// {"labels": 4680, "bytes": 3932160} for a labels job's document.
	Result map[string]int64 `json:"result,omitempty" jsonschema_description:"what a done job made, e.g. plan_id; labels and bytes for a labels job's document"`
}
