//! The event log, described: the change feed and audit trail.

use super::{Keys, Spec, read_answer};
use crate::openapi::build::{parameter as p, schema};

/// `Operation::ListEvents`.
pub(super) fn list_events() -> Spec {
    Spec {
        id: "listEvents",
        tag: "events",
        summary: "Follow the change feed",
        description: "The events after `after`, in the order the log keeps them, and the \
            `next` to ask with for the ones after those (the same `next` when there are none \
            yet). Every write appends its event in the same atomic change, so every \
            acknowledged write has exactly one event and none exists without its write; a \
            reader that follows `next` sees each event exactly once, also one whose write \
            finished after a later one started (the feed holds events back until every write \
            that started before them has finished). `resource=asset:{id}` is that asset's \
            history, with the key that made each change. Events are kept for the server's \
            retention (30 days by default).",
        keys: Keys::Required,
        parameters: vec![
            p("After"),
            p("EventTypeFilter"),
            p("Resource"),
            p("EventLimit"),
            p("IfNoneMatch"),
        ],
        body: None,
        answers: vec![("200", read_answer("A page of events.", schema("EventList")))],
        errors: &["BadRequest"],
    }
}
