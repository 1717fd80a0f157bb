package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// Limits of catalog input; text lengths are in characters.
const (
	MaxNameLen = input.MaxName
	MaxCodeLen = input.MaxCode
	// MaxCapacityPerDay is a day's minutes: a centre of several machines
	// or teams working at once is one centre per machine or team.
	MaxCapacityPerDay = 24 * 60
	MaxHolidays       = 1000
)

// WorkCenterInput is the content of a work centre, for creating or replacing one.
type WorkCenterInput struct {
	Code              string   `json:"code" example:"CUT"`
	Name              string   `json:"name" example:"Раскрой"`
	CapacityMinPerDay int      `json:"capacity_min_per_day" example:"960"`
	ShiftStart        string   `json:"shift_start" example:"08:00"` // "" is DefaultShiftStart
	Calendar          Calendar `json:"calendar"`
}

// DefaultShiftStart is the shift start of a work centre that names none.
const DefaultShiftStart = "08:00"

// ShiftMinute returns the minute of the day an "HH:MM" shift start is
// (08:00 is 480), or false when it is not of that form (00:00 to 23:59).
func ShiftMinute(s string) (int, bool) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}

// Validate normalises the input and returns EINVALID naming every field at fault.
func (in *WorkCenterInput) Validate() error {
	var fields []apperr.FieldError
	in.Code = strings.TrimSpace(in.Code)
	in.Name = strings.TrimSpace(in.Name)
	fields = append(fields, input.RequiredLine("code", in.Code, MaxCodeLen)...)
	fields = append(fields, checkName("name", in.Name)...)
	if in.CapacityMinPerDay < 1 || in.CapacityMinPerDay > MaxCapacityPerDay {
		fields = append(fields, apperr.Field("capacity_min_per_day", "must be a whole number of minutes from 1 to %d", MaxCapacityPerDay))
	}
	in.ShiftStart = strings.TrimSpace(in.ShiftStart)
	if in.ShiftStart == "" {
		in.ShiftStart = DefaultShiftStart
	}
	if _, ok := ShiftMinute(in.ShiftStart); !ok {
		fields = append(fields, apperr.Field("shift_start", "must be a time of day HH:MM from 00:00 to 23:59, e.g. 08:00"))
	}
	if in.Calendar.Weekdays == nil {
		in.Calendar.Weekdays = IntList{1, 2, 3, 4, 5}
	}
	if len(in.Calendar.Weekdays) == 0 {
		fields = append(fields, apperr.Field("calendar.weekdays", "must list at least one working day"))
	}
	for i, d := range in.Calendar.Weekdays {
		if d < 1 || d > 7 {
			fields = append(fields, apperr.Field(fmt.Sprintf("calendar.weekdays[%d]", i), "must be an ISO weekday from 1 (Monday) to 7 (Sunday)"))
		} else if slices.Contains(in.Calendar.Weekdays[:i], d) {
			fields = append(fields, apperr.Field(fmt.Sprintf("calendar.weekdays[%d]", i), "repeats %d", d))
		}
	}
	if in.Calendar.Holidays == nil {
		in.Calendar.Holidays = StringList{}
	}
	if len(in.Calendar.Holidays) > MaxHolidays {
		fields = append(fields, apperr.Field("calendar.holidays", "must list at most %d days", MaxHolidays))
	}
	for i, h := range in.Calendar.Holidays {
		_, f := input.Date(fmt.Sprintf("calendar.holidays[%d]", i), h)
		if h == "" {
			f = []apperr.FieldError{apperr.Field(fmt.Sprintf("calendar.holidays[%d]", i), "must be a date of the form YYYY-MM-DD")}
		}
		fields = append(fields, f...)
	}
	if len(fields) > 0 {
		return apperr.Invalid("the work centre is not valid", fields...)
	}
	slices.Sort(in.Calendar.Weekdays)
	slices.Sort(in.Calendar.Holidays)
	in.Calendar.Holidays = slices.Compact(in.Calendar.Holidays)
	return nil
}

// checkName checks a required single-line name of at most MaxNameLen characters.
func checkName(field, name string) []apperr.FieldError {
	return input.RequiredLine(field, name, MaxNameLen)
}

// WorkCenters returns a page of work centres in id order.
func (s *Service) WorkCenters(ctx context.Context, pr page.Request) ([]WorkCenter, string, error) {
	var wcs []WorkCenter
	err := s.db.WithContext(ctx).Where("id > ?", pr.After).Order("id").Limit(pr.Limit + 1).Find(&wcs).Error
	if err != nil {
		return nil, "", err
	}
	wcs, next := page.Next(wcs, pr.Limit, func(w WorkCenter) int64 { return w.ID })
	return wcs, next, nil
}

// WorkCenter returns the work centre with the id, or ENOTFOUND.
func (s *Service) WorkCenter(ctx context.Context, id int64) (WorkCenter, error) {
	var wc WorkCenter
	err := s.db.WithContext(ctx).First(&wc, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return wc, apperr.NotFound("work centre %d does not exist", id)
	}
	return wc, err
}

// AllWorkCenters returns every work centre keyed by id, read through db
// (which may be the caller's transaction).
func AllWorkCenters(ctx context.Context, db *gorm.DB) (map[int64]WorkCenter, error) {
	var wcs []WorkCenter
	if err := db.WithContext(ctx).Order("id").Find(&wcs).Error; err != nil {
		return nil, err
	}
	out := make(map[int64]WorkCenter, len(wcs))
	for _, w := range wcs {
		out[w.ID] = w
	}
	return out, nil
}

// CreateWorkCenter validates and stores a work centre with its
// work_center.created event. It returns EINVALID for bad input and ECONFLICT
// when the code is taken.
func (s *Service) CreateWorkCenter(ctx context.Context, in WorkCenterInput) (WorkCenter, error) {
	if err := in.Validate(); err != nil {
		return WorkCenter{}, err
	}
	wc := WorkCenter{Code: in.Code, Name: in.Name, CapacityMinPerDay: in.CapacityMinPerDay, ShiftStart: in.ShiftStart, Calendar: in.Calendar}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := codeFree(ctx, tx, 0, in.Code); err != nil {
			return err
		}
		if err := tx.Omit("ID").Create(&wc).Error; err != nil {
			return codeTaken(err, in.Code)
		}
		return events.Add(ctx, tx, contracts.WorkCenterCreated.New(wc.ID, workCenterPayload(wc)))
	})
	return wc, err
}

// UpdateWorkCenter replaces the work centre's content and writes
// work_center.updated. It returns ENOTFOUND, EINVALID, or ECONFLICT when the
// code is another centre's. Production orders already launched keep their
// planned slots; new launches plan with the new capacity, shift and calendar,
// and a re-plan (POST /api/v1/plan/replan) moves the launched ones.
func (s *Service) UpdateWorkCenter(ctx context.Context, id int64, in WorkCenterInput) (WorkCenter, error) {
	if err := in.Validate(); err != nil {
		return WorkCenter{}, err
	}
	var wc WorkCenter
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.First(&wc, id).Error; errors.Is(err, gorm.ErrRecordNotFound) {
			return apperr.NotFound("work centre %d does not exist", id)
		} else if err != nil {
			return err
		}
		if in.Code != wc.Code {
			// A centre keeps the code it has, even one marked a duplicate;
			// a new code must be free, and frees it of the mark.
			if err := codeFree(ctx, tx, id, in.Code); err != nil {
				return err
			}
			wc.CodeDuplicate = false
		}
		wc.Code, wc.Name, wc.CapacityMinPerDay, wc.ShiftStart, wc.Calendar = in.Code, in.Name, in.CapacityMinPerDay, in.ShiftStart, in.Calendar
		if err := tx.Save(&wc).Error; err != nil {
			return codeTaken(err, in.Code)
		}
		return events.Add(ctx, tx, contracts.WorkCenterUpdated.New(wc.ID, workCenterPayload(wc)))
	})
	return wc, err
}

func codeTaken(err error, code string) error {
	if database.IsUniqueViolation(err) {
		return apperr.Conflict("a work centre with the code %q exists already (codes are one regardless of case)", code)
	}
	return err
}

// codeFree returns ECONFLICT when a work centre other than id has the code
// in any case ("cut" is "CUT"). Codes are compared with Unicode case folding
// here, so that both databases answer alike; the unique index on lower(code)
// (migration 00018) stops two requests that pass this check at once.
func codeFree(ctx context.Context, tx *gorm.DB, id int64, code string) error {
	var rows []struct {
		ID   int64
		Code string
	}
	if err := tx.WithContext(ctx).Table("catalog_work_centers").Select("id, code").Where("id <> ?", id).Find(&rows).Error; err != nil {
		return err
	}
	for _, r := range rows {
		if strings.EqualFold(r.Code, code) {
			return apperr.Conflict("work centre %d has the code %q already: codes are one regardless of case", r.ID, r.Code)
		}
	}
	return nil
}
