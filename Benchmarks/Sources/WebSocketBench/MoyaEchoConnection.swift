import Foundation
import Moya

/// A connection of `MoyaProvider.webSocket(_:options:)`: `send(_:)` and the `messages` sequence
/// of a ``WebSocketConnection``.
final class MoyaEchoConnection: EchoConnection, @unchecked Sendable {
    // Sendable: `iterator` is only used by the one reader that `EchoConnection` allows; the rest
    // is immutable.

    /// One provider for every connection of the process, with a default session, as an
    /// application would have.
    static let provider = MoyaProvider<EchoTarget>()

    /// The options of every connection: compression off (the server would refuse it anyway, and
    /// then no client compresses), and messages up to 64 MiB for the large run.
    static let options = WebSocketOptions(maximumMessageSize: 64 << 20, compression: .disabled)

    private let connection: WebSocketConnection
    private let message: WebSocketMessage
    private var iterator: WebSocketMessages.AsyncIterator

    private init(connection: WebSocketConnection, message: WebSocketMessage) {
        self.connection = connection
        self.message = message
        self.iterator = connection.messages.makeAsyncIterator()
    }

    /// The client as the benchmark knows it.
    static let client = EchoClient(name: "Moya") { port, payload in
        let target = EchoTarget(baseURL: URL(string: "ws://127.0.0.1:\(port)")!)
        let connection = try await provider.webSocket(target, options: options)
        let message: WebSocketMessage = payload.isText ? .text(payload.text) : .binary(Data(payload.bytes))
        return MoyaEchoConnection(connection: connection, message: message)
    }

    func send() async throws {
        try await connection.send(message)
    }

    func receive() async throws -> Int? {
        try await iterator.next()?.byteCount
    }

    func close() async {
        await connection.close()
    }
}
