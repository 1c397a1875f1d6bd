import Foundation

extension MoyaProvider {
    /// Goes on with a download that failed part-way, from where it stopped.
    ///
    /// `resumeData` comes from the failure (``MoyaError/resumeData``). The request is made again
    /// for `target` (the same download) with `Range` and `If-Range`: when the server still has
    /// the same version, it sends the rest, which is appended to the partial file the session
    /// kept; when the version changed, or the server ignores ranges, it sends the whole file,
    /// which replaces the partial one. Either way the destination gets one complete version,
    /// never a mix of two, and a file of another length than the server announced is an error.
    ///
    /// A download that fails again carries new resume data. A ``RetryPolicy`` among the
    /// interceptors resumes by itself, on each retry.
    ///
    /// ```swift
    /// provider.request(.zen) { result in
    ///     guard case .failure(let error) = result, let resumeData = error.resumeData else { return }
    ///     provider.request(.zen, resumingWith: resumeData) { result in
    ///         print(result)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - target:        The download, as it was first requested.
    ///   - resumeData:    The failure's ``MoyaError/resumeData``.
    ///   - callbackQueue: Where progress and completion run; `nil` for the provider's.
    ///   - progress:      Progress events, counting the bytes received before.
    ///   - completion:    Called exactly once with the result;
    ///                    ``DownloadResumeError/invalidResumeData`` when the data is not this
    ///                    session's or its partial file is gone (send the request again without
    ///                    it), ``DownloadResumeError/notADownload`` for a target that is not a
    ///                    download.
    /// - Returns: A token that cancels the request.
    @discardableResult
    public func request(
        _ target: Target, resumingWith resumeData: Data, callbackQueue: DispatchQueue? = .none, progress: Moya.ProgressBlock? = .none,
        completion: @escaping Moya.Completion
    ) -> Cancellable {
        let queue = callbackQueue ?? self.callbackQueue
        let plan = self.plan(target)
        let resume: ResumePoint
        do throws(MoyaError) {
            resume = try resumePoint(for: plan.endpoint, from: resumeData)
        } catch {
            DispatchQueue.moyaDeliver(.failure(error), on: queue ?? .main, to: completion)
            return CancellableToken(action: {})
        }
        let flight = makeFlight(
            for: target, plan: plan, callbackQueue: queue, progress: progress, resume: resume,
            firstCaller: .first(plan.processing(completion), callbackQueue: queue, pluginTarget: plan.pluginTarget))
        let ticket = RequestTicket(flight: flight, subscriberID: RequestStateMachine<RequestFlight.Work>.firstSubscriberID)
        launch(target, plan: plan, flight: flight, callbackQueue: queue, progress: progress)
        return ticket
    }

    /// Goes on with a download that failed part-way, from where it stopped, and returns its
    /// response; see ``request(_:resumingWith:callbackQueue:progress:completion:)``.
    ///
    /// - Parameters:
    ///   - target:     The download, as it was first requested.
    ///   - resumeData: The failure's ``MoyaError/resumeData``.
    /// - Returns: The response, its file at the download's destination.
    /// - Throws: The request's `MoyaError`.
    nonisolated(nonsending)
        public func request(_ target: Target, resumingWith resumeData: Data) async throws(MoyaError) -> Response
    {
        let queue = plugins.isEmpty ? DispatchQueue.moyaInline : (self.callbackQueue ?? ConcurrencyQueue.shared)
        let plan = self.plan(target)
        let resume = try resumePoint(for: plan.endpoint, from: resumeData)
        let (flight, awaited) = makeAwaitedFlight(for: target, plan: plan, callbackQueue: queue, resume: resume)
        return try await flight.perform(awaited) {
            launch(target, plan: plan, flight: flight, callbackQueue: queue, progress: nil)
        }
    }

    /// The checked resume point for a download of `endpoint`.
    private func resumePoint(for endpoint: Endpoint, from resumeData: Data) throws(MoyaError) -> ResumePoint {
        guard endpoint.task.downloadDestination != nil else {
            throw .underlying(DownloadResumeError.notADownload, nil)
        }
        do {
            return try session.parts.partials.resumePoint(from: resumeData, in: session.parts.downloadFolder.current)
        } catch {
            throw .underlying(error, nil)
        }
    }
}
