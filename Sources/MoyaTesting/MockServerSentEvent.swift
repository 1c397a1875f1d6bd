/// One server-sent event of a ``MockResponse/events(_:interval:status:)`` response.
public struct MockServerSentEvent: Sendable, Equatable {
    /// The `id:` field, or `nil` for none.
    public var id: String?
    /// The `event:` field, or `nil` for none (a client reads the type `message`).
    public var event: String?
    /// The data; each line becomes a `data:` line.
    public var data: String
    /// The `retry:` field in milliseconds, or `nil` for none.
    public var retry: Int?

    /// Creates an event.
    public init(id: String? = nil, event: String? = nil, data: String, retry: Int? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.retry = retry
    }

    /// The event in the `text/event-stream` format, blank line included.
    public var encoded: String {
        var text = ""
        if let id { text += "id: \(id)\n" }
        if let event { text += "event: \(event)\n" }
        if let retry { text += "retry: \(retry)\n" }
        for line in self.data.split(separator: "\n", omittingEmptySubsequences: false) {
            text += "data: \(line)\n"
        }
        return text + "\n"
    }
}
