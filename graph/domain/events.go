package domain

import "encoding/json"

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

// AsMap is v as the JSON object it encodes to.
func AsMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// JobBatch is how many rows a background job takes per round.
const JobBatch = 100
