package api

import (
	"strconv"

	"github.com/tsekh/tsekh/internal/events"
)

// journalCSVHeader and journalCSVRow are the journal as CSV, with the columns
// of the old system's event-stream screen.
var journalCSVHeader = []string{"№", "Событие", "Объект", "Данные", "Создано", "Обработано", "Кто"}

func (s *server) journalCSVRow(e events.Entry) []string {
	const layout = "02.01.2006 15:04:05"
	processed := ""
	if e.ProcessedAt != nil {
		processed = e.ProcessedAt.UTC().Format(layout)
	}
	who := "—"
	if e.Actor != nil {
		who = e.Actor.Name
	}
	return []string{strconv.FormatInt(e.ID, 10), e.Type, e.Object, string(e.Payload), e.CreatedAt.UTC().Format(layout), processed, who}
}
