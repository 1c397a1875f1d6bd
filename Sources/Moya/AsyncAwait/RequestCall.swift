import Foundation

/// The link between one Swift task (or one stream or publisher) and the callback request it
/// started: it remembers the request's token so that a cancel arriving from another thread, at
/// any moment, reaches it exactly once.
///
/// A cancel that arrives before the request has started stops it from starting; one that
/// arrives while `request(...)` is still running is applied as soon as the token is known.
///
/// A struct around its one lock: ``Protected`` already shares its storage between copies, so
/// the closures that capture a call (the completion, the cancellation handler) all see the same
/// state, and a call costs one allocation instead of two.
struct RequestCall: Sendable {
    private struct State {
        var isCancelled = false
        /// The request's token. `Cancellable` is not `Sendable` (a subclass of `MoyaProvider` may
        /// return its own); the provider's own, a `RequestTicket`, is safe
        /// to cancel from any thread, as Moya documents every token to be. It sits behind the
        /// lock only so that the hand-over between `start` and `cancel` is atomic.
        var token: UncheckedSendable<any Cancellable>?
    }

    private let state = Protected(State())

    init() {}

    /// Whether ``cancel()`` has been called.
    var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }

    /// Starts the request with `send` unless the call was cancelled already.
    ///
    /// - Parameter send: Starts the request and returns its token.
    /// - Returns: `false` when the call had been cancelled and nothing was started.
    func start(_ send: () -> any Cancellable) -> Bool {
        guard !isCancelled else { return false }
        let token = send()
        let cancelNow: Bool = state.withLock { state in
            if state.isCancelled { return true }
            state.token = UncheckedSendable(token)
            return false
        }
        if cancelNow { token.cancel() }
        return true
    }

    /// Cancels the request, or keeps it from starting. Later calls do nothing.
    func cancel() {
        let token: UncheckedSendable<any Cancellable>? = state.withLock { state in
            guard !state.isCancelled else { return nil }
            state.isCancelled = true
            defer { state.token = nil }
            return state.token
        }
        token?.value.cancel()
    }

    /// Forgets the token once the request has finished, so nothing is kept alive longer.
    func finish() {
        state.withLock { $0.token = nil }
    }
}

extension RequestCall {
    /// Awaits a callback request started by `send`: the task resumes with its result, and
    /// cancelling the task cancels the request (or keeps it from starting).
    ///
    /// Not generic over the provider's target: async code in `MoyaProvider<Target>` runs
    /// unspecialized in the user's module, where every suspension point and closure pays for
    /// runtime generic metadata.
    ///
    /// - Parameter send: Starts the request with the given completion and returns its token.
    /// - Returns: The request's response.
    /// - Throws: The request's `MoyaError`, or the cancellation error.
    nonisolated(nonsending)
        static func perform(_ send: (@escaping Completion) -> any Cancellable) async throws(MoyaError) -> Moya.Response
    {
        let call = RequestCall()
        let result: Result<Moya.Response, MoyaError> = await withTaskCancellationHandler {
            // Unchecked: the provider calls a completion exactly once, and the continuation is
            // resumed either there or, when the call never started, below; never both. (A
            // checked continuation costs an extra allocation per request.)
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<Moya.Response, MoyaError>, Never>) in
                let started = call.start {
                    send { result in
                        call.finish()
                        continuation.resume(returning: result)
                    }
                }
                if !started {
                    continuation.resume(returning: .failure(.requestCancelled))
                }
            }
        } onCancel: {
            call.cancel()
        }
        // The completion took the call's lock after the response was made; taking it here orders
        // that for ThreadSanitizer even when the continuation was resumed before the task
        // reached `await` (the runtime then hands over with an ordering it cannot see).
        call.finish()
        return try result.get()
    }
}
