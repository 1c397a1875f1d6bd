#if RxMoya
import Foundation
import Moya
import RxSwift

/// The disposable of one subscription to a request: cancels the request when the subscription is
/// disposed of before the request ended, at most once, and never after it ended.
///
/// The request's completion asks ``finish()`` before delivering anything, so a result that comes
/// after the disposal (the cancellation error, or a response that raced with it) is dropped.
final class RequestDisposable: Disposable {
    private enum State {
        /// The request runs; its token, once `request` returned it.
        case running((any Moya.Cancellable)?)
        /// The request delivered its result.
        case finished
        /// The subscription was disposed of first.
        case disposed
    }

    private let lock = NSLock()
    private var state = State.running(nil)

    /// Keeps the request's token for a later disposal; cancels it at once if the subscription was
    /// already disposed of, and lets it go if the request already ended (an immediate stub).
    func attach(_ token: any Moya.Cancellable) {
        let cancelNow: Bool = lock.withLock {
            switch state {
            case .running:
                state = .running(token)
                return false
            case .finished:
                return false
            case .disposed:
                return true
            }
        }
        if cancelNow { token.cancel() }
    }

    /// Marks the request as ended.
    ///
    /// - Returns: Whether its result is to be delivered: `false` once disposed of.
    func finish() -> Bool {
        lock.withLock {
            guard case .running = state else { return false }
            state = .finished
            return true
        }
    }

    /// Cancels the request if it is still running; later calls do nothing.
    func dispose() {
        let token: (any Moya.Cancellable)? = lock.withLock {
            guard case .running(let token) = state else { return nil }
            state = .disposed
            return token
        }
        token?.cancel()
    }
}
#endif
