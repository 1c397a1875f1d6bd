/// One event of a `text/event-stream` body, as the WHATWG HTML standard's "Interpreting an event
/// stream" dispatches it.
///
/// ``ServerSentEventParser`` makes them. The properties keep the standard's meaning:
///
/// - ``event`` is `nil` when the event block set no event type (or set an empty one): the
///   standard's default type, `"message"`.
/// - ``id`` is the stream's *last event ID* when the event was dispatched, not only an `id` field
///   of this block: an ID persists from event to event until an `id` field changes it. The
///   standard keeps it as a string that starts empty and that an `id` field with an empty value
///   makes empty again; `nil` stands for that empty string, so the parser never makes an event
///   whose `id` is `""`. (Both cases mean the same to a client: no `Last-Event-ID` header is sent
///   when reconnecting.)
/// - ``retry`` is the reconnection time that a valid `retry` field of this event's block set.
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type; `nil` means the default type, `"message"`.
    public var event: String?
    /// The data: the values of the block's `data` fields joined with line feeds (U+000A), without
    /// a final line feed.
    public var data: String
    /// The last event ID when the event was dispatched; `nil` when it is empty (never set, or
    /// reset by an `id` field with an empty value).
    public var id: String?
    /// The reconnection time in milliseconds, when the event's block had a `retry` field whose
    /// value was all ASCII digits (the last such field if there were several); otherwise `nil`.
    public var retry: Int?

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - event: The event type; `nil` for the default type, `"message"`.
    ///   - data: The data.
    ///   - id: The last event ID; `nil` for none.
    ///   - retry: The reconnection time in milliseconds set by this event's block, if any.
    public init(event: String? = nil, data: String, id: String? = nil, retry: Int? = nil) {
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
    }
}
