import Foundation
import Moya

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

extension MoyaProvider {
    /// A publisher of a streamed response's body: its chunks of `Data` as they arrive.
    ///
    /// The request is sent on the first demand, as `MoyaProvider.stream(_:options:)` sends it
    /// (the whole pipeline; the target's validation applies to the head), and each chunk is
    /// published on demand: a subscriber that asks for nothing more pauses the stream and its
    /// connection. It finishes at the end of the body, or fails with the stream's `MoyaError`;
    /// cancelling the subscription closes the connection. Values arrive on a background thread.
    ///
    /// ```swift
    /// let cancellable = provider.streamPublisher(.download)
    ///     .sink(receiveCompletion: { print($0) }, receiveValue: { print("\($0.count) bytes") })
    /// ```
    ///
    /// - Parameters:
    ///   - target:  What to request.
    ///   - options: How the stream is read.
    /// - Returns: A publisher of the body's chunks.
    public func streamPublisher(_ target: Target, options: StreamOptions = .default) -> AnyPublisher<Data, MoyaError> {
        // Unchecked: the closure only reads the target, once, when a subscription starts
        // (`TargetType` is not `Sendable`, as in Moya).
        let target = UncheckedSendable(target)
        return StreamPublisher<Data> { emitter async throws(MoyaError) in
            let stream = try await self.stream(target.value, options: options)
            for try await chunk in stream.body {
                guard await emitter.emit(chunk) else { return }
            }
        }
        .eraseToAnyPublisher()
    }

    /// A publisher of the Server-Sent Events of `target`, reconnecting as `reconnection` says
    /// (`MoyaProvider.events(_:reconnection:options:)`).
    ///
    /// Each event is published on demand; cancelling the subscription closes the connection.
    /// Values arrive on a background thread.
    ///
    /// ```swift
    /// let cancellable = provider.eventsPublisher(.notifications)
    ///     .sink(receiveCompletion: { print($0) }, receiveValue: { print($0.data) })
    /// ```
    ///
    /// - Parameters:
    ///   - target:       The event stream's target.
    ///   - reconnection: When to reconnect; `.never` for one stream only.
    ///   - options:      How each connection is read.
    /// - Returns: A publisher of the events.
    public func eventsPublisher(
        _ target: Target, reconnection: ReconnectionPolicy = .default, options: StreamOptions = .default
    ) -> AnyPublisher<ServerSentEvent, MoyaError> {
        let events = self.events(target, reconnection: reconnection, options: options)
        return StreamPublisher<ServerSentEvent> { emitter async throws(MoyaError) in
            for try await event in events {
                guard await emitter.emit(event) else { return }
            }
        }
        .eraseToAnyPublisher()
    }
}
