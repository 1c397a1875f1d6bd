import Foundation

/// The progress events of one request, as an asynchronous sequence; see
/// ``MoyaProvider/requestWithProgress(_:)``.
///
/// The sequence yields the transfer's progress events, then one event with the validated
/// response (``ProgressResponse/completed`` is `true`), and ends. A failed request ends it by
/// throwing the request's ``MoyaError``, so `for try await` loops catch a `MoyaError` and nothing
/// else. Each iterator sends its own request when its `next()` is first called; dropping the
/// iterator (leaving the loop) or cancelling the task cancels that request.
public struct ProgressStream: AsyncSequence, Sendable {
    /// The events: progress, then the completed response.
    public typealias Element = ProgressResponse

    /// The only error the sequence throws.
    public typealias Failure = MoyaError

    /// Starts a request with a progress block and a completion, returning its token.
    typealias Start = @Sendable (_ progress: @escaping ProgressBlock, _ completion: @escaping Completion) -> any Cancellable

    private let start: Start

    init(start: @escaping Start) {
        self.start = start
    }

    /// Returns an iterator; its first `next()` sends the request.
    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: ProgressChannel(start: start))
    }

    /// Iterates over the events of one request.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        /// The events: progress, then the completed response.
        public typealias Element = ProgressResponse

        /// The only error the iterator throws.
        public typealias Failure = MoyaError

        private let channel: ProgressChannel

        init(channel: ProgressChannel) {
            self.channel = channel
        }

        /// Returns the next event, `nil` after the completed one, or throws the request's error.
        public mutating func next() async throws(MoyaError) -> ProgressResponse? {
            try await channel.next().get()
        }

        /// Returns the next event, `nil` after the completed one, or throws the request's error.
        ///
        /// - Parameter actor: The caller's isolation; the event is handed over without a hop.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MoyaError) -> ProgressResponse? {
            try await channel.next().get()
        }
    }
}
