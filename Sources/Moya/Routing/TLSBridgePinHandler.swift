import Foundation
import NIOCore
import NIOSSL
import NIOTLS

/// Sits behind the `NIOSSLClientHandler` of a ``TLSBridge`` upstream connection, or of any
/// connection ``SessionRoutes/openConnection(along:on:)`` opens with TLS. When the handshake
/// completes (NIOSSL's own checks have passed), it compares the SPKI SHA-256 of the server's
/// certificate with the pins, if there are any, and only then succeeds `verified` with the
/// channel; on a mismatch, a TLS error or a close it fails `verified` and closes the connection.
/// Nothing is written to the connection before `verified` succeeds.
final class TLSBridgePinHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// The server's key matched none of the pins.
    struct Mismatch: Error {
        /// The server's pin.
        let presented: PublicKeyPin
    }

    /// The pins, or `nil` to check nothing beyond NIOSSL's own checks.
    private let pins: Set<Data>?
    private let verified: EventLoopPromise<any Channel>
    private var isDone = false

    init(pins: Set<Data>?, verified: EventLoopPromise<any Channel>) {
        self.pins = pins
        self.verified = verified
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .handshakeCompleted? = event as? TLSUserEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        do {
            guard let pins else {
                finish(.success(context.channel))
                context.fireUserInboundEventTriggered(event)
                return
            }
            guard let leaf = try context.pipeline.syncOperations.nioSSL_peerCertificate() else {
                throw NIOSSLError.noCertificateToValidate
            }
            let presented = try PublicKeyPin(nioCertificate: leaf)
            guard pins.contains(presented.sha256) else {
                throw Mismatch(presented: presented)
            }
            finish(.success(context.channel))
            context.fireUserInboundEventTriggered(event)
        } catch {
            finish(.failure(error))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(ChannelError.eof))
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<any Channel, any Error>) {
        guard !isDone else { return }
        isDone = true
        verified.completeWith(result)
    }
}
