import Foundation

extension MoyaProvider {
    /// Sends a request for `target` and returns its response.
    ///
    /// The request goes through the same pipeline as
    /// ``request(_:callbackQueue:progress:completion:)``: endpoint and request closures, stubs,
    /// plugins, validation and `trackInflights` merging. The plugins' `didReceive` and `process`
    /// run on the provider's `callbackQueue` when it has one, otherwise on a private queue; the
    /// main queue is never needed, so this works in programs that never run it.
    ///
    /// Cancelling the calling task cancels the HTTP request at once and throws the cancellation
    /// error, `MoyaError.underlying(NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled), nil)`
    /// (see ``MoyaError/isCancelled``). A task that is already cancelled throws it without
    /// sending anything or calling any plugin.
    ///
    /// ```swift
    /// let provider = MoyaProvider<GitHub>()
    /// let response = try await provider.request(.zen)
    /// print(try response.mapString())
    /// ```
    ///
    /// - Parameter target: What to request.
    /// - Returns: The response, after validation and the plugins' `process`.
    /// - Throws: The request's `MoyaError`.
    nonisolated(nonsending)
        public func request(_ target: Target) async throws(MoyaError) -> Response
    {
        // Without plugins nothing but the continuation runs on the callback queue: resume it
        // where the result arrives instead of waking a queue's thread for it.
        let queue = plugins.isEmpty ? DispatchQueue.moyaInline : (self.callbackQueue ?? ConcurrencyQueue.shared)
        // A subclass may override the callback `request` (Moya 15 code does, to refresh a token
        // or queue requests): its override is honoured. With `trackInflights` the task may join
        // another caller's flight.
        guard !trackInflights, type(of: self) == MoyaProvider<Target>.self else {
            return try await RequestCall.perform { completion in
                self.request(target, callbackQueue: queue, progress: nil, completion: completion)
            }
        }
        // Otherwise the task is the flight's one caller: the flight resumes it, and cancelling
        // the task cancels the flight.
        let plan = self.plan(target)
        let (flight, awaited) = makeAwaitedFlight(for: target, plan: plan, callbackQueue: queue)
        return try await flight.perform(awaited) {
            launch(target, plan: plan, flight: flight, callbackQueue: queue, progress: nil)
        }
    }

    /// Sends a request for `target` and decodes its JSON body as `type`.
    ///
    /// The response is decoded as ``Response/map(_:atKeyPath:using:failsOnEmptyData:)`` does.
    ///
    /// ```swift
    /// let user = try await provider.request(.userProfile("ashfurrow"), as: User.self)
    /// let name = try await provider.request(.userProfile("ashfurrow"), as: String.self, atKeyPath: "login")
    /// ```
    ///
    /// - Parameters:
    ///   - target:           What to request.
    ///   - type:             The type to decode.
    ///   - keyPath:          A dotted key path into the top-level JSON dictionary, or `nil` for
    ///                       the whole body.
    ///   - decoder:          The decoder to use.
    ///   - failsOnEmptyData: Whether an empty body (or a missing key path) is an error.
    /// - Returns: The decoded value.
    /// - Throws: The request's `MoyaError`, or the mapping error (`.jsonMapping`, `.objectMapping`).
    nonisolated(nonsending)
        public func request<D: Decodable>(
            _ target: Target,
            as type: D.Type,
            atKeyPath keyPath: String? = nil,
            using decoder: JSONDecoder = JSONDecoder(),
            failsOnEmptyData: Bool = true
        ) async throws(MoyaError) -> D
    {
        let response = try await request(target)
        do {
            return try response.map(type, atKeyPath: keyPath, using: decoder, failsOnEmptyData: failsOnEmptyData)
        } catch let error as MoyaError {
            throw error
        } catch {
            throw MoyaError.objectMapping(error, response)
        }
    }

    /// Sends a request for `target` and reports its progress as an asynchronous sequence.
    ///
    /// The sequence yields the progress events of the transfer, then one last event whose
    /// ``ProgressResponse/completed`` is `true` and whose `response` is the validated response,
    /// and then ends. A failed request ends the sequence by throwing its `MoyaError`.
    ///
    /// The request starts when iteration starts (the first call to `next()`); each iterator sends
    /// its own request. Leaving the loop early (`break`, `return`, a thrown error) or cancelling
    /// the task cancels the request.
    ///
    /// ```swift
    /// for try await event in provider.requestWithProgress(.download) {
    ///     if let response = event.response {
    ///         print("done: \(response.data.count) bytes")
    ///     } else {
    ///         print("progress: \(event.progress)")
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter target: What to request.
    /// - Returns: The sequence of progress events.
    public func requestWithProgress(_ target: Target) -> ProgressStream {
        let queue = self.callbackQueue ?? ConcurrencyQueue.shared
        // The target is only read, once, when an iterator sends the request.
        let target = UncheckedSendable(target)
        return ProgressStream { progress, completion in
            self.request(target.value, callbackQueue: queue, progress: progress, completion: completion)
        }
    }
}
