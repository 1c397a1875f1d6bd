import Foundation

extension MoyaProvider {
    /// Sends a request for `target` whose body is `body`, streamed while it is produced, and
    /// returns its response.
    ///
    /// Everything else comes from the target and goes through the provider's pipeline as with
    /// ``request(_:)``: endpoint and request closures, stubs, plugins, interceptors, validation.
    /// `body` replaces any body the target's task describes; its URL parameters stay. Each call
    /// sends its own request: it is never merged with another by `trackInflights`, and it does
    /// not go through an override of the callback `request`.
    ///
    /// ```swift
    /// let lines = AsyncStream<[UInt8]> { continuation in
    ///     for index in 1...3 {
    ///         continuation.yield(Array("line \(index)\n".utf8))
    ///     }
    ///     continuation.finish()
    /// }
    /// let response = try await provider.request(.logs, body: RequestBodyStream(lines))
    /// ```
    ///
    /// The body's next chunk is asked for only once the connection has taken the previous one.
    /// Cancelling the calling task cancels the request and stops reading the body. See
    /// ``RequestBodyStream`` for the body's length, its errors, and when it may be sent again.
    ///
    /// - Parameters:
    ///   - target: What to request.
    ///   - body:   The request's body.
    /// - Returns: The response, after validation and the plugins' `process`.
    /// - Throws: The request's `MoyaError`; a body that fails or cannot be sent again fails it
    ///   with ``MoyaError/underlying(_:_:)``.
    nonisolated(nonsending)
        public func request(_ target: Target, body: RequestBodyStream) async throws(MoyaError) -> Response
    {
        // Without plugins nothing but the continuation runs on the callback queue.
        let queue = plugins.isEmpty ? DispatchQueue.moyaInline : (self.callbackQueue ?? ConcurrencyQueue.shared)
        let plan = self.plan(target)
        let (flight, awaited) = makeAwaitedFlight(for: target, plan: plan, callbackQueue: queue, body: StreamedBody(sequence: body))
        return try await flight.perform(awaited) {
            launch(target, plan: plan, flight: flight, callbackQueue: queue, progress: nil)
        }
    }

    /// Sends a request for `target` whose body is `body`, streamed while it is produced, and
    /// returns its response as soon as the head has arrived, with the response's body to be read
    /// as it arrives: ``stream(_:options:)`` with a body.
    ///
    /// The response can be read while the body is still being sent, when the server answers
    /// before the end of the request (an echo, a conversation, a transcription of audio as it
    /// is uploaded):
    ///
    /// ```swift
    /// let (questions, asker) = AsyncStream<Data>.makeStream()
    /// asker.yield(Data("question 1\n".utf8))
    /// let answers = try await provider.stream(.feed, body: RequestBodyStream(questions))
    /// var asked = 1
    /// for try await answer in answers.lines {
    ///     print(answer)
    ///     if asked < 3 {
    ///         asked += 1
    ///         asker.yield(Data("question \(asked)\n".utf8))
    ///     } else {
    ///         asker.finish()
    ///     }
    /// }
    /// ```
    ///
    /// `body` replaces any body the target's task describes; see ``request(_:body:)`` and
    /// ``RequestBodyStream``.
    ///
    /// - Parameters:
    ///   - target:  What to request.
    ///   - body:    The request's body.
    ///   - options: The idle timeout, the buffer size, the stubs' chunk size and the parsers'
    ///              limits.
    /// - Returns: The response, its body still to read.
    /// - Throws: The request's `MoyaError`, up to the head.
    nonisolated(nonsending)
        public func stream(_ target: Target, body: RequestBodyStream, options: StreamOptions = .default) async throws(MoyaError) -> StreamedResponse
    {
        try await stream(target, options: options, headers: [:], body: StreamedBody(sequence: body))
    }
}
