#if ReactiveMoya
import Foundation
import Moya
import ReactiveSwift

extension Reactive {
    /// A producer of a streamed response's body: its chunks of `Data` as they arrive.
    ///
    /// Each start sends its own request, as `MoyaProvider.stream(_:options:)` sends it (the
    /// whole pipeline; the target's validation applies to the head), and sends each chunk as
    /// it arrives; the stream is not read further until the observer has returned. It
    /// completes at the end of the body, or fails with the stream's `MoyaError`. Disposing of
    /// the producer closes the connection. Values arrive on a background thread.
    ///
    /// ```swift
    /// let disposable = provider.reactive.stream(.download)
    ///     .startWithResult { result in
    ///         switch result {
    ///         case .success(let chunk): print("\(chunk.count) bytes")
    ///         case .failure(let error): print(error)
    ///         }
    ///     }
    /// ```
    ///
    /// - Parameters:
    ///   - target:  What to request.
    ///   - options: How the stream is read.
    /// - Returns: A producer of the body's chunks.
    public func stream<Target: TargetType>(_ target: Target, options: StreamOptions = .default) -> SignalProducer<Data, MoyaError>
    where Base: MoyaProvider<Target> {
        let provider = base
        // Unchecked: the task only reads the target, once per start, to open its stream
        // (`TargetType` is not `Sendable`, as in Moya).
        let target = UncheckedSendable(target)
        return SignalProducer.running { send async throws(MoyaError) in
            let stream = try await provider.stream(target.value, options: options)
            for try await chunk in stream.body {
                guard send(chunk) else { return }
            }
        }
    }

    /// A producer of the Server-Sent Events of `target`, reconnecting as `reconnection` says
    /// (`MoyaProvider.events(_:reconnection:options:)`).
    ///
    /// Each start connects on its own and sends each event as it arrives; the stream is not
    /// read further until the observer has returned. It completes when the events end (a 204
    /// response, or a stream that `reconnection` does not reconnect), or fails with the
    /// stream's `MoyaError`. Disposing of the producer closes the connection. Values arrive on
    /// a background thread.
    ///
    /// ```swift
    /// let disposable = provider.reactive.events(.notifications)
    ///     .startWithResult { result in
    ///         if case .success(let event) = result {
    ///             print(event.event ?? "message", event.data)
    ///         }
    ///     }
    /// ```
    ///
    /// - Parameters:
    ///   - target:       The event stream's target.
    ///   - reconnection: When to reconnect; `.never` for one stream only.
    ///   - options:      How each connection is read.
    /// - Returns: A producer of the events.
    public func events<Target: TargetType>(
        _ target: Target, reconnection: ReconnectionPolicy = .default, options: StreamOptions = .default
    ) -> SignalProducer<ServerSentEvent, MoyaError> where Base: MoyaProvider<Target> {
        // Nothing is sent until a task iterates the sequence; each iteration connects anew.
        let events = base.events(target, reconnection: reconnection, options: options)
        return SignalProducer.running { send async throws(MoyaError) in
            for try await event in events {
                guard send(event) else { return }
            }
        }
    }
}
#endif
