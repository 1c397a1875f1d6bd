import Foundation

/// One recorded exchange: the request as it was sent and the response that came back, secrets
/// hidden (see ``CassetteRecorder``).
public struct CassetteInteraction: Codable, Sendable, Equatable {
    /// A recorded request.
    public struct Request: Codable, Sendable, Equatable {
        /// The HTTP method, in upper case (`GET`).
        public var method: String

        /// The full URL, with the values of secret query parameters hidden (`token=***`).
        public var url: String

        /// The request's own headers (those of its `URLRequest`, after every plugin's
        /// `prepare`; not those the session adds), secret values hidden.
        public var headers: [String: String]

        /// The body; `nil` when the request had none (or streamed one from a file or a
        /// multipart form, which the `URLRequest` does not hold).
        public var body: CassetteBody?

        /// Creates a recorded request.
        ///
        /// - Parameters:
        ///   - method:  The HTTP method.
        ///   - url:     The full URL.
        ///   - headers: The headers.
        ///   - body:    The body, if any.
        public init(method: String, url: String, headers: [String: String] = [:], body: CassetteBody? = nil) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
        }
    }

    /// A recorded response.
    public struct Response: Codable, Sendable, Equatable {
        /// The HTTP status code.
        public var status: Int

        /// The response headers, secret values hidden.
        public var headers: [String: String]

        /// The body; `nil` when it was empty.
        public var body: CassetteBody?

        /// Creates a recorded response.
        ///
        /// - Parameters:
        ///   - status:  The HTTP status code.
        ///   - headers: The headers.
        ///   - body:    The body, if any.
        public init(status: Int, headers: [String: String] = [:], body: CassetteBody? = nil) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// The request as it was sent.
    public var request: Request

    /// The response that came back.
    public var response: Response

    /// When the exchange was recorded (to the second); `nil` when not known. Replaying
    /// ignores it.
    public var recordedAt: Date?

    /// For a WebSocket handshake (a `101`), the conversation that followed, in order; `nil` for
    /// any other exchange. Replaying, a script plays it back: it sends what was received, waits
    /// for each message that was sent, and ends as the recording did.
    public var webSocket: [CassetteWebSocketEvent]?

    /// Creates an interaction.
    ///
    /// - Parameters:
    ///   - request:    The request.
    ///   - response:   The response.
    ///   - recordedAt: When it was recorded, if known.
    ///   - webSocket:  For a WebSocket handshake, the conversation.
    public init(request: Request, response: Response, recordedAt: Date? = nil, webSocket: [CassetteWebSocketEvent]? = nil) {
        self.request = request
        self.response = response
        self.recordedAt = recordedAt
        self.webSocket = webSocket
    }
}
