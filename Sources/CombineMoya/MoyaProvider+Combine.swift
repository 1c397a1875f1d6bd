import Foundation
import Moya

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

extension MoyaProvider {
    /// A publisher that sends a request for `target` and publishes its response.
    ///
    /// It publishes one `Response` and finishes, or fails with the request's `MoyaError`. The
    /// request is sent on the subscriber's first demand (each subscription sends its own), runs
    /// through the provider's whole pipeline (stubs, plugins, validation, `trackInflights`), and
    /// is cancelled when the subscription is. While it runs, the subscription keeps the provider
    /// alive.
    ///
    /// ```swift
    /// let cancellable = provider.requestPublisher(.zen, callbackQueue: .global())
    ///     .mapString()
    ///     .sink(receiveCompletion: { print($0) }, receiveValue: { print($0) })
    /// ```
    ///
    /// - Parameters:
    ///   - target:        What to request.
    ///   - callbackQueue: Where the value and the completion are delivered; when `nil`, the
    ///                    provider's queue, or the main queue as in the callback API.
    /// - Returns: A publisher of the response.
    public func requestPublisher(_ target: Target, callbackQueue: DispatchQueue? = nil) -> AnyPublisher<Response, MoyaError> {
        MoyaPublisher<Response> { send, finish in
            self.request(target, callbackQueue: callbackQueue, progress: nil) { result in
                switch result {
                case .success(let response):
                    send(response)
                    finish(.finished)
                case .failure(let error):
                    finish(.failure(error))
                }
            }
        }
        .eraseToAnyPublisher()
    }

    /// A publisher that sends a request for `target` and publishes its progress.
    ///
    /// It publishes the transfer's progress events, then one event whose
    /// `ProgressResponse.completed` is `true` and whose `response` is the validated response,
    /// and finishes; a failed request fails with its `MoyaError`. Every event carries the latest
    /// progress snapshot. Demand, cancellation and the provider's lifetime work as for
    /// ``requestPublisher(_:callbackQueue:)``.
    ///
    /// - Parameters:
    ///   - target:        What to request.
    ///   - callbackQueue: Where events and the completion are delivered; when `nil`, the
    ///                    provider's queue, or the main queue as in the callback API.
    /// - Returns: A publisher of progress events.
    public func requestWithProgressPublisher(_ target: Target, callbackQueue: DispatchQueue? = nil) -> AnyPublisher<ProgressResponse, MoyaError> {
        MoyaPublisher<ProgressResponse> { send, finish in
            // The latest snapshot, for the event that carries the response. The lock: a
            // concurrent callback queue may run the progress block and the completion at once.
            let lock = NSLock()
            var latest: Progress?
            // The provider's own completed event is held back: the completion brings the
            // response after the plugins' `process`, and that is the one published.
            let progress: ProgressBlock = { event in
                if let snapshot = event.progressObject { lock.withLock { latest = snapshot } }
                if !event.completed {
                    send(event)
                }
            }
            return self.request(target, callbackQueue: callbackQueue, progress: progress) { result in
                switch result {
                case .success(let response):
                    send(ProgressResponse(progress: lock.withLock { latest }, response: response))
                    finish(.finished)
                case .failure(let error):
                    finish(.failure(error))
                }
            }
        }
        .eraseToAnyPublisher()
    }
}
