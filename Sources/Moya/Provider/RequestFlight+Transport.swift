import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The flight as the transport's owner, and the delivery of a sent request's outcome: the
/// transport's result becomes Moya's (validated, a download moved to its destination), the
/// plugins see it, and the callers get it, all on the delivery queue.
extension RequestFlight: TransportOwner {
    func transportStarted(_ attempt: any TransportAttempt) -> Bool {
        attach(.transport(attempt))
    }

    var transportIsWanted: Bool {
        isActive
    }

    func transportDroppedResumePoint() {
        locked { $0.droppedResume() }
    }

    func transportObserved(_ event: ResilienceEvent) {
        observe(event)
    }

    func transportStreamStarted(_ head: TransportResponse, request: URLRequest) -> StreamHeadAnswer {
        handOverStream(head, request: request) ? .readOn : .stop
    }

    /// Hands the streamed head to the callers (``streamStarted(_:)``); whether to read on.
    func handOverStream(_ head: TransportResponse, request: URLRequest) -> Bool {
        // A stream's deadline ends with its head: its body is read at the consumer's pace.
        if let deadline, let handle = locked({ $0.deadline?.disarm() ?? nil }) {
            deadline.timer.cancel(handle)
        }
        return streamStarted(
            Moya.Response(statusCode: head.statusCode, data: Data(), request: request, deferredResponse: head.response, cacheStatus: head.cacheStatus))
    }

    /// Takes the transport's result for `request`, the request as it was sent. A connection the
    /// result opened (a WebSocket's, with its `101`) goes to the flight's ``webSocketSink``, where
    /// the caller takes it; without one, it is abandoned.
    func transportFinished(_ result: Result<TransportResponse, any Error>, request: URLRequest) {
        transportFinished(result, request: request, made: nil)
    }

    /// ``transportFinished(_:request:)``, where the interceptors were shown the result as
    /// `made` (its response, made with `request`): the caller gets that same response.
    func transportFinished(_ result: Result<TransportResponse, any Error>, request: URLRequest, made: Moya.Response?) {
        if case .failure(let error as CircuitOpenError) = result {
            observe(.circuitOpen(error))
        } else if case .failure(let error as ConcurrencyLimitError) = result {
            observe(.concurrencyLimited(error))
        } else if case .failure(let error as RateLimitError) = result {
            observe(.rateLimited(error))
        }
        if case .success(let response) = result, let upgraded = response.upgraded {
            if let connection = upgraded as? WebSocketConnection, let webSocketSink {
                webSocketSink.offer(connection)
            } else {
                upgraded.abandon()
            }
        }
        guard isDownload, case .success(let response) = result, let fileURL = response.fileURL else {
            // A stream's response holds no body: its size is what was streamed.
            let streamed = streamSink == nil ? nil : (try? result.get())?.streamedByteCount
            finish(Self.result(of: result, request: request, validation: validation, made: made), .sent, responseBodyBytes: streamed)
            return
        }
        // The download's response is complete: its metrics end here, with the file's size
        // (placing the file is not part of the request).
        if measures, let measurement = locked({ $0.takeMeasurement() }) {
            measurement.finish(
                Self.result(of: result, request: request, validation: validation),
                responseBodyBytes: (try? FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? NSNumber)?.int64Value)
        }
        // Moving a file may copy it between file systems: keep that off the event loop and off
        // the callback queue.
        DispatchQueue.global(qos: .utility).moyaDeliver(()) { [self] _ in
            // No destination once the request ended (cancelled): the file has nowhere to go.
            guard let destination = locked({ $0.destination }) else {
                PartialFile.discard(fileURL)
                return
            }
            // The delivered response's body is empty, as in Moya.
            let placed = DownloadPlacement.place(response.httpResponse, from: fileURL, destination: destination).map {
                TransportResponse(response: response.response, data: Data(), fileURL: nil)
            }
            finish(Self.result(of: placed, request: request, validation: validation), .sent)
        }
    }

    // MARK: - Delivery

    /// Progress for the transport, when a progress block wants it.
    var progressHandler: TransportProgressHandler? {
        guard let reporter else { return nil }
        return { completed, total in reporter.report(completed: completed, total: total) }
    }

    /// What the transport sends for `urlRequest`, one attempt of this flight: with `body` and
    /// `credential`, and the flight's mode (a WebSocket's upgrade, a stream, a new sink for a
    /// download's body, or memory).
    ///
    /// `refillsBudget`: the first attempt of a request with interceptors, which refills its
    /// origin's retry budget (``TransportRequest/refillsBudget``).
    ///
    /// `isFirst`: the request's first attempt, which its deadline counted as it was armed
    /// (``armDeadline()``); every later one is counted here.
    func transportRequest(_ urlRequest: URLRequest, credential: ScopedCredential?, body: StreamedBody?, refillsBudget: Bool = false, isFirst: Bool)
        -> TransportRequest
    {
        let mode: TransportRequest.Mode
        if let webSocketSink {
            mode = .upgrade(webSocketSink)
        } else if let streamSink {
            mode = .stream(streamSink)
        } else if isDownload {
            let validation = self.validation
            mode = .download(DownloadSink(folder: downloadFolder, accepts: { validation.accepts($0) }, resume: locked { $0.resume }))
        } else {
            mode = .memory
        }
        var deadlineAt: TimeInterval?
        if let deadline {
            let endsAt = locked { machine in
                if !isFirst { machine.deadline?.attemptSent() }
                return machine.deadline?.endsAt
            }
            // Armed as the first attempt was sent, the deadline ends at a time the clock need not
            // be read for; a flight that ended before it was armed counts it from now.
            deadlineAt = endsAt ?? deadline.timer.now() + deadline.seconds
        }
        var hedging: HedgingPolicy?
        if case .memory = mode { hedging = self.hedging }
        // Made whole in one initialisation: a request made and then changed field by field was
        // copied once more, and the copy destroyed, on every attempt.
        return TransportRequest(
            urlRequest: urlRequest, credential: credential, body: body, mode: mode, traceContext: traceContext, refillsBudget: refillsBudget,
            hedging: hedging, route: route, deadlineAt: deadlineAt)
    }

    /// Tells the plugins, on the delivery queue, that `request` is sent again after `result`:
    /// always before the request's end, which waits for the notice when it comes first
    /// (``RequestStateMachine/deferAnnouncement(_:)``) and is then queued behind everything
    /// handed to the delivery queue meanwhile (the next attempt's events).
    ///
    /// The notices keep their order, and their place among the exchange's other events: they
    /// go through the flight's own serial delivery queue when it has one, and otherwise through
    /// a serial queue of their own, made at the first, in front of a callback queue that may be
    /// concurrent.
    func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int) {
        guard pluginTarget != nil,
            let noticeQueue = locked({
                $0.retryNoticeSent { hasOwnQueue ? queue : DispatchQueue(label: "org.moya.retry-notices", target: queue) }
            })
        else { return }
        noticeQueue.moyaDeliver(result) { [self] result in
            // A cancel ends the request on its caller's queue without waiting.
            if locked({ $0.mayMakeRetryNotice }), let pluginTarget {
                plugins.willRetry(request, after: result, attempt: attempt, anyTarget: pluginTarget)
            }
            // Queued, not run here: an event handed to the delivery queue after this notice and
            // before the end (the last attempt's adapted headers, a streamed response's head)
            // is heard before the end, as it happened.
            if let announcement = locked({ $0.retryNoticeMade() }) {
                queue.moyaDeliver(announcement)
            }
        }
    }

    /// Turns a transport result into Moya's result, validating the status code; its response is
    /// `made` when one was made of it already (with `request`).
    static func result(
        of transportResult: Result<TransportResponse, any Error>, request: URLRequest, validation: ValidationType, made: Moya.Response? = nil
    ) -> Result<Moya.Response, MoyaError> {
        switch transportResult {
        case .success(let transportResponse):
            let response =
                made
                ?? Moya.Response(
                    statusCode: transportResponse.statusCode,
                    data: transportResponse.data,
                    request: request,
                    deferredResponse: transportResponse.response,
                    cacheStatus: transportResponse.cacheStatus
                )
            guard validation.accepts(response.statusCode) else {
                return .failure(.statusCode(response))
            }
            return .success(response)
        case .failure(let error):
            return .failure(.underlying(TransportError.translate(error), nil))
        }
    }
}

extension RequestFlight {
    /// Keeps `event` for the request's ``ResiliencePluginType`` plugins, which hear of it on the
    /// delivery queue as the request ends, before its `didReceive` (a concurrent callback queue
    /// would not keep an event sent on its own before the end).
    func observe(_ event: ResilienceEvent) {
        guard pluginTarget != nil, plugins.contains(where: { $0 is any ResiliencePluginType }) else { return }
        locked { $0.heard(event) }
    }

    /// Tells the request's ``ResiliencePluginType`` plugins of `events`, here, on the delivery
    /// queue, as the request ends.
    func announce(_ events: [ResilienceEvent], target: any TargetType) {
        for event in events {
            for plugin in plugins {
                (plugin as? any ResiliencePluginType)?.resilience(event, target: target)
            }
        }
    }
}

extension RequestFlight: ResilienceTimerTarget {
    /// Starts the request's deadline, if it has one, as its first attempt is sent (counted
    /// here): when it runs out first, the request stops and fails with ``RequestDeadlineError``.
    func armDeadline() {
        // The timer holds the flight itself until the deadline runs out or the flight ends
        // (which cancels it): no closure, and no weak reference, to make for every request.
        guard let (seconds, timer) = deadline else { return }
        let start = timer.now()
        let handle = timer.schedule(after: seconds, from: start, target: self)
        // A flight that ended meanwhile has nothing left to count.
        let ended = locked { machine in
            guard machine.phase != .finished else { return true }
            machine.deadline?.armed(at: start, handle: handle)
            return false
        }
        if ended { timer.cancel(handle) }
    }

    /// The seconds left before the deadline, its length and the attempts sent so far; `nil`
    /// without a deadline.
    var deadlineLeft: (remaining: TimeInterval, seconds: TimeInterval, attempts: Int)? {
        guard let timer = self.deadline?.timer, let deadline = locked({ $0.deadline }) else { return nil }
        return (deadline.remaining(at: timer.now()), deadline.seconds, deadline.attempts)
    }

    /// The deadline ran out.
    func timerFired() {
        guard let error = locked({ $0.deadline?.expire() ?? nil }), isActive else { return }
        observe(.deadlineExceeded(error))
        finish(.failure(.underlying(error, nil)), .deadline)
    }
}
