extension TestServer {
    /// A request as observed by the server.
    ///
    /// Requests are recorded when their `.end` part arrives (i.e. once the full body has been
    /// read). The exceptions are `/drop` and `/malformed`, which are recorded as soon as their
    /// head arrives (with `bodyLength` 0), because the server closes the connection at that point.
    public struct RecordedRequest: Sendable, CustomStringConvertible {
        /// The request method, e.g. `"GET"`.
        public var method: String
        /// The raw request target as sent by the client, e.g. `"/echo/x?a=1"`.
        public var uri: String
        /// The path component of ``uri`` (everything before `?`), e.g. `"/echo/x"`.
        public var path: String
        /// The query component of ``uri`` (everything after the first `?`), or `nil` if absent.
        public var query: String?
        /// The request headers in their original order and case.
        public var headers: [(name: String, value: String)]
        /// The number of body bytes received.
        public var bodyLength: Int

        /// Creates a recorded request.
        public init(
            method: String,
            uri: String,
            path: String,
            query: String?,
            headers: [(name: String, value: String)],
            bodyLength: Int
        ) {
            self.method = method
            self.uri = uri
            self.path = path
            self.query = query
            self.headers = headers
            self.bodyLength = bodyLength
        }

        /// The first value of the header called `name` (compared case-insensitively), or `nil`.
        public func header(_ name: String) -> String? {
            let wanted = name.lowercased()
            return self.headers.first { $0.name.lowercased() == wanted }?.value
        }

        /// All values of the header called `name` (compared case-insensitively), in order.
        public func headerValues(_ name: String) -> [String] {
            let wanted = name.lowercased()
            return self.headers.filter { $0.name.lowercased() == wanted }.map(\.value)
        }

        /// A short human readable summary, e.g. `GET /echo (12 body bytes)`.
        public var description: String {
            "\(self.method) \(self.uri) (\(self.bodyLength) body bytes)"
        }
    }
}
