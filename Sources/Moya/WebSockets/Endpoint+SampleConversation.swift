import Foundation

extension Endpoint {
    /// What the server of this WebSocket endpoint does when it is stubbed. `nil` (the default)
    /// leaves it to the target's ``WebSocketTargetType/sampleConversation``; an endpoint closure
    /// sets it to script a target that has none, or to replace the target's script.
    public var sampleConversation: WebSocketScript? {
        sampleConversationStorage as? WebSocketScript
    }

    /// Creates an endpoint whose stubbed WebSocket server plays `sampleConversation`.
    ///
    /// - Parameters:
    ///   - url:                   The full URL of the request.
    ///   - sampleResponseClosure: Produces the stubbed response.
    ///   - method:                The HTTP method.
    ///   - task:                  What the request sends.
    ///   - httpHeaderFields:      The HTTP headers; `nil` (the default) for none.
    ///   - sampleConversation:    For a WebSocket target, what its server does when it is
    ///     stubbed; `nil` for none.
    public convenience init(
        url: String,
        sampleResponseClosure: @escaping SampleResponseClosure,
        method: Moya.Method,
        task: Task,
        httpHeaderFields: [String: String]? = nil,
        sampleConversation: WebSocketScript?
    ) {
        self.init(
            url: url, sampleResponseClosure: sampleResponseClosure, method: method, task: task, httpHeaderFields: httpHeaderFields,
            sampleConversationStorage: sampleConversation)
    }
}
