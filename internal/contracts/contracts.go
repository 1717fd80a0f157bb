// Package contracts declares tsekh's event types: for each, its name, the
// module that owns it, the table of its objects, what it means and the Go
// type of its payload, from which its JSON Schema is generated. One file per
// owning module. The owner writes its events with Contract.New and every
// subscriber reads them with Contract.Decode, so modules meet through these
// types without importing each other. The package sits at the bottom of the
// import graph: it imports only internal/events.
//
// Evolution: within a type, changes are additive only (a new optional field,
// tagged omitempty); anything else is a new type name (docs/journal.md, "Events").
package contracts
