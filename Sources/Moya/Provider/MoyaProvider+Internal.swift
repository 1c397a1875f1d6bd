import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MoyaProvider {
    /// The request pipeline behind ``request(_:callbackQueue:progress:completion:)``: endpoint,
    /// in-flight merging, request closure, then a stub or a real request.
    ///
    /// Public because Moya 15 made it public, and subclasses written for it call it from their
    /// own `request(_:callbackQueue:progress:completion:)`. Other code calls `request`.
    ///
    /// - Parameters:
    ///   - target:        What to request.
    ///   - callbackQueue: Where progress and completion run; `nil` for the main queue.
    ///   - progress:      Progress events, if wanted.
    ///   - completion:    Called exactly once with the result.
    /// - Returns: A token that cancels this caller's request.
    public func requestNormal(_ target: Target, callbackQueue: DispatchQueue?, progress: Moya.ProgressBlock?, completion: @escaping Moya.Completion)
        -> Cancellable
    {
        let plan = self.plan(target)
        // Join a flight already on its way, or start one.
        let (flight, subscriberID, isLeader) = register(
            endpoint: plan.endpoint, completion: plan.processing(completion), callbackQueue: callbackQueue, pluginTarget: plan.pluginTarget,
            makeFlight: { identity, table, caller in
                makeFlight(for: target, plan: plan, callbackQueue: callbackQueue, progress: progress, identity: identity, table: table, firstCaller: caller)
            })
        let cancellableToken = RequestTicket(flight: flight, subscriberID: subscriberID)
        if isLeader {
            launch(target, plan: plan, flight: flight, callbackQueue: callbackQueue, progress: progress)
        }
        return cancellableToken
    }

    /// What the provider works out for a target before anything is sent.
    struct RequestPlan {
        /// The target's endpoint.
        let endpoint: Endpoint
        /// Whether and how to stub it.
        let stubBehavior: Moya.StubBehavior
        /// The provider's and the target's interceptors.
        let interceptors: InterceptorChain
        /// The target as plugins see it, boxed once; `nil` without plugins.
        let pluginTarget: UncheckedSendable<any TargetType>?
        /// The provider's plugins.
        let plugins: [any PluginType]
        /// The plugins among them that hear of the exchange's inside.
        let observers: [any ExchangePluginType]

        /// `completion` as a caller of the flight: with plugins, their `process` runs first.
        func processing(_ completion: @escaping Moya.Completion) -> Moya.Completion {
            guard let pluginTarget else { return completion }
            let plugins = self.plugins
            return { result in completion(plugins.process(result, anyTarget: pluginTarget.value)) }
        }
    }

    /// The endpoint (with `headers` added), stubbing and interceptors of `target`.
    func plan(_ target: Target, adding headers: [String: String] = [:]) -> RequestPlan {
        var endpoint = self.endpoint(target)
        if !headers.isEmpty {
            endpoint = endpoint.adding(newHTTPHeaderFields: headers)
        }
        let plugins = self.plugins
        return RequestPlan(
            endpoint: endpoint,
            stubBehavior: stubClosure(target),
            interceptors: interceptors(for: target),
            // Plugins take the target as `any TargetType`: box it once, and only when there are any.
            pluginTarget: plugins.isEmpty ? nil : UncheckedSendable(target),
            plugins: plugins,
            observers: exchangePlugins
        )
    }

    /// A new flight for `target`, with `firstCaller` as its first caller, or with no caller yet.
    ///
    /// - Parameters:
    ///   - identity:   For a flight that other callers can join (`trackInflights`), its key in
    ///                 `table`.
    ///   - streamSink: For a streamed response, where its body goes.
    ///   - body:       A body given with the request, which replaces the task's.
    func makeFlight(
        for target: Target, plan: RequestPlan, callbackQueue: DispatchQueue?, progress: Moya.ProgressBlock?,
        identity: EndpointIdentity? = nil, table: Protected<[EndpointIdentity: RequestFlight]>? = nil, streamSink: StreamSink? = nil,
        webSocketSink: WebSocketSink? = nil, body: StreamedBody? = nil, resume: ResumePoint? = nil, firstCaller: RequestSubscriber? = nil
    ) -> RequestFlight {
        // The target's own resilience settings (``ResilienceCustomizable``; a ``MultiTarget``
        // asks the target it wraps), cast once, and only when its type may have them.
        let custom = targetsMayCustomize ? MoyaProvider.unwrapped(target, as: (any ResilienceCustomizable).self)?.resilience : nil
        let hedging = hedging(custom, method: plan.endpoint.method, readsIntoMemory: streamSink == nil && webSocketSink == nil)
        // What the policies learn per route: the route is made only when they do.
        let learnsPerRoute: Bool
        if case .percentile = hedging?.delay {
            learnsPerRoute = true
        } else {
            learnsPerRoute = session.parts.policies.options.concurrencyLimit?.adaptive != nil
        }
        return RequestFlight(
            endpoint: plan.endpoint,
            identity: identity,
            table: table,
            callbackQueue: callbackQueue,
            // Events and the completion keep their order, even on a concurrent queue (a stream's
            // plugins run after its head was delivered; an exchange plugin hears the exchange's
            // events before its end). Interceptors need no serial queue: a retry's notice
            // keeps its order on its own (`RequestFlight.willRetry`).
            isSerialDeliveryNeeded: progress != nil || !plan.observers.isEmpty
                || (streamSink != nil && !plan.plugins.isEmpty),
            plugins: plan.plugins,
            pluginTarget: plan.pluginTarget?.value,
            observers: plan.observers,
            // A WebSocket's handshake succeeds with its 101 only.
            validation: webSocketSink == nil ? target.validationType : .customCodes([101]),
            progress: progress,
            downloadFolder: session.parts.downloadFolder,
            measures: session.requestMetrics != nil,
            streamSink: streamSink,
            webSocketSink: webSocketSink,
            requestBody: body,
            // Made in the caller's call (`request`, `stream`, or an awaiting task), so its
            // task-local context is the caller's.
            traceContext: session.callerTraceContext(for: target),
            resume: resume,
            firstCaller: firstCaller,
            hedging: hedging,
            route: learnsPerRoute ? TargetRoute(of: target, mayBeNamed: targetsMayBeNamed) : .unnamed,
            deadline: (custom?.deadline ?? session.parts.policies.options.deadline).map { ($0, session.parts.policies.timer) }
        )
    }

    /// The hedging policy of a request: its target's (`custom`) or the session's, when the
    /// request may be sent twice at once (an idempotent `method`, or a target that says so) and
    /// is read into memory (a download's is dropped with its mode, ``RequestFlight/transportRequest(_:credential:body:refillsBudget:)``).
    private func hedging(_ custom: TargetResilience?, method: Moya.Method, readsIntoMemory: Bool) -> HedgingPolicy? {
        guard readsIntoMemory else { return nil }
        guard let policy = custom?.hedging ?? session.parts.policies.options.hedging, policy.hedges else { return nil }
        guard custom?.isIdempotent ?? HedgingPolicy.isIdempotent(method.rawValue) else { return nil }
        return policy
    }

    /// A new flight whose first caller is the calling task, and the slot that caller's completion
    /// fills: ``RequestFlight/perform(_:launch:)`` awaits it. The completion is `completion`
    /// made from the slot's (by default, the plugins' `process` in front of it).
    ///
    /// - Parameters:
    ///   - streamSink: For a streamed response, where its body goes.
    ///   - webSocketSink: For a WebSocket, where its connection goes.
    ///   - body:       A body given with the request, which replaces the task's.
    ///   - resume:     Where a resumed download goes on from.
    func makeAwaitedFlight(
        for target: Target, plan: RequestPlan, callbackQueue: DispatchQueue, streamSink: StreamSink? = nil, webSocketSink: WebSocketSink? = nil,
        body: StreamedBody? = nil, resume: ResumePoint? = nil, completion: ((@escaping Moya.Completion) -> Moya.Completion)? = nil
    ) -> (RequestFlight, AwaitedResult) {
        let awaited = AwaitedResult.make()
        let fulfil: Moya.Completion = awaited.fulfil
        let caller = RequestSubscriber.first(
            completion.map { $0(fulfil) } ?? plan.processing(fulfil), callbackQueue: callbackQueue, pluginTarget: plan.pluginTarget)
        let flight = makeFlight(
            for: target, plan: plan, callbackQueue: callbackQueue, progress: nil, streamSink: streamSink, webSocketSink: webSocketSink, body: body,
            resume: resume, firstCaller: caller)
        return (flight, awaited)
    }

    /// The one way into the pipeline once a flight has its first caller: the request closure
    /// builds the request, then a stub or the transport sends it. Every request, plain or
    /// streamed, callback or async, goes through here.
    func launch(_ target: Target, plan: RequestPlan, flight: RequestFlight, callbackQueue: DispatchQueue?, progress: Moya.ProgressBlock?) {
        requestClosure(plan.endpoint) { [self] requestResult in
            switch requestResult {
            case .success(let urlRequest):
                guard flight.requestBuilt() else { return }
                performRequest(
                    target,
                    request: urlRequest,
                    callbackQueue: callbackQueue,
                    progress: progress,
                    flight: flight,
                    endpoint: plan.endpoint,
                    stubBehavior: plan.stubBehavior,
                    interceptors: plan.interceptors
                )
            case .failure(let error):
                // As in Moya, plugins never saw this request, so they are not told of its end.
                DispatchQueue.moyaDeliver(.failure(error), on: callbackQueue) { flight.finish($0, .unannounced) }
            }
        }
    }

    /// Tells every plugin that `target` was cancelled, then calls `completion` with the
    /// cancellation error (`NSURLErrorCancelled` in `NSURLErrorDomain`).
    ///
    /// Public because Moya 15 made it public (code that reimplements `requestNormal` calls it);
    /// the provider itself ends a cancelled request through its flight.
    ///
    /// - Parameters:
    ///   - completion: Receives the error.
    ///   - target:     The cancelled target.
    public func cancelCompletion(_ completion: Moya.Completion, target: Target) {
        let error = MoyaError.requestCancelled
        plugins.didReceive(.failure(error), target: target)
        completion(.failure(error))
    }

    // MARK: - Flights

    /// Joins a flight already on its way (`trackInflights`), or starts one with `makeFlight`
    /// (given the flight's identity and the table, with `trackInflights`, and the caller, who
    /// joins a new flight as it is made).
    ///
    /// - Returns: The flight, the caller's id in it, and whether the caller leads it (sends
    ///   the request).
    private func register(
        endpoint: Endpoint, completion: @escaping Moya.Completion, callbackQueue: DispatchQueue?, pluginTarget: UncheckedSendable<any TargetType>?,
        makeFlight: (EndpointIdentity?, Protected<[EndpointIdentity: RequestFlight]>?, RequestSubscriber) -> RequestFlight
    ) -> (RequestFlight, Int, Bool) {
        let caller = RequestSubscriber.first(completion, callbackQueue: callbackQueue, pluginTarget: pluginTarget)
        guard trackInflights else {
            return (makeFlight(nil, nil, caller), RequestStateMachine<RequestFlight.Work>.firstSubscriberID, true)
        }
        // Built once, outside the lock: it builds the endpoint's request.
        let identity = EndpointIdentity(endpoint: endpoint)
        let table = inflightFlights
        return table.withLock { flights in
            if let flight = flights[identity], let id = flight.subscribe(completion, callbackQueue: callbackQueue, pluginTarget: pluginTarget) {
                return (flight, id, false)
            }
            let flight = makeFlight(identity, table, caller)
            flights[identity] = flight
            return (flight, RequestStateMachine<RequestFlight.Work>.firstSubscriberID, true)
        }
    }

    // MARK: - Sending

    func performRequest(
        _ target: Target,
        request: URLRequest,
        callbackQueue: DispatchQueue?,
        progress: Moya.ProgressBlock?,
        flight: RequestFlight,
        endpoint: Endpoint,
        stubBehavior: Moya.StubBehavior,
        interceptors: InterceptorChain
    ) {
        switch stubBehavior {
        case .never:
            break
        case .immediate, .delayed:
            if flight.webSocketSink != nil {
                stubWebSocket(
                    target, request: request, flight: flight, endpoint: endpoint, stubBehavior: stubBehavior, callbackQueue: callbackQueue)
                return
            }
            if flight.streamSink != nil {
                stubStream(target, request: request, flight: flight, endpoint: endpoint, stubBehavior: stubBehavior)
                return
            }
            // Metrics: the request goes to a stub.
            flight.measure(session.requestMetrics?.start(request, stubbed: true, target: target))
            // A provider that is not a subclass cannot have overridden `stubRequest`: its stub
            // ends through the flight, as a real request does.
            if type(of: self) == MoyaProvider<Target>.self {
                stubThroughFlight(
                    target, request: request, callbackQueue: callbackQueue, progress: progress, flight: flight, endpoint: endpoint, stubBehavior: stubBehavior)
                return
            }
            // Stubs report one final progress event, with the response when there is one.
            let stubCompletion: Moya.Completion =
                progress.map { progress in
                    { result in
                        progress(ProgressResponse(progress: ProgressReporter.snapshot(completed: 1, total: 1), response: try? result.get()))
                        flight.finish(result, .unannounced)
                    }
                } ?? { flight.finish($0, .unannounced) }
            let token = stubRequest(
                target, request: request, callbackQueue: callbackQueue, completion: stubCompletion, endpoint: endpoint, stubBehavior: stubBehavior)
            flight.attach(.stub(token))
            return
        }

        let send = SendContext(target: target, flight: flight, interceptors: interceptors)
        // A body given with the request replaces the task's (parameters in the URL stay).
        if let body = flight.requestBody {
            var request = request
            request.httpBody = nil
            sendRequest(request, send, body: body)
            return
        }
        switch endpoint.task {
        case .requestPlain, .requestData, .requestJSONEncodable, .requestCustomJSONEncodable, .requestParameters,
            .requestCompositeData, .requestCompositeParameters:
            sendRequest(request, send)
        case .uploadFile(let fileURL):
            sendUpload(request, send) { _ in
                try StreamedBody.file(at: fileURL)
            }
        case .uploadMultipartFormData(let form), .uploadCompositeMultipartFormData(let form, _):
            sendMultipart(request, send, isEmpty: form.parts.isEmpty) {
                RequestMultipartFormData(form)
            }
        case .uploadMultipart(let parts), .uploadCompositeMultipart(let parts, _):
            sendMultipart(request, send, isEmpty: parts.isEmpty) {
                let encoder = RequestMultipartFormData()
                encoder.applyMoyaMultipartFormData(parts)
                return encoder
            }
        case .downloadDestination, .downloadParameters:
            sendRequest(request, send)
        }
    }

    /// What the sending functions need to know of one request besides the request itself.
    struct SendContext {
        let target: Target
        /// The request's flight: its state, and where its outcome goes.
        let flight: RequestFlight
        /// The provider's and the target's interceptors.
        let interceptors: InterceptorChain
    }

    /// Runs `prepare` and `willSend` on every plugin (none when `pluginTarget` is `nil`) and
    /// returns the prepared request.
    func prepareAndAnnounce(_ request: URLRequest, pluginTarget: (any TargetType)?) -> (URLRequest, RequestCredentialStore?) {
        // Only a plugin can attach a credential.
        guard let pluginTarget else { return (request, nil) }
        let credentials = RequestCredentialStore()
        let preparedRequest = plugins.prepareAndAnnounce(request, anyTarget: pluginTarget) { preparedRequest in
            RequestTypeWrapper(request: preparedRequest, sessionHeaders: session.configuration.headers, credentials: credentials)
        }
        return (preparedRequest, credentials)
    }

    /// Fails a request before sending it: plugins see `prepare`, `willSend` and `didReceive`.
    func fail(_ send: SendContext, error: MoyaError) {
        send.flight.finish(.failure(error), .notSent)
    }

    /// Prepares and sends a request: a data request, a streamed upload (`body`), or a download
    /// (the flight's destination). Progress events and the completion go to the flight's
    /// delivery queue. Without `body`, a request whose `httpBodyStream` is set (by the request
    /// closure or a plugin) streams it.
    func sendRequest(_ request: URLRequest, _ send: SendContext, body: StreamedBody? = nil) {
        let flight = send.flight
        let (preparedRequest, credentials) = prepareAndAnnounce(applyingTimeout(of: send.target, to: request), pluginTarget: flight.pluginTarget)
        // Made once, here, so that every attempt (an interceptor's retry) knows whether it can be
        // sent again.
        var body = body ?? StreamedBody.bodyStream(of: preparedRequest)
        if let recorder = flight.requestRecorder, body != nil {
            recorder.describe(contentType: preparedRequest.value(forHTTPHeaderField: "Content-Type"))
            body?.recorder = recorder
        }
        // Metrics: the request, as the plugins prepared it, goes to the transport (or fails just
        // before). A body of unknown length counts what its last attempt sent.
        if let metrics = session.requestMetrics {
            var bodyBytes: (@Sendable () -> Int64)?
            if let streamed = body {
                bodyBytes = { streamed.measuredLength }
            }
            flight.measure(metrics.start(preparedRequest, requestBodyBytes: bodyBytes, stubbed: false, target: send.target))
        }

        if let error = preparedRequest.bodyInGETRequestError {
            fail(send, error: error)
            return
        }

        // The credential goes only to the origin of the request the plugins attached it to.
        let credential = ScopedCredential(credentials?.credential, for: preparedRequest.url)
        flight.armDeadline()
        if send.interceptors.isEmpty {
            session.send(
                // A request that may be hedged refills the budget its hedges draw from.
                flight.transportRequest(preparedRequest, credential: credential, body: body, refillsBudget: flight.hedging != nil, isFirst: true),
                progress: flight.progressHandler,
                owner: flight
            )
        } else {
            InterceptedExchange(
                flight: flight,
                session: session,
                request: preparedRequest,
                credential: credential,
                body: body,
                interceptors: send.interceptors,
                validation: flight.validation
            ).start()
        }
    }
}

extension Task {
    /// Where a download task's file goes; `nil` for every other task.
    var downloadDestination: DownloadRequest.Destination? {
        switch self {
        case .downloadDestination(let destination), .downloadParameters(_, _, let destination):
            return destination
        case .requestPlain, .requestData, .requestJSONEncodable, .requestCustomJSONEncodable, .requestParameters,
            .requestCompositeData, .requestCompositeParameters, .uploadFile, .uploadMultipart, .uploadMultipartFormData,
            .uploadCompositeMultipart, .uploadCompositeMultipartFormData:
            return nil
        }
    }
}
