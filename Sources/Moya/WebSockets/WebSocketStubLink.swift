import Foundation
import NIOCore
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The connection of a stubbed WebSocket target: the two ends of a socket pair in the process,
/// no network. The client's end carries the same frame codecs and ``WebSocketConversation`` as a
/// connection upgraded from HTTP (``WebSocketConnectionParts/make(options:deflate:subprotocol:on:)``),
/// so a script's messages meet the client's real checks, limits, back pressure and close
/// handshake; the other end runs the script's server (``WebSocketPeerChannel``).
enum WebSocketStubLink {
    /// Why a stub's connection could not be made.
    struct SocketPairError: Error, CustomStringConvertible {
        let errno: Int32
        var description: String { "socketpair failed (errno \(errno)): the stubbed WebSocket connection could not be made" }
    }

    /// Opens the pair on `loop`, starts `script` on the server's end (as the server of the
    /// handshake `request`) and the conversation with `options` on the client's.
    static func open(
        _ script: WebSocketScript, request: URLRequest, options: WebSocketOptions, subprotocol: String?, on loop: any EventLoop
    ) -> EventLoopFuture<(channel: any Channel, parts: WebSocketConnectionParts)> {
        var descriptors: [Int32] = [-1, -1]
        #if canImport(Darwin)
        let kind = SOCK_STREAM
        #else
        let kind = Int32(SOCK_STREAM.rawValue)
        #endif
        let made = descriptors.withUnsafeMutableBufferPointer { socketpair(AF_UNIX, kind, 0, $0.baseAddress) }
        guard made == 0 else { return loop.makeFailedFuture(SocketPairError(errno: errno)) }
        let server = ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try script.serve(request, on: channel)
                }
            }
            .withConnectedSocket(descriptors[1])
        // The client reads only when its conversation is in place and asks (autoRead off), so
        // nothing the script sends at once can pass by before it.
        let client = ClientBootstrap(group: loop)
            .channelOption(.autoRead, value: false)
            .withConnectedSocket(descriptors[0])
        return client.and(server).flatMapThrowing { client, _ in
            let (parts, handlers) = WebSocketConnectionParts.make(options: options, deflate: nil, subprotocol: subprotocol, on: client.eventLoop)
            try client.pipeline.syncOperations.addHandlers(handlers)
            return (client, parts)
        }.flatMapErrorThrowing { error in
            client.whenSuccess { $0.close(promise: nil) }
            server.whenSuccess { $0.close(promise: nil) }
            throw error
        }
    }
}
