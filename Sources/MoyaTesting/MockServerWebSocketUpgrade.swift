import Foundation
import Moya
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOWebSocket

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a ``MockServer``'s HTTP/1.1 connections switch to WebSocket for its WebSocket routes
/// (``MockServer/webSocket(_:_:)``): NIO's server upgrader checks the handshake and answers it,
/// then the route's script plays the server on the connection.
///
/// A handshake to a path with no WebSocket route, or whose script refuses or fails, is not
/// upgraded: it goes on to the mock handler like any request, which answers it from the HTTP
/// routes (where a WebSocket route put its refusal).
enum MockServerWebSocketUpgrade {
    /// The largest frame the server reads.
    static let maximumFrameSize = 64 << 20

    /// The upgrade configuration of one connection of a server with `settings`.
    static func configuration(settings: MockServerHandler.Settings, isSecure: Bool) -> NIOHTTPServerUpgradeConfiguration {
        // The script chosen for the connection's handshake, from its check to the upgrade: a
        // script that chooses (`WebSocketScript.deciding`) chooses once.
        let chosen = NIOLockedValueBox<(script: WebSocketScript, request: URLRequest)?>(nil)
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: maximumFrameSize,
            automaticErrorHandling: false,
            shouldUpgrade: { channel, head in
                let request = urlRequest(for: head, isSecure: isSecure, local: channel.localAddress)
                guard let script = settings.script.webSocketScript(for: MockServerHandler.path(of: head.uri))?.resolved(for: request),
                    case .accept(let subprotocol, let extra) = script.handshake
                else {
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
                chosen.withLockedValue { $0 = (script, request) }
                var headers = NIOHTTP1.HTTPHeaders()
                for (name, value) in extra.sorted(by: { $0.key < $1.key }) {
                    headers.add(name: name, value: value)
                }
                if let subprotocol {
                    headers.add(name: "Sec-WebSocket-Protocol", value: subprotocol)
                }
                return channel.eventLoop.makeSucceededFuture(headers)
            },
            upgradePipelineHandler: { channel, head in
                guard let (script, request) = chosen.withLockedValue({ $0 }) else {
                    return channel.close()
                }
                settings.journal.record(
                    MockRequest(
                        number: settings.journal.nextNumber(), method: head.method.rawValue, uri: head.uri,
                        headers: head.headers.map { ($0.name, $0.value) }, body: Data(), bodyLength: 0,
                        httpVersion: "HTTP/\(head.version.major).\(head.version.minor)", arrivedAt: .now, receivedAt: Date()),
                    answered: true)
                return channel.eventLoop.makeCompletedFuture {
                    try script.serve(request, on: channel, addingCodecs: false)
                }
            })
        // Before the conversation's handlers join: the mock handler, an HTTP handler, leaves
        // (NIO's upgrade handler removes only its own HTTP handlers).
        return (
            upgraders: [upgrader],
            completionHandler: { context in
                let sync = context.pipeline.syncOperations
                if let handler = try? sync.handler(type: MockServerHandler.self) {
                    sync.removeHandler(handler, promise: nil)
                }
            }
        )
    }

    /// The handshake as a `URLRequest` for the script's `WebSocketPeer/request`: a `ws` or
    /// `wss` URL on the `Host` the client named, and the handshake's headers.
    static func urlRequest(for head: HTTPRequestHead, isSecure: Bool, local: SocketAddress?) -> URLRequest {
        let host = head.headers.first(name: "Host") ?? local.map { "\($0.ipAddress ?? "127.0.0.1"):\($0.port ?? 0)" } ?? "localhost"
        return urlRequest(
            method: head.method.rawValue, host: host, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) }, isSecure: isSecure,
            fallback: URL(string: "ws://localhost/")!)
    }

    /// A handshake request to `host` for `uri` with `headers`, on a `ws` or `wss` URL
    /// (`fallback` when those do not make one).
    static func urlRequest(
        method: String = "GET", host: String, uri: String, headers: [(name: String, value: String)], isSecure: Bool, fallback: URL
    ) -> URLRequest {
        var request = URLRequest(url: URL(string: "\(isSecure ? "wss" : "ws")://\(host)\(uri)") ?? fallback)
        request.httpMethod = method
        for (name, value) in headers {
            request.addValue(value, forHTTPHeaderField: name)
        }
        return request
    }
}
