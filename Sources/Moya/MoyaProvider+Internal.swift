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
    public func requestNormal(_ target: Target, callbackQueue: DispatchQueue?, progress: Moya.ProgressBlock?, completion: @escaping Moya.Completion) -> Cancellable {
        let endpoint = self.endpoint(target)
        let stubBehavior = self.stubClosure(target)
        let plugins = self.plugins
        let cancellableToken = CancellableWrapper()

        let pluginsWithCompletion: Moya.Completion = { result in
            let processedResult = plugins.process(result, target: target)
            completion(processedResult)
        }

        // Join a flight already on its way, or start one.
        let (flight, subscriberID, isLeader) = register(endpoint: endpoint, completion: pluginsWithCompletion, callbackQueue: callbackQueue)
        let sendableTarget = UncheckedSendable(target)
        cancellableToken.setCancelAction { [self] in
            cancel(subscriber: subscriberID, of: flight, target: sendableTarget.value)
        }
        guard isLeader else { return cancellableToken }

        let performNetworking: RequestResultClosure = { [self] requestResult in
            guard flight.isActive else { return }
            switch requestResult {
            case .success(let urlRequest):
                performRequest(
                    target,
                    request: urlRequest,
                    callbackQueue: callbackQueue,
                    progress: progress,
                    flight: flight,
                    endpoint: endpoint,
                    stubBehavior: stubBehavior
                )
            case .failure(let error):
                // As in Moya, plugins never saw this request, so they are not told of its end.
                complete(flight, with: .failure(error), callbackQueue: callbackQueue, synchronouslyWhenNoQueue: true)
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
        let error = MoyaError.underlying(TransportError.cancelled, nil)
        plugins.didReceive(.failure(error), target: target)
        completion(.failure(error))
    }

    // MARK: - Flights

    private func register(endpoint: Endpoint, completion: @escaping Moya.Completion, callbackQueue: DispatchQueue?) -> (RequestFlight, Int, Bool) {
        guard trackInflights else {
            let flight = RequestFlight(endpoint: endpoint, callbackQueue: callbackQueue)
            let id = flight.subscribe(completion, callbackQueue: callbackQueue) ?? 0
            return (flight, id, true)
        }
        // Built once, outside the lock: it builds the endpoint's request.
        let identity = EndpointIdentity(endpoint: endpoint)
        return inflightFlights.withLock { flights in
            if let flight = flights[identity], let id = flight.subscribe(completion, callbackQueue: callbackQueue) {
                return (flight, id, false)
            }
            let flight = RequestFlight(endpoint: endpoint, identity: identity, callbackQueue: callbackQueue)
            let id = flight.subscribe(completion, callbackQueue: callbackQueue) ?? 0
            flights[identity] = flight
            return (flight, id, true)
        }
    }

    private func removeFromInflights(_ flight: RequestFlight) {
        guard trackInflights, let identity = flight.identity else { return }
        inflightFlights.withLock { flights in
            if flights[identity] === flight {
                flights.removeValue(forKey: identity)
            }
        }
    }

    /// The completion handed to stubs and transports: ends the flight and delivers the result to
    /// every caller still waiting.
    func networkCompletion(for flight: RequestFlight) -> Moya.Completion {
        { [self] result in
            guard let subscribers = flight.finish() else { return }
            deliver(result, to: subscribers, from: flight)
            removeFromInflights(flight)
        }
    }

    /// Calls each caller's completion: inline for those who share the flight's queue (the
    /// current context), on their own queue for the others.
    private func deliver(_ result: Result<Moya.Response, MoyaError>, to subscribers: [RequestFlight.Subscriber], from flight: RequestFlight) {
        for subscriber in subscribers {
            if subscriber.callbackQueue === flight.callbackQueue {
                subscriber.completion.value(result)
            } else {
                let box = UncheckedSendable(result)
                (subscriber.callbackQueue ?? .main).moyaDeliver { subscriber.completion.value(box.value) }
            }
        }
    }

    /// Ends `flight` with `result`, delivered on its callback queue (or, when there is none and
    /// `synchronouslyWhenNoQueue`, right here).
    private func complete(_ flight: RequestFlight, with result: Result<Moya.Response, MoyaError>, callbackQueue: DispatchQueue?, synchronouslyWhenNoQueue: Bool) {
        let completion = networkCompletion(for: flight)
        if callbackQueue == nil, synchronouslyWhenNoQueue {
            completion(result)
        } else {
            let box = UncheckedSendable((completion, result))
            (callbackQueue ?? .main).moyaDeliver { box.value.0(box.value.1) }
        }
    }

    private func cancel(subscriber id: Int, of flight: RequestFlight, target: Target) {
        let error = MoyaError.underlying(TransportError.cancelled, nil)
        switch flight.detach(id) {
        case .none:
            return
        case .alone(let subscriber):
            let box = UncheckedSendable(error)
            (subscriber.callbackQueue ?? .main).moyaDeliver { subscriber.completion.value(.failure(box.value)) }
        case .last(let subscriber, let work):
            switch work {
            case .none: break
            case .stub(let token): token.cancel()
            case .transport(let handle): handle.cancel()
            }
            removeFromInflights(flight)
            let box = UncheckedSendable((self, target))
            (subscriber.callbackQueue ?? .main).moyaDeliver {
                let (provider, target) = box.value
                provider.cancelCompletion(subscriber.completion.value, target: target)
            }
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
        stubBehavior: Moya.StubBehavior
    ) {
        let completion = networkCompletion(for: flight)
        switch stubBehavior {
        case .never:
            break
        case .immediate, .delayed:
            // Stubs report one final progress event, with the response when there is one.
            let stubCompletion: Moya.Completion = progress.map { progress in
                { result in
                    progress(ProgressResponse(progress: ProgressReporter.snapshot(completed: 1, total: 1), response: try? result.get()))
                    completion(result)
                }
            } ?? completion
            let token = stubRequest(target, request: request, callbackQueue: callbackQueue, completion: stubCompletion, endpoint: endpoint, stubBehavior: stubBehavior)
            if !flight.setWork(.stub(token)) { token.cancel() }
            return
        }

        switch endpoint.task {
        case .requestPlain, .requestData, .requestJSONEncodable, .requestCustomJSONEncodable, .requestParameters,
             .requestCompositeData, .requestCompositeParameters:
            sendRequest(target, request: request, callbackQueue: callbackQueue, progress: progress, flight: flight)
        case .uploadFile(let fileURL):
            sendUpload(target, request: request, callbackQueue: callbackQueue, progress: progress, flight: flight) { _ in
                try StreamedBody.file(at: fileURL)
            }
        case .uploadMultipartFormData(let form), .uploadCompositeMultipartFormData(let form, _):
            sendMultipart(target, request: request, callbackQueue: callbackQueue, progress: progress, flight: flight, isEmpty: form.parts.isEmpty) {
                RequestMultipartFormData(form)
            }
        case .uploadMultipart(let parts), .uploadCompositeMultipart(let parts, _):
            sendMultipart(target, request: request, callbackQueue: callbackQueue, progress: progress, flight: flight, isEmpty: parts.isEmpty) {
                let encoder = RequestMultipartFormData()
                encoder.applyMoyaMultipartFormData(parts)
                return encoder
            }
        case .downloadDestination(let destination), .downloadParameters(_, _, let destination):
            sendRequest(target, request: request, callbackQueue: callbackQueue, progress: progress, flight: flight, destination: destination)
        }
    }

    /// Runs `prepare` and `willSend` on every plugin and returns the prepared request.
    func prepareAndAnnounce(_ request: URLRequest, target: Target) -> (URLRequest, RequestCredentialStore?) {
        // Only a plugin can attach a credential.
        guard !plugins.isEmpty else { return (request, nil) }
        let credentials = RequestCredentialStore()
        let preparedRequest = plugins.prepareAndAnnounce(request, target: target) { preparedRequest in
            RequestTypeWrapper(request: preparedRequest, sessionHeaders: session.configuration.headers, credentials: credentials)
        }
        return (preparedRequest, credentials)
    }

    /// Fails a request before sending it: plugins see `prepare`, `willSend` and `didReceive`.
    func fail(_ target: Target, error: MoyaError, callbackQueue: DispatchQueue?, flight: RequestFlight) {
        let box = UncheckedSendable((self, target, networkCompletion(for: flight)))
        (callbackQueue ?? .main).moyaDeliver {
            let (provider, target, completion) = box.value
            guard flight.isActive else { return }
            provider.plugins.didReceive(.failure(error), target: target)
            completion(.failure(error))
        }
    }

    /// Prepares and sends a request: a data request, a streamed upload (`body`), or a download
    /// to `destination`. Progress events and the completion go to the callback queue.
    func sendRequest(
        _ target: Target,
        request: URLRequest,
        callbackQueue: DispatchQueue?,
        progress: Moya.ProgressBlock?,
        flight: RequestFlight,
        body: StreamedBody? = nil,
        destination: DownloadRequest.Destination? = nil
    ) {
        let (preparedRequest, credentials) = prepareAndAnnounce(applyingTimeout(of: target, to: request), target: target)

        if preparedRequest.httpMethod == Method.get.rawValue, let body = preparedRequest.httpBody {
            fail(target, error: .underlying(RequestValidationError.bodyDataInGETRequest(body), nil), callbackQueue: callbackQueue, flight: flight)
            return
        }

        let interceptors = self.interceptors(for: target)
        // With a progress block or interceptors, events and the completion go through one
        // serial queue, so they keep their order even when the callback queue is concurrent.
        let isSerialDeliveryNeeded = progress != nil || !interceptors.isEmpty
        let deliveryQueue = isSerialDeliveryNeeded ? DispatchQueue(label: "org.moya.delivery", target: callbackQueue ?? .main) : (callbackQueue ?? .main)
        let reporter = progress.map { ProgressReporter(block: $0, queue: deliveryQueue) }
        let validation = target.validationType
        let context = UncheckedSendable((self, target, networkCompletion(for: flight)))

        var progressHandler: TransportProgressHandler?
        if let reporter = reporter {
            progressHandler = { completed, total in reporter.report(completed: completed, total: total) }
        }
        let deliverResult: @Sendable (Result<Moya.Response, MoyaError>) -> Void = { result in
            deliveryQueue.moyaDeliver {
                let (provider, target, completion) = context.value
                guard flight.isActive else { return }
                provider.plugins.didReceive(result, target: target)
                reporter?.reportCompletion(response: try? result.get())
                completion(result)
            }
        }
        let deliver: @Sendable (Result<TransportResponse, any Error>, URLRequest) -> Void = { transportResult, sentRequest in
            deliverResult(MoyaProvider.result(of: transportResult, request: sentRequest, validation: validation))
        }
        let isDownload = destination != nil
        let makeDownload: @Sendable () -> DownloadSink? = { [temporaryDirectory = session.configuration.temporaryDirectory] in
            isDownload ? DownloadSink(directory: temporaryDirectory, accepts: { validation.accepts($0) }) : nil
        }
        let placement = destination.map(UncheckedSendable.init)
        let finish: @Sendable (Result<TransportResponse, any Error>, URLRequest) -> Void = { transportResult, sentRequest in
            guard let placement, case .success(let response) = transportResult, let fileURL = response.fileURL else {
                deliver(transportResult, sentRequest)
                return
            }
            // Moving a file may copy it between file systems: keep that off the event loop
            // and off the callback queue.
            DispatchQueue.global(qos: .utility).async {
                guard flight.isActive else {
                    try? FileManager.default.removeItem(at: fileURL)
                    return
                }
                deliver(DownloadPlacement.place(response, from: fileURL, destination: placement.value), sentRequest)
            }
        }

        let handle: TransportHandle
        if interceptors.isEmpty {
            handle = session.send(
                TransportRequest(urlRequest: preparedRequest, credential: credentials?.credential, body: body, download: makeDownload()),
                progress: progressHandler,
                completion: { finish($0, preparedRequest) }
            )
        } else {
            let exchange = InterceptedExchange(
                session: session,
                request: preparedRequest,
                credential: credentials?.credential,
                body: body,
                makeDownload: makeDownload,
                progress: progressHandler,
                interceptors: interceptors,
                willRetry: { sentRequest, result, attempt in
                    deliveryQueue.moyaDeliver {
                        let (provider, target, _) = context.value
                        guard flight.isActive else { return }
                        provider.plugins.willRetry(sentRequest, after: result, attempt: attempt, target: target)
                    }
                },
                finish: finish,
                fail: { deliverResult(.failure($0)) }
            )
            exchange.start()
            handle = TransportHandle(cancel: exchange.cancel)
        }
        if !flight.setWork(.transport(handle)) {
            handle.cancel()
        }
    }

    /// Turns a transport result into Moya's result, validating the status code.
    static func result(of transportResult: Result<TransportResponse, any Error>, request: URLRequest, validation: ValidationType) -> Result<Moya.Response, MoyaError> {
        switch transportResult {
        case .success(let transportResponse):
            let response = Moya.Response(
                statusCode: transportResponse.statusCode,
                data: transportResponse.data,
                request: request,
                deferredResponse: transportResponse.response
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
