import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MoyaProvider {
    /// Runs `prepare` and `willSend` on every plugin for a request that is about to be stubbed,
    /// and returns the prepared request.
    ///
    /// - Parameters:
    ///   - request: The request built for the target.
    ///   - target:  The target.
    /// - Returns: The request after every plugin's `prepare`.
    public final func notifyPluginsOfImpendingStub(for request: URLRequest, target: Target) -> URLRequest {
        plugins.prepareAndAnnounce(request, target: target) { preparedRequest in
            // A store of its own: a stub answers no challenge, but the cURL description shows
            // the credential a plugin attached to this request.
            RequestTypeWrapper(request: preparedRequest, sessionHeaders: session.configuration.headers, credentials: RequestCredentialStore())
        }
    }

    /// Makes the function that delivers a stubbed response: it reads the endpoint's sample
    /// response, validates it, tells the plugins (`didReceive`) and calls `completion` — unless
    /// `token` was cancelled, in which case it does nothing (the cancel already completed).
    ///
    /// Public as in Moya 15, for overrides of ``stubRequest(_:request:callbackQueue:completion:endpoint:stubBehavior:)``;
    /// a provider that is not a subclass delivers its stubs through the request's own state
    /// instead, so that a cancel and the stub's result are one decision.
    ///
    /// - Parameters:
    ///   - token:      Cancels the stub.
    ///   - target:     The target.
    ///   - completion: Receives the result.
    ///   - endpoint:   The endpoint whose sample response is returned.
    ///   - plugins:    The plugins to tell.
    ///   - request:    The prepared request, stored in the response.
    /// - Returns: The function to run when the stub is due.
    public final func createStubFunction(
        _ token: CancellableToken,
        forTarget target: Target,
        withCompletion completion: @escaping Moya.Completion,
        endpoint: Endpoint,
        plugins: [PluginType],
        request: URLRequest
    ) -> (() -> Void) {
        return {
            // One decision with a cancel: once the stub delivers, a cancel is too late.
            guard token.beginDelivery() else { return }
            let result = Self.stubResult(endpoint.sampleResponseClosure(), request: request, validation: target.validationType)
            plugins.didReceive(result, target: target)
            completion(result)
        }
    }

    /// Stubs a request of a provider whose `stubRequest` is its own (not a subclass's): as
    /// `stubRequest` does, but the stub is attached to the flight before it is scheduled, and
    /// its result ends the flight as a real request's does: the flight is claimed first, then
    /// the plugins hear of the result, then the callers get it. A cancel and the stub's result
    /// are one decision (``CancellableToken/beginDelivery()``), so plugins and callers hear of
    /// one outcome.
    func stubThroughFlight(
        _ target: Target, request: URLRequest, callbackQueue: DispatchQueue?, progress: Moya.ProgressBlock?, flight: RequestFlight, endpoint: Endpoint,
        stubBehavior: Moya.StubBehavior
    ) {
        let token = CancellableToken {}
        guard flight.attach(.stub(token)) else { return }
        let preparedRequest = notifyPluginsOfImpendingStub(for: request, target: target)
        let validation = target.validationType
        let sample = UncheckedSendable(endpoint.sampleResponseClosure)
        let stub = {
            guard token.beginDelivery() else { return }
            flight.finish(
                Self.stubResult(sample.value(), request: preparedRequest, validation: validation), .stub(progress: progress.map(UncheckedSendable.init)))
        }
        scheduleStub(stub, behavior: stubBehavior, callbackQueue: callbackQueue ?? self.callbackQueue)
    }

    /// The result a stub delivers for `sample`: its response, validated, or its error.
    static func stubResult(_ sample: EndpointSampleResponse, request: URLRequest, validation: ValidationType) -> Result<Moya.Response, MoyaError> {
        switch sample {
        case .networkResponse(let statusCode, let data):
            let response = Moya.Response(statusCode: statusCode, data: data, request: request, response: nil)
            return validation.accepts(statusCode) ? .success(response) : .failure(.statusCode(response))
        case .response(let httpResponse, let data):
            let response = Moya.Response(statusCode: httpResponse.statusCode, data: data, request: request, response: httpResponse)
            return validation.accepts(httpResponse.statusCode) ? .success(response) : .failure(.statusCode(response))
        case .networkError(let error):
            return .failure(.underlying(error, nil))
        }
    }

    /// Runs `stub` as `behavior` says: now (or on `callbackQueue`) for `.immediate`, after the
    /// delay on `callbackQueue` (or the main queue) for `.delayed`.
    func scheduleStub(_ stub: @escaping () -> Void, behavior: Moya.StubBehavior, callbackQueue: DispatchQueue?) {
        switch behavior {
        case .immediate:
            // The stub itself is the value handed over: no closure around it to allocate.
            DispatchQueue.moyaDeliver(stub, on: callbackQueue) { $0() }
        case .delayed(let seconds):
            (callbackQueue ?? .main).moyaDeliver(stub, after: seconds) { $0() }
        case .never:
            // `stubRequest` completes `.never` with an error before scheduling anything.
            break
        }
    }
}
