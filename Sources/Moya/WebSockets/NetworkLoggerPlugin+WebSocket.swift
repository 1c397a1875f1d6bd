import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NetworkLoggerPlugin: WebSocketPluginType {
    /// Logs a WebSocket connection's opening and its end (the close code, the counts each way,
    /// the error), and, with ``Configuration/LogOptions/successResponseBody``, each message's
    /// kind and size. The content of a message is never logged: unlike a body, it has no
    /// content type to redact by. The URL is redacted as a request's.
    ///
    /// A message's size is its own (a text message's UTF-8 length); the byte counts at the end
    /// are what went over the wire, after compression when the server agreed to it, so a
    /// compressed connection ends with fewer bytes than its messages' sizes add up to.
    ///
    /// - Parameters:
    ///   - event:     What happened.
    ///   - handshake: The connection's `101`.
    ///   - target:    The connection's target.
    public func webSocket(_ event: WebSocketEvent, handshake: Response, target: TargetType) {
        let configuration = self.configuration
        let redaction = configuration.redaction
        let url = handshake.request?.url.map { redaction.describe($0) } ?? redaction.name(of: target)
        let entry: String
        switch event {
        case .opened:
            entry = configuration.formatter.entry("WebSocket", "opened \(url)", target)
        case .sent(let message):
            guard configuration.logOptions.contains(.successResponseBody) else { return }
            entry = configuration.formatter.entry("WebSocket", "sent \(message) on \(url)", target)
        case .received(let message):
            guard configuration.logOptions.contains(.successResponseBody) else { return }
            entry = configuration.formatter.entry("WebSocket", "received \(message) on \(url)", target)
        case .closed(let end):
            let counts = end.statistics
            var text =
                "closed \(url): \(end.code)\(end.serverClosedFirst ? ", by the server" : end.error == nil ? ", by the client" : ""); "
                + "sent \(Self.messages(counts.messagesSent)) (\(counts.bytesSent) bytes on the wire), "
                + "received \(Self.messages(counts.messagesReceived)) (\(counts.bytesReceived) bytes on the wire)"
            if let error = end.error {
                text += "; error: \(redaction.describe(errorText: error.description))"
            }
            entry = configuration.formatter.entry("WebSocket", text, target)
        }
        configuration.output(target, [entry])
    }

    /// `1 message`, `2 messages`.
    private static func messages(_ count: Int) -> String {
        count == 1 ? "1 message" : "\(count) messages"
    }
}
