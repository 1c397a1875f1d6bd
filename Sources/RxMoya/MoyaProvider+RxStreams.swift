#if RxMoya
import Foundation
import Moya
import RxSwift

extension Reactive {
    /// An `Observable` of a streamed response's body: its chunks of `Data` as they arrive.
    ///
    /// Each subscription sends its own request, as `MoyaProvider.stream(_:options:)` sends it
    /// (the whole pipeline; the target's validation applies to the head), and emits each chunk
    /// as soon as it is read; the next one is read once the observer has handled it. It completes
    /// at the end of the body, or fails with the stream's `MoyaError`. Disposing of the
    /// subscription closes the connection. Elements arrive on a background thread: use
    /// `observe(on:)` to move them elsewhere.
    ///
    /// ```swift
    /// let disposable = provider.rx.stream(.download)
    ///     .subscribe(onNext: { print("\($0.count) bytes") }, onError: { print($0) })
    /// ```
    ///
    /// - Parameters:
    ///   - target:  What to request.
    ///   - options: How the stream is read.
    /// - Returns: An `Observable` of the body's chunks.
    public func stream<Target: TargetType>(_ target: Target, options: StreamOptions = .default) -> Observable<Data> where Base: MoyaProvider<Target> {
        let provider = base
        // Unchecked: the task of each subscription only reads the target, to open its stream
        // (`TargetType` is not `Sendable`, as in Moya).
        let target = UncheckedSendable(target)
        return Observable.running { emit async throws(MoyaError) in
            let stream = try await provider.stream(target.value, options: options)
            for try await chunk in stream.body {
                emit(chunk)
            }
        }
    }

    /// An `Observable` of the Server-Sent Events of `target`, reconnecting as `reconnection`
    /// says (`MoyaProvider.events(_:reconnection:options:)`).
    ///
    /// Each subscription connects on its own and emits each event as soon as it is parsed. It
    /// completes when the events end (a 204 response, or the policy gives up), or fails with
    /// the `MoyaError` that ended them. Disposing of the subscription closes the connection, or
    /// stops a wait to reconnect. Elements arrive on a background thread: use `observe(on:)` to
    /// move them elsewhere.
    ///
    /// ```swift
    /// let disposable = provider.rx.events(.notifications, reconnection: .never)
    ///     .subscribe(onNext: { print($0.event ?? "message", $0.data) })
    /// ```
    ///
    /// - Parameters:
    ///   - target:       The event stream's target.
    ///   - reconnection: When to reconnect; `.never` for one stream only.
    ///   - options:      How each connection is read.
    /// - Returns: An `Observable` of the events.
    public func events<Target: TargetType>(
        _ target: Target, reconnection: ReconnectionPolicy = .default, options: StreamOptions = .default
    ) -> Observable<ServerSentEvent> where Base: MoyaProvider<Target> {
        // Nothing is sent until a subscription iterates it; each iteration connects on its own.
        let events = base.events(target, reconnection: reconnection, options: options)
        return Observable.running { emit async throws(MoyaError) in
            for try await event in events {
                emit(event)
            }
        }
    }
}
#endif
