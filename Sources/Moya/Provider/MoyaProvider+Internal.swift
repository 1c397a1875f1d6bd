import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MoyaProvider {
    /// The request pipeline behind ``request(_:callbackQueue:progress:completion:)``: endpoint,
    /// in-flight merging, request closure, then a stub or a real request.
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
        let endpoint = self.endpoint(target)
        let stubBehavior = self.stubClosure(target)
        if sendsCommonRequestsDirectly, progress == nil, case .never = stubBehavior, endpoint.task.keepsBodyInMemory {
            let request = DirectRequest(
                session: session, callbackQueue: callbackQueue, validation: target.validationType,
                metricsTargetName: session.requestMetrics?.targetName(of: target), completion: completion)
            requestClosure(endpoint) { request.send($0) }
            return request
        }
        let plugins = self.plugins
        // Plugins take the target as `any TargetType`: box it once, and only when there are any.
        let pluginTarget: UncheckedSendable<any TargetType>? = plugins.isEmpty ? nil : UncheckedSendable(target)

        let subscriberCompletion: Moya.Completion
        if let pluginTarget {
            subscriberCompletion = { result in
                completion(plugins.process(result, anyTarget: pluginTarget.value))
            }
        } else {
            subscriberCompletion = completion
        }

        // Join a flight already on its way, or start one.
        let (flight, subscriberID, isLeader) = register(
            endpoint: endpoint, completion: subscriberCompletion, callbackQueue: callbackQueue, pluginTarget: pluginTarget)
        let cancellableToken = RequestTicket(flight: flight, subscriberID: subscriberID)
        guard isLeader else { return cancellableToken }

        let performNetworking: RequestResultClosure = { [self] requestResult in
            switch requestResult {
            case .success(let urlRequest):
                guard flight.requestBuilt() else { return }
                performRequest(
                    target,
                    request: urlRequest,
                    callbackQueue: callbackQueue,
                    progress: progress,
                    flight: flight,
                    endpoint: endpoint,
                    stubBehavior: stubBehavior,
                    pluginTarget: pluginTarget?.value
                )
            case .failure(let error):
                // As in Moya, plugins never saw this request, so they are not told of its end.
                DispatchQueue.moyaDeliver(.failure(error), on: callbackQueue, to: flight.end(with:))
            }
        }

        requestClosure(endpoint, performNetworking)
        return cancellableToken
    }

    /// Tells every plugin that `target` was cancelled, then calls `completion` with the
    /// cancellation error (`NSURLErrorCancelled` in `NSURLErrorDomain`).
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

    private func register(
        endpoint: Endpoint, completion: @escaping Moya.Completion, callbackQueue: DispatchQueue?, pluginTarget: UncheckedSendable<any TargetType>?
    ) -> (RequestFlight, Int, Bool) {
        guard trackInflights else {
            let flight = RequestFlight(endpoint: endpoint, callbackQueue: callbackQueue, plugins: plugins)
            let id = flight.subscribe(completion, callbackQueue: callbackQueue, pluginTarget: pluginTarget) ?? 0
            return (flight, id, true)
        }
        // Built once, outside the lock: it builds the endpoint's request.
        let identity = EndpointIdentity(endpoint: endpoint)
        let table = inflightFlights
        return table.withLock { flights in
            if let flight = flights[identity], let id = flight.subscribe(completion, callbackQueue: callbackQueue, pluginTarget: pluginTarget) {
                return (flight, id, false)
            }
            let flight = RequestFlight(endpoint: endpoint, identity: identity, table: table, callbackQueue: callbackQueue, plugins: plugins)
            let id = flight.subscribe(completion, callbackQueue: callbackQueue, pluginTarget: pluginTarget) ?? 0
            flights[identity] = flight
            return (flight, id, true)
        }
    }

    // MARK: - Sending

    private func performRequest(
        _ target: Target,
        request: URLRequest,
        callbackQueue: DispatchQueue?,
        progress: Moya.ProgressBlock?,
        flight: RequestFlight,
        endpoint: Endpoint,
        stubBehavior: Moya.StubBehavior,
        pluginTarget: (any TargetType)?
    ) {
        switch stubBehavior {
        case .never:
            break
        case .immediate, .delayed:
            // Stubs report one final progress event, with the response when there is one.
            var stubCompletion: Moya.Completion =
                progress.map { progress in
                    { result in
                        progress(ProgressResponse(progress: ProgressReporter.snapshot(completed: 1, total: 1), response: try? result.get()))
                        flight.end(with: result)
                    }
                } ?? flight.end(with:)
            // Metrics hook (start): the request goes to a stub; it finishes with the stub's
            // result, or as cancelled when a cancel stops the stub (`attach`).
            let measurement = session.requestMetrics?.start(request, stubbed: true, target: target)
            if let measurement {
                stubCompletion = { [stubCompletion] result in
                    measurement.finish(result)
                    stubCompletion(result)
                }
            }
            let token = stubRequest(
                target, request: request, callbackQueue: callbackQueue, completion: stubCompletion, endpoint: endpoint, stubBehavior: stubBehavior)
            flight.attach(.stub(token), measurement: measurement)
            return
        }

        let send = SendContext(target: target, pluginTarget: pluginTarget, callbackQueue: callbackQueue, progress: progress, flight: flight)
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
        case .downloadDestination(let destination), .downloadParameters(_, _, let destination):
            sendRequest(request, send, destination: destination)
        }
    }

    /// What the sending functions need to know of one request besides the request itself.
    struct SendContext {
        let target: Target
        /// The target as plugins see it; `nil` when there are no plugins.
        let pluginTarget: (any TargetType)?
        let callbackQueue: DispatchQueue?
        let progress: Moya.ProgressBlock?
        let flight: RequestFlight
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
    ///
    /// - Parameter measurement: The request's metrics, which end with `error`; `nil` without
    ///   metrics.
    func fail(_ send: SendContext, error: MoyaError, measurement: RequestMeasurement?) {
        let delivery = RequestDelivery(
            flight: send.flight, callbackQueue: send.callbackQueue, isSerialDeliveryNeeded: false, plugins: plugins,
            target: send.pluginTarget, validation: .none, progress: nil, destination: nil, temporaryDirectory: session.configuration.temporaryDirectory,
            measurement: measurement
        )
        delivery.deliver(.failure(error))
    }

    /// Prepares and sends a request: a data request, a streamed upload (`body`), or a download
    /// to `destination`. Progress events and the completion go to the callback queue.
    func sendRequest(_ request: URLRequest, _ send: SendContext, body: StreamedBody? = nil, destination: DownloadRequest.Destination? = nil) {
        let (preparedRequest, credentials) = prepareAndAnnounce(applyingTimeout(of: send.target, to: request), pluginTarget: send.pluginTarget)
        // Metrics hook (start): the request, as the plugins prepared it, goes to the transport
        // (or fails just before). It finishes in `RequestDelivery.deliver`, or as cancelled when
        // a cancel stops the transport (`attach`).
        let measurement = session.requestMetrics?.start(
            preparedRequest, requestBodyBytes: body.map { Int64(clamping: $0.length) }, stubbed: false, target: send.target)

        if let error = preparedRequest.bodyInGETRequestError {
            fail(send, error: error, measurement: measurement)
            return
        }

        let interceptors = self.interceptors(for: send.target)
        let delivery = RequestDelivery(
            flight: send.flight,
            callbackQueue: send.callbackQueue,
            isSerialDeliveryNeeded: send.progress != nil || !interceptors.isEmpty,
            plugins: plugins,
            target: send.pluginTarget,
            validation: send.target.validationType,
            progress: send.progress,
            destination: destination,
            temporaryDirectory: session.configuration.temporaryDirectory,
            measurement: measurement
        )

        // The credential goes only to the origin of the request the plugins attached it to.
        let credential = ScopedCredential(credentials?.credential, for: preparedRequest.url)
        let handle: TransportHandle
        if interceptors.isEmpty {
            handle = session.send(
                TransportRequest(urlRequest: preparedRequest, credential: credential, body: body, download: delivery.makeDownload()),
                progress: delivery.progressHandler,
                completion: { delivery.transportFinished($0, sentRequest: preparedRequest) }
            )
        } else {
            let exchange = InterceptedExchange(
                session: session,
                request: preparedRequest,
                credential: credential,
                body: body,
                makeDownload: delivery.makeDownload,
                progress: delivery.progressHandler,
                interceptors: interceptors,
                validation: send.target.validationType,
                willRetry: delivery.willRetry,
                finish: delivery.transportFinished,
                fail: { delivery.deliver(.failure($0)) }
            )
            exchange.start()
            handle = TransportHandle(cancel: exchange.cancel)
        }
        send.flight.attach(.transport(handle), measurement: measurement)
    }
}

extension Task {
    /// Whether the request's body, if any, is built in memory: every task but the uploads and
    /// downloads, which the transport streams.
    var keepsBodyInMemory: Bool {
        switch self {
        case .requestPlain, .requestData, .requestJSONEncodable, .requestCustomJSONEncodable, .requestParameters,
            .requestCompositeData, .requestCompositeParameters:
            return true
        case .uploadFile, .uploadMultipart, .uploadMultipartFormData, .uploadCompositeMultipart,
            .uploadCompositeMultipartFormData, .downloadDestination, .downloadParameters:
            return false
        }
    }
}
