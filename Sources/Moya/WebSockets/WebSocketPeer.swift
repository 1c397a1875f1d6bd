import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The server's side of a scripted WebSocket conversation (``WebSocketScript``): what the script
/// sends, reads and closes with.
///
/// The frames are real: the script's messages reach the client's connection as a server's
/// would, through the client's checks, limits and close handshake, whether the script runs for
/// a stubbed target (over a socket pair in the process, no network) or on MoyaTesting's mock
/// server. Pings are answered by itself; a close from the client is answered with the same
/// code, after which ``receive()`` returns `nil`.
public final class WebSocketPeer: Sendable {
    /// A deliberate misbehaviour, for testing how a client copes with a broken server.
    public enum Fault: Sendable, Equatable {
        /// Half of a binary frame is written, then nothing more (not even pongs): the client's
        /// keepalive must notice.
        case stallMidFrame
        /// The connection closes without a close frame.
        case drop
        /// One binary message of `byteCount` bytes, in one frame: larger than the client's
        /// ``WebSocketOptions/maximumMessageSize``, it closes with 1009.
        case oversizedFrame(byteCount: Int)
        /// A text message whose bytes are not UTF-8: the client closes with 1007.
        case invalidUTF8
        /// `bytes` as they are, written after the frames so far (a frame of one's own).
        case raw(Data)
    }

    /// The handshake as the server got it: its URL, with the path and query, and its headers.
    public let request: URLRequest

    private let link: any WebSocketPeerLink

    init(request: URLRequest, link: any WebSocketPeerLink) {
        self.request = request
        self.link = link
    }

    /// Sends `message` to the client and returns once it is written.
    ///
    /// - Throws: ``WebSocketError/connectionClosed(code:reason:)`` once the connection is
    ///   closing or closed.
    public func send(_ message: WebSocketMessage) async throws {
        try await link.send(message)
    }

    /// The client's next message, whole; `nil` once the client has closed (or the connection
    /// ended).
    public func receive() async throws -> WebSocketMessage? {
        try await link.receive()
    }

    /// Closes the connection with `code` and `reason`: sends the close frame, waits a moment
    /// for the client's answer, and closes the socket. Does nothing once closed.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") async {
        await link.close(code: code, reason: reason)
    }

    /// Commits `fault` (see ``Fault``) and returns once it is written.
    public func commit(_ fault: Fault) async {
        await link.commit(fault)
    }

    /// The close code the client sent, once it closed (``WebSocketCloseCode/noStatusReceived``
    /// for a close frame without one).
    public var clientCloseCode: WebSocketCloseCode? {
        link.clientClose?.code
    }

    /// The close reason the client sent, once it closed.
    public var clientCloseReason: String? {
        link.clientClose?.reason
    }
}

/// What a ``WebSocketPeer`` drives: the server's end of a connection (``WebSocketPeerHandler``
/// on a channel).
protocol WebSocketPeerLink: Sendable {
    func send(_ message: WebSocketMessage) async throws
    func receive() async throws -> WebSocketMessage?
    func close(code: WebSocketCloseCode, reason: String) async
    func commit(_ fault: WebSocketPeer.Fault) async
    var clientClose: (code: WebSocketCloseCode, reason: String)? { get }
}
