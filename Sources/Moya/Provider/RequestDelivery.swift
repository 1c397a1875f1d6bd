import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a sent request's outcome goes: the transport's result becomes Moya's (validated, a
/// download moved to its destination), the plugins see it, and the flight's callers get it, all
/// on the delivery queue.
///
/// One object per request in place of a chain of closures, and nothing in it is generic over the
/// provider's target: code in `MoyaProvider<Target>` runs unspecialized in the user's module,
/// where every closure and tuple that holds a `Target` costs runtime metadata lookups and
/// value-witness copies.
///
/// Sendable: every stored property is immutable; the plugins and the target are the user's, and
/// are only called on the delivery queue, as Moya documents.
final class RequestDelivery: @unchecked Sendable {
    let flight: RequestFlight
    /// Where plugins, progress and the completion run: the callback queue, or a serial queue
    /// in front of it (``isSerialDeliveryNeeded``).
    let queue: DispatchQueue
    let plugins: [any PluginType]
    /// The target as plugins see it; `nil` when there are no plugins.
    let target: (any TargetType)?
    let validation: ValidationType
    let reporter: ProgressReporter?
    /// Where a download goes; `nil` for a data request.
    let destination: DownloadRequest.Destination?
    /// The session's directory for downloads in progress.
    let temporaryDirectory: URL
    /// The request's metrics; `nil` without metrics.
    let measurement: RequestMeasurement?

    init(
        flight: RequestFlight,
        callbackQueue: DispatchQueue?,
        isSerialDeliveryNeeded: Bool,
        plugins: [any PluginType],
        target: (any TargetType)?,
        validation: ValidationType,
        progress: Moya.ProgressBlock?,
        destination: DownloadRequest.Destination?,
        temporaryDirectory: URL,
        measurement: RequestMeasurement? = nil
    ) {
        // With a progress block or interceptors, events and the completion go through one
        // serial queue, so they keep their order even when the callback queue is concurrent.
        let queue = isSerialDeliveryNeeded ? DispatchQueue(label: "org.moya.delivery", target: callbackQueue ?? .main) : (callbackQueue ?? .main)
        self.flight = flight
        self.queue = queue
        self.plugins = plugins
        self.target = target
        self.validation = validation
        self.reporter = progress.map { ProgressReporter(block: $0, queue: queue) }
        self.destination = destination
        self.temporaryDirectory = temporaryDirectory
        self.measurement = measurement
    }

    /// Progress for the transport, when a progress block wants it.
    var progressHandler: TransportProgressHandler? {
        guard let reporter else { return nil }
        return { completed, total in reporter.report(completed: completed, total: total) }
    }

    /// A new sink for a download's body, or `nil` for a data request.
    func makeDownload() -> DownloadSink? {
        guard destination != nil else { return nil }
        let validation = self.validation
        return DownloadSink(directory: temporaryDirectory, accepts: { validation.accepts($0) })
    }

    /// Takes the transport's result for `sentRequest`.
    func transportFinished(_ transportResult: Result<TransportResponse, any Error>, sentRequest: URLRequest) {
        guard let destination, case .success(let response) = transportResult, let fileURL = response.fileURL else {
            deliver(Self.result(of: transportResult, request: sentRequest, validation: validation))
            return
        }
        // Metrics hook (finish): the download's response is complete; moving the file is not
        // part of the request.
        if let measurement {
            let size = (try? FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? NSNumber)?.int64Value
            measurement.finish(Self.result(of: transportResult, request: sentRequest, validation: validation), responseBodyBytes: size)
        }
        // Moving a file may copy it between file systems: keep that off the event loop and off
        // the callback queue.
        DispatchQueue.global(qos: .utility).moyaDeliver(destination) { [self] destination in
            guard flight.isActive else {
                PartialFile.discard(fileURL)
                return
            }
            let placed = DownloadPlacement.place(response, from: fileURL, destination: destination)
            deliver(Self.result(of: placed, request: sentRequest, validation: validation))
        }
    }

    /// Delivers `result` on the delivery queue: plugins, the final progress event, then the
    /// flight's callers. Nothing happens once the flight has ended (cancelled).
    func deliver(_ result: Result<Moya.Response, MoyaError>) {
        // Metrics hook (finish): the outcome is known; a cancel may still reach the callers first
        // (then `RequestFlight.Work.measured` has ended the measurement already).
        measurement?.finish(result)
        queue.moyaDeliver { [self] in
            // The result claims the flight first: a cancel that comes while the plugins run
            // finds it ended, so plugins and callers hear of the result alone.
            guard let callers = flight.claim() else { return }
            if let target { plugins.didReceive(result, anyTarget: target) }
            reporter?.reportCompletion(response: try? result.get())
            flight.deliver(result, to: callers)
        }
    }

    /// Tells the plugins, on the delivery queue, that `request` is sent again after `result`.
    func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int) {
        guard target != nil else { return }
        queue.moyaDeliver(result) { [self] result in
            guard flight.isActive, let target else { return }
            plugins.willRetry(request, after: result, attempt: attempt, anyTarget: target)
        }
    }

    /// Turns a transport result into Moya's result, validating the status code.
    static func result(of transportResult: Result<TransportResponse, any Error>, request: URLRequest, validation: ValidationType) -> Result<
        Moya.Response, MoyaError
    > {
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
