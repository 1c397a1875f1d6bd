import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MoyaProvider {
    /// Sends a request for `target` and returns its response as soon as the head has arrived,
    /// with the body to be read as it arrives.
    ///
    /// The request goes through the provider's pipeline: endpoint and request closures, stubs,
    /// plugins' `prepare` and `willSend`, interceptors, the target's time limit, the session's
    /// trust evaluation and tracing. The target's validation applies to the head: a rejected
    /// status code throws ``MoyaError/statusCode(_:)`` with a response that holds the first
    /// MiB of the error body. Interceptors decide on every head before it is handed over (an
    /// accepted one as a response with an empty body, its body unread meanwhile) and may retry
    /// it then, never after. The plugins' `didReceive` and `process` run once, at
    /// the end of the body: with a response that holds the head and no body, or with the
    /// error that ended the stream. A consumer that stops reading before the end (it leaves its
    /// loop, or lets go of the stream without reading it) ends the request with that response
    /// too, heard by `didReceive` alone; only a cancelled one (its task cancelled, or
    /// ``StreamedResponse/cancel()``) ends it with the cancellation error. When
    /// `process` turns a completed stream into a failure, the loop reading it throws that
    /// failure after the last chunk.
    ///
    /// ```swift
    /// let stream = try await provider.stream(.events)
    /// for try await line in stream.lines {
    ///     print(line)
    /// }
    /// ```
    ///
    /// Read the body once, through ``StreamedResponse/body``, ``StreamedResponse/lines`` or
    /// ``StreamedResponse/events``. Reading is paced by the consumer: when it falls behind by
    /// ``StreamOptions/bufferSize`` bytes, the connection is not read until it catches up. The
    /// stream may stay silent for ``StreamOptions/idleTimeout`` at most. Leaving the loop,
    /// cancelling the task or releasing the stream closes the connection. Each call sends its
    /// own request: streams are never merged by `trackInflights`.
    ///
    /// A stubbed target streams its sample data in chunks of ``StreamOptions/stubChunkSize``
    /// bytes; with `.delayed(seconds:)`, the head and then each chunk come after the delay.
    ///
    /// - Parameters:
    ///   - target:  What to request.
    ///   - options: The idle timeout, the buffer size, the stubs' chunk size and the parsers'
    ///              limits.
    /// - Returns: The response, its body still to read.
    /// - Throws: The request's `MoyaError`, up to the head.
    nonisolated(nonsending)
        public func stream(_ target: Target, options: StreamOptions = .default) async throws(MoyaError) -> StreamedResponse
    {
        try await stream(target, options: options, headers: [:])
    }

    /// ``stream(_:options:)`` with header fields added to the endpoint's (a reconnection's
    /// `Last-Event-ID`), and a body that replaces the task's.
    nonisolated(nonsending)
        func stream(_ target: Target, options: StreamOptions, headers: [String: String], body: StreamedBody? = nil) async throws(MoyaError)
        -> StreamedResponse
    {
        let buffer = StreamBuffer(highWatermark: options.bufferSize)
        // Without plugins nothing but the continuation runs on the callback queue.
        let queue = plugins.isEmpty ? DispatchQueue.moyaInline : (self.callbackQueue ?? ConcurrencyQueue.shared)
        let plan = self.plan(target, adding: headers)
        let validation = target.validationType
        let sink = StreamSink(
            buffer: buffer, accepts: { validation.accepts($0) }, idleTimeout: options.idleTimeout, stubChunkSize: options.stubChunkSize)
        // A stream has a flight of its own (never joined), whose callers get the head; its body
        // goes to `buffer`.
        let (flight, awaited) = makeAwaitedFlight(
            for: target, plan: plan, callbackQueue: queue, streamSink: sink, body: body,
            completion: { Self.streamHeadCompletion($0, plan: plan, buffer: buffer) })
        // The consumer stopping stops the request. The handler keeps the flight; the buffer lets
        // go of it when the stream ends, and the flight lets go of the buffer's handler when it
        // ends before its head was handed over. A consumer that is done with the body (it left
        // its loop, or let go of the stream unread) ends the request with its response, as
        // plugins then hear it; only a cancelled one ends it with the cancellation.
        let handedOver = Protected<Moya.Response?>(nil)
        buffer.setStopHandler { cancelled in
            if !cancelled, let head = handedOver.withLock({ $0 }) {
                flight.finish(.success(head), .streamStopped, responseBodyBytes: buffer.appendedByteCount)
            } else {
                flight.finish(.failure(.requestCancelled), .streamStopped, responseBodyBytes: buffer.appendedByteCount)
            }
        }
        let head = try await flight.perform(awaited) {
            launch(target, plan: plan, flight: flight, callbackQueue: queue, progress: nil)
        }
        handedOver.withLock { $0 = head }
        return StreamedResponse(head: head, buffer: buffer, options: options)
    }

    /// The completion of a stream's caller: the head goes to it as it is; a failure before the
    /// head is the request's result, which `process` sees now. Should `process` turn it into a
    /// success, that response's data is the whole body.
    private static func streamHeadCompletion(_ completion: @escaping Moya.Completion, plan: RequestPlan, buffer: StreamBuffer) -> Moya.Completion {
        guard let pluginTarget = plan.pluginTarget else { return completion }
        let plugins = plan.plugins
        return { result in
            guard case .failure = result else {
                completion(result)
                return
            }
            let processed = plugins.process(result, anyTarget: pluginTarget.value)
            if case .success(let response) = processed {
                buffer.finish(wholeBody: response.data)
            }
            completion(processed)
        }
    }

    /// Streams `endpoint`'s sample response: the head, then the data in chunks of the stream's
    /// ``StreamOptions/stubChunkSize`` bytes, each after the delay of `.delayed`, at the pace of
    /// the consumer. The stub is the flight's work, so a cancel stops it.
    func stubStream(_ target: Target, request: URLRequest, flight: RequestFlight, endpoint: Endpoint, stubBehavior: Moya.StubBehavior) {
        let preparedRequest = notifyPluginsOfImpendingStub(for: request, target: target)
        flight.measure(session.requestMetrics?.start(preparedRequest, stubbed: true, target: target))
        let delay: TimeInterval = if case .delayed(let seconds) = stubBehavior { max(0, seconds) } else { 0 }
        let validation = target.validationType
        let sample = UncheckedSendable(endpoint.sampleResponseClosure)
        let chunkSize = max(1, flight.streamSink?.stubChunkSize ?? 1)
        let stub = _Concurrency.Task {
            guard await Self.stubDelay(delay) else { return }
            // The sample as a plain stub delivers it; a success then streams its data.
            let whole: Moya.Response
            switch Self.stubResult(sample.value(), request: preparedRequest, validation: validation) {
            case .success(let response):
                whole = response
            case .failure(let error):
                flight.finish(.failure(error), .sent)
                return
            }
            let data = whole.data
            let head = Moya.Response(statusCode: whole.statusCode, data: Data(), request: preparedRequest, response: whole.response)
            guard flight.streamStarted(head), let sink = flight.streamSink else { return }
            let buffer = sink.buffer
            var offset = data.startIndex
            while offset < data.endIndex {
                // A cancel stops this task (the flight's driver).
                guard await Self.stubDelay(delay) else { return }
                let end = data.index(offset, offsetBy: chunkSize, limitedBy: data.endIndex) ?? data.endIndex
                let chunk = Data(data[offset..<end])
                offset = end
                switch sink.append(chunk) {
                case .more:
                    break
                case .moreAndWake:
                    buffer.wakeConsumer()
                case .pause:
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        buffer.waitForDemand { continuation.resume() }
                    }
                case .stopped:
                    return
                }
            }
            flight.finish(.success(head), .sent, responseBodyBytes: Int64(data.count))
        }
        flight.attach(.driver(stub))
    }

    /// Waits `seconds` (none for zero); `false` when the task was cancelled.
    private static func stubDelay(_ seconds: TimeInterval) async -> Bool {
        if seconds > 0 {
            try? await _Concurrency.Task.sleep(nanoseconds: UInt64(min(seconds, 86_400) * 1_000_000_000))
        }
        return !_Concurrency.Task.isCancelled
    }
}

extension MoyaProvider {
    /// The Server-Sent Events of `target`, reconnecting when the stream ends or fails.
    ///
    /// Every connection is a ``stream(_:options:)`` of `target` through the provider's whole
    /// pipeline; a reconnection adds the `Last-Event-ID` header with the last event ID received.
    /// When to reconnect, and when to give up, is `reconnection`'s to say; a 204 (No Content)
    /// response ends the sequence, as the Server-Sent Events standard says.
    ///
    /// ```swift
    /// for try await event in provider.events(.notifications) {
    ///     print(event.event ?? "message", event.data)
    /// }
    /// ```
    ///
    /// Nothing is sent until the iteration starts; each iteration connects on its own.
    ///
    /// - Parameters:
    ///   - target:       The event stream's target.
    ///   - reconnection: When to reconnect; ``ReconnectionPolicy/never`` for one stream only.
    ///   - options:      How each connection is read.
    /// - Returns: The events, across reconnections.
    public func events(
        _ target: Target, reconnection: ReconnectionPolicy = .default, options: StreamOptions = .default
    ) -> ServerSentEventStream {
        // The target is only read when a connection is opened.
        let target = UncheckedSendable(target)
        var events = ServerSentEventStream(
            connect: { headers async throws(MoyaError) -> StreamedResponse in
                try await self.stream(target.value, options: options, headers: headers)
            },
            policy: reconnection,
            options: options
        )
        // A reconnection is a retry: it draws from the retry budget of the target's origin,
        // which the first connection refills.
        let resilience = session.parts.policies
        if resilience.options.retryBudget != nil {
            events.budget = { reconnecting in
                let url = target.value.baseURL
                if reconnecting {
                    return resilience.withdrawRetry(to: url) == nil
                }
                resilience.recordRequest(to: url)
                return true
            }
        }
        return events
    }
}
