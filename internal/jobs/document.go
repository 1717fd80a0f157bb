package jobs

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// Document is a file a done job made (the labels of thousands of parts, a
// PDF), kept in jobs_documents, one a job, until ExpireDocuments removes
// it.
type Document struct {
	MediaType string
	Filename  string
	Body      []byte
}

// documentRow is a jobs_documents row.
type documentRow struct {
	JobID     int64 `gorm:"primaryKey"`
	MediaType string
	Filename  string
	Body      []byte
	CreatedAt time.Time
}

func (documentRow) TableName() string { return "jobs_documents" }

// FinishDocumentTx is FinishTx for a job whose work is a document: it
// stores the document and marks the job done with its result, inside tx.
func (p *Progress) FinishDocumentTx(ctx context.Context, tx *gorm.DB, result map[string]int64, d Document) error {
	if err := p.FinishTx(ctx, tx, result); err != nil {
		return err
	}
	r := documentRow{JobID: p.id, MediaType: d.MediaType, Filename: d.Filename, Body: d.Body}
	return tx.WithContext(ctx).Omit("CreatedAt").Create(&r).Error
}

// FinishDocument stores the document and marks the job done, in a
// transaction of its own.
func (p *Progress) FinishDocument(ctx context.Context, result map[string]int64, d Document) error {
	return database.Transaction(ctx, p.r.s.db, func(tx *gorm.DB) error {
		return p.FinishDocumentTx(ctx, tx, result, d)
	})
}

// Document returns the document the job made: ENOTFOUND for an unknown job,
// or one that made none or whose document has been removed, saying which;
// ECONFLICT for a job not done yet.
func (s *Service) Document(ctx context.Context, id int64) (Document, error) {
	j, err := s.Get(ctx, id)
	if err != nil {
		return Document{}, err
	}
	if j.Status != StatusDone {
		return Document{}, apperr.Conflict("job %d is %s: its document is there once it is done", id, j.Status)
	}
	var r documentRow
	err = s.db.WithContext(ctx).Where("job_id = ?", id).First(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Document{}, apperr.NotFound("job %d has no document: it made none, or it was removed after JOBS_DOCUMENT_RETENTION", id)
	}
	if err != nil {
		return Document{}, err
	}
	return Document{MediaType: r.MediaType, Filename: r.Filename, Body: r.Body}, nil
}

// HasDocument tells whether the done job's document is kept.
func (s *Service) HasDocument(ctx context.Context, id int64) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&documentRow{}).Where("job_id = ?", id).Count(&n).Error
	return n > 0, err
}

// documentExpiryBatch is how many documents ExpireDocuments removes a
// statement.
const documentExpiryBatch = 100

// ExpireDocuments removes the documents made more than retention ago, a
// batch a statement, and returns how many (the maintenance job's task
// expire_job_documents).
func (s *Service) ExpireDocuments(ctx context.Context, retention time.Duration) (int64, error) {
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		db := s.db.WithContext(ctx)
		res := db.Exec(database.DeleteBatch(db, "jobs_documents", "job_id", "created_at < "+database.NowPlus(db, -retention), "created_at"), documentExpiryBatch)
		total += res.RowsAffected
		if res.Error != nil || res.RowsAffected < documentExpiryBatch {
			return total, res.Error
		}
	}
}
