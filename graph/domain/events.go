package domain

// Notification types.
const (
	EventCreated     = "appointment.created"
	EventCancelled   = "appointment.cancelled"
	EventRescheduled = "appointment.rescheduled"
	EventReminder    = "appointment.reminder"
	EventCompleted   = "appointment.completed"
	EventNoShow      = "appointment.no_show"
)

// EventTypes are the notification types, in the order of rest-v1.md.
var EventTypes = []string{EventCreated, EventRescheduled, EventCancelled, EventReminder, EventCompleted, EventNoShow}

// JobBatch is how many rows a background job takes per round.
const JobBatch = 100
