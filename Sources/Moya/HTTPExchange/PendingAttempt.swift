import AsyncHTTPClient
import NIOCore

/// An attempt that starts on its event loop, after a hop there: the ``TransportAttempt`` the
/// owner records before the hop. One call to the owner (``TransportOwner/transportStarted(_:)``)
/// both checks that the request is still wanted and records what a cancel stops, and a cancel
/// that comes during the hop stops the attempt before AsyncHTTPClient has it, so nothing is
/// sent.
///
/// Sendable: its two mutable fields are only touched on ``loop`` (a cancel from elsewhere hops
/// there).
final class PendingAttempt: TransportAttempt, @unchecked Sendable {
    /// The loop the attempt starts on.
    let loop: any EventLoop
    private var task: (any TransportAttempt)?
    private var cancelled = false

    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// Whether a cancel came before the attempt's task was made. Call on ``loop``.
    var isCancelled: Bool {
        loop.preconditionInEventLoop()
        return cancelled
    }

    /// The attempt's task was made: a later cancel stops it. Call on ``loop``.
    func started(_ task: any TransportAttempt) {
        loop.preconditionInEventLoop()
        self.task = task
    }

    func cancel() {
        guard loop.inEventLoop else {
            loop.execute { self.cancel() }
            return
        }
        cancelled = true
        task?.cancel()
    }
}
