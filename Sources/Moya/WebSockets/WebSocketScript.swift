import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the server of a scripted WebSocket conversation does: how it answers the handshake, then
/// what it sends, reads and closes, written as an `async` function of its side of the
/// connection, a ``WebSocketPeer``.
///
/// A script answers a stubbed WebSocket target (``WebSocketTargetType/sampleConversation``, or
/// an endpoint's ``Endpoint/sampleConversation``): the provider's stub closure decides when a
/// target is stubbed, as for any target, and the script plays the server with no network. The
/// same script can be served over loopback by MoyaTesting's `MockServer`.
///
/// ```swift
/// let welcomeThenEcho = WebSocketScript { server in
///     try await server.send(.text(#"{"type":"welcome"}"#))
///     while let message = try await server.receive() {
///         try await server.send(message)
///     }
/// }
/// ```
///
/// When the function returns, the server closes the connection with
/// ``WebSocketCloseCode/normalClosure`` unless it closed already; when it throws, with
/// ``WebSocketCloseCode/internalServerError`` and the error's description as the reason.
public struct WebSocketScript: Sendable {
    /// How the server answers the handshake.
    public enum Handshake: Sendable {
        /// `101 Switching Protocols`, choosing `subprotocol` (which must be one the client
        /// offered, as with a real server), with `headers` added to the answer.
        case accept(subprotocol: String? = nil, headers: [String: String] = [:])
        /// An answer with another status, `data` as its body: the request fails with
        /// ``MoyaError/statusCode(_:)`` and no conversation starts.
        case refuse(statusCode: Int, data: Data = Data(), headers: [String: String] = [:])
        /// No answer: the request fails with `MoyaError.underlying(error, nil)`, as with
        /// ``EndpointSampleResponse/networkError(_:)``.
        case fail(NSError)
    }

    /// How the server answers the handshake.
    public var handshake: Handshake

    /// What the server does once it accepted; not run when ``handshake`` refuses or fails.
    public var body: @Sendable (WebSocketPeer) async throws -> Void

    /// Chooses the script for a handshake: ``deciding(_:)``'s function, else `nil` (this one).
    let chooser: (@Sendable (URLRequest) -> WebSocketScript)?

    /// A script whose server answers the handshake with `handshake`, then runs `body`.
    ///
    /// - Parameters:
    ///   - handshake: How the server answers the handshake; accepted by default.
    ///   - body:      The server's side of the conversation.
    public init(handshake: Handshake = .accept(), _ body: @escaping @Sendable (WebSocketPeer) async throws -> Void) {
        self.handshake = handshake
        self.body = body
        self.chooser = nil
    }

    /// A script chosen for each handshake by `choose`, from the handshake's request as the
    /// server gets it (its URL, headers, the plugins' changes): a server that answers some paths
    /// and refuses others, or plays back a recording.
    ///
    /// ```swift
    /// let rooms = WebSocketScript.deciding { request in
    ///     request.url?.path == "/rooms/private" ? .refusal(statusCode: 403) : .echo
    /// }
    /// ```
    public static func deciding(_ choose: @escaping @Sendable (URLRequest) -> WebSocketScript) -> WebSocketScript {
        WebSocketScript(chooser: choose)
    }

    private init(chooser: @escaping @Sendable (URLRequest) -> WebSocketScript) {
        self.handshake = .accept()
        self.body = { _ in }
        self.chooser = chooser
    }

    /// The script that answers `request`: this one, or the one ``deciding(_:)`` chooses (which
    /// may choose again).
    package func resolved(for request: URLRequest) -> WebSocketScript {
        var script = self
        // A bound on choices that keep choosing: a script chosen a hundred times over is a bug
        // in the choosing functions, answered with a failed handshake rather than a hang.
        for _ in 0..<100 {
            guard let choose = script.chooser else { return script }
            script = choose(request)
        }
        return WebSocketScript(handshake: .fail(URLError(.badServerResponse) as NSError)) { _ in }
    }

    /// A server that sends back every message it receives, as it came, until the client closes.
    public static var echo: WebSocketScript {
        WebSocketScript { server in
            while let message = try await server.receive() {
                try await server.send(message)
            }
        }
    }

    /// A server that sends `messages`, in order, then closes with `code` and `reason`; with
    /// `code` `nil`, it waits for the client to close instead (reading and dropping what the
    /// client sends).
    ///
    /// - Parameters:
    ///   - messages: What the server sends, in order.
    ///   - code:     The close code the server sends after them, or `nil` to leave the close to
    ///     the client.
    ///   - reason:   The close reason.
    public static func messages(_ messages: [WebSocketMessage], thenClose code: WebSocketCloseCode? = .normalClosure, reason: String = "")
        -> WebSocketScript
    {
        WebSocketScript { server in
            for message in messages {
                try await server.send(message)
            }
            if let code {
                await server.close(code: code, reason: reason)
                return
            }
            while try await server.receive() != nil {}
        }
    }

    /// A server that sends `messages`, then commits `fault` (a broken frame, a dropped
    /// connection, ...; see ``WebSocketPeer/Fault``), then reads until the connection ends.
    ///
    /// - Parameters:
    ///   - fault:    What the server breaks.
    ///   - messages: What it sends first, in order.
    public static func fault(_ fault: WebSocketPeer.Fault, after messages: [WebSocketMessage] = []) -> WebSocketScript {
        WebSocketScript { server in
            for message in messages {
                try await server.send(message)
            }
            await server.commit(fault)
            while try await server.receive() != nil {}
        }
    }

    /// A server that refuses the handshake with `statusCode` (`401`, `403`, `503`, ...) and
    /// `data` as its body.
    public static func refusal(statusCode: Int, data: Data = Data(), headers: [String: String] = [:]) -> WebSocketScript {
        WebSocketScript(handshake: .refuse(statusCode: statusCode, data: data, headers: headers)) { _ in }
    }
}
