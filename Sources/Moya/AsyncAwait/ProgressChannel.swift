import Foundation

/// The events of one request for a ``ProgressStream`` iterator, handed over one `next()` at a
/// time through a ``BoundedBuffer``.
///
/// The request is sent on the first `next()`. The callbacks hold the channel weakly, so when the
/// iterator goes away (the loop was left) the channel is released and its `deinit` cancels the
/// request; a consumer that stops (its task cancelled) cancels it through the buffer's stop
/// handler. Progress events only say how far the transfer is, so a consumer that falls
/// ``progressLimit`` events behind loses the oldest; the completed event is the last one and is
/// never dropped.
final class ProgressChannel: Sendable {
    /// The most events kept for a consumer that is behind.
    static let progressLimit = 64

    private let start: ProgressStream.Start
    private let call = RequestCall()
    private let buffer = BoundedBuffer<ProgressResponse>(limit: ProgressChannel.progressLimit, overflow: .dropOldest)
    /// The latest event from the provider that carried a `Progress`: the completed event carries
    /// its `Progress` along with the response.
    private let latest = Protected<ProgressResponse?>(nil)

    init(start: @escaping ProgressStream.Start) {
        self.start = start
        buffer.setStopHandler { [call] _ in call.cancel() }
        buffer.setStart { [weak self] in self?.startRequest() }
    }

    deinit {
        call.cancel()
    }

    /// The next event, `nil` once the sequence has ended, or the request's error (once).
    func next() async -> Result<ProgressResponse?, MoyaError> {
        // The first one starts the request, unless its task was cancelled before.
        await buffer.next()
    }

    private func startRequest() {
        let started = call.start {
            start(
                { [weak self] event in self?.receive(event) },
                { [weak self] result in self?.end(with: result) }
            )
        }
        if !started {
            buffer.finish(.failure(.requestCancelled))
        }
    }

    /// A progress event from the provider. The provider's own completed event is held back: the
    /// completion brings the response after the plugins' `process`, and that is the one yielded.
    private func receive(_ event: ProgressResponse) {
        if event.progressObject != nil {
            latest.withLock { $0 = event }
        }
        if !event.completed {
            buffer.put(event)
        }
    }

    private func end(with result: Result<Response, MoyaError>) {
        call.finish()
        switch result {
        case .success(let response):
            let progress = latest.withLock { $0?.progressObject }
            buffer.put(ProgressResponse(progress: progress, response: response))
            buffer.finish(.success(()))
        case .failure(let error):
            buffer.finish(.failure(error))
        }
    }
}
