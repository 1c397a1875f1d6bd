import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOWebSocket

/// The WebSocket routes of `HummingbirdWebSocketServer`, which the root package's
/// interoperability tests talk to:
///
/// - `/echo`: every text and binary message goes back as it came (same kind); permessage-deflate
///   when the client offers it.
/// - `/echo-plain`: the same, never compressed (``PlainRouteChannel`` hides the client's offer).
/// - `/close?code=4001&reason=bye`: accepts, then closes at once with that code and reason (1000
///   and no reason by default).
/// - `/count?n=5`: sends the text messages "1" to "n", then closes with 1000.
/// - `/headers`: sends one text message, a JSON object of the handshake request's headers (names
///   in lower case, repeated ones joined with ", ", `Host` included), then closes with 1000.
/// - `/subprotocol`: accepts the subprotocol "chat.v2" if the client offers it, sends the one
///   chosen (or "none"), then echoes.
///
/// Every route but `/echo-plain` accepts compression when offered; frames and messages may be up
/// to ``maximumMessageSize``.
enum InteropRoutes {
    /// The largest frame and message the server reads: 64 MiB.
    static let maximumMessageSize = 64 << 20

    /// The paths whose clients' offer of compression is hidden from the server.
    static let uncompressedPaths: Set<String> = ["/echo-plain"]

    /// The one subprotocol the server knows.
    static let subprotocol = "chat.v2"

    /// The router of the upgrade requests.
    static func webSocketRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("/echo") { inbound, outbound, _ in
            try await echo(inbound, outbound)
        }
        router.ws("/echo-plain") { inbound, outbound, _ in
            try await echo(inbound, outbound)
        }
        router.ws("/close") { _, outbound, context in
            let query = context.request.uri.queryParameters
            let code = query.get("code", as: Int.self) ?? 1000
            try await outbound.close(WebSocketErrorCode(codeNumber: code), reason: query.get("reason") ?? "")
        }
        router.ws("/count") { _, outbound, context in
            let count = context.request.uri.queryParameters.get("n", as: Int.self) ?? 0
            for number in stride(from: 1, through: count, by: 1) {
                try await outbound.write(.text(String(number)))
            }
            try await outbound.close(.normalClosure, reason: nil)
        }
        router.ws("/headers") { _, outbound, context in
            try await outbound.write(.text(headersJSON(of: context.request)))
            try await outbound.close(.normalClosure, reason: nil)
        }
        router.ws("/subprotocol") { request, _ in
            chosenSubprotocol(of: request).map { .upgrade([.secWebSocketProtocol: $0]) } ?? .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            try await outbound.write(.text(chosenSubprotocol(of: context.request) ?? "none"))
            try await echo(inbound, outbound)
        }
        return router
    }

    /// Sends every message back as it came, until the client closes.
    private static func echo(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter) async throws {
        for try await message in inbound.messages(maxSize: maximumMessageSize) {
            switch message {
            case .text(let text): try await outbound.write(.text(text))
            case .binary(let buffer): try await outbound.write(.binary(buffer))
            }
        }
    }

    /// ``subprotocol`` if the handshake offers it (`Sec-WebSocket-Protocol`, in one field or
    /// several, comma-separated).
    private static func chosenSubprotocol(of request: Request) -> String? {
        let offered = request.headers[values: .secWebSocketProtocol].flatMap { $0.split(separator: ",") }
        return offered.contains { $0.trimmingCharacters(in: .whitespaces) == subprotocol } ? subprotocol : nil
    }

    /// The handshake's headers as a JSON object, keys sorted.
    private static func headersJSON(of request: Request) -> String {
        var headers: [String: String] = [:]
        // HTTPTypes keeps `Host` apart, as the request's authority.
        if let authority = request.head.authority {
            headers["host"] = authority
        }
        for field in request.headers {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
        }
        let data = (try? JSONSerialization.data(withJSONObject: headers, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
