import Foundation

/// Buffers the events of one request for a ``ProgressStream`` iterator and hands them over one
/// `next()` at a time.
///
/// The request is sent on the first `next()`. The callbacks hold the channel weakly, so when the
/// iterator goes away (the loop was left) the channel is released and its `deinit` cancels the
/// request. Events are buffered without a bound: a request produces a few per chunk received.
final class ProgressChannel: Sendable {
    private enum Phase {
        case idle
        case running
        /// The request has ended; `nil` once its end has been handed out.
        case ended(Result<Void, MoyaError>?)
    }

    private struct State {
        var phase = Phase.idle
        var buffer: [ProgressResponse] = []
        var lastProgress: Progress?
        var waiter: CheckedContinuation<Result<ProgressResponse?, MoyaError>, Never>?
    }

    private let start: ProgressStream.Start
    private let call = RequestCall()
    // `Progress` objects in the state are snapshots that nobody mutates after they are made.
    private let state = Protected(State())

    init(start: @escaping ProgressStream.Start) {
        self.start = start
    }

    deinit {
        call.cancel()
    }

    /// The next event, `nil` once the sequence has ended, or the request's error (once).
    func next() async -> Result<ProgressResponse?, MoyaError> {
        // A task cancelled before the first `next()` runs `onCancel` before the operation, so
        // the request is never started.
        await withTaskCancellationHandler {
            startIfNeeded()
            return await withCheckedContinuation { continuation in
                let ready: Result<ProgressResponse?, MoyaError>? = state.withLock { state in
                    if let value = Self.take(from: &state) { return value }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            call.cancel()
        }
    }

    private func startIfNeeded() {
        let shouldStart: Bool = state.withLock { state in
            guard case .idle = state.phase else { return false }
            state.phase = .running
            return true
        }
        guard shouldStart else { return }
        let started = call.start {
            start(
                { [weak self] event in self?.receive(event) },
                { [weak self] result in self?.end(with: result) }
            )
        }
        if !started {
            end(with: .failure(.requestCancelled))
        }
    }

    /// A progress event from the provider. The provider's own completed event is held back: the
    /// completion brings the response after the plugins' `process`, and that is the one yielded.
    private func receive(_ event: ProgressResponse) {
        deliver { state in
            state.lastProgress = event.progressObject ?? state.lastProgress
            if !event.completed {
                state.buffer.append(event)
            }
        }
    }

    private func end(with result: Result<Response, MoyaError>) {
        call.finish()
        deliver { state in
            guard case .running = state.phase else { return }
            switch result {
            case .success(let response):
                state.buffer.append(ProgressResponse(progress: state.lastProgress, response: response))
                state.phase = .ended(.success(()))
            case .failure(let error):
                state.phase = .ended(.failure(error))
            }
        }
    }

    /// Changes the state and, if an iterator is waiting and something is ready, wakes it.
    private func deliver(_ change: (inout State) -> Void) {
        let wake: (CheckedContinuation<Result<ProgressResponse?, MoyaError>, Never>, Result<ProgressResponse?, MoyaError>)? = state.withLock { state in
            change(&state)
            guard let waiter = state.waiter, let value = Self.take(from: &state) else { return nil }
            state.waiter = nil
            return (waiter, value)
        }
        if let (waiter, value) = wake {
            waiter.resume(returning: value)
        }
    }

    /// What the next `next()` returns, if it is known yet.
    private static func take(from state: inout State) -> Result<ProgressResponse?, MoyaError>? {
        if !state.buffer.isEmpty {
            return .success(state.buffer.removeFirst())
        }
        switch state.phase {
        case .idle, .running:
            return nil
        case .ended(let end?):
            state.phase = .ended(nil)
            return end.map { nil }
        case .ended(nil):
            return .success(nil)
        }
    }
}
