import Foundation

/// The bounded hand-over between a streamed response's producer (the transport, or a stub) and
/// its one consumer (``ResponseChunks`` and the views built on it): a ``BoundedBuffer`` of
/// chunks weighed in bytes, whose producer pauses above the high watermark and reads on once
/// the consumer has taken half. Its stop handler ends the request and closes its connection.
typealias StreamBuffer = BoundedBuffer<Data>

extension BoundedBuffer where Element == Data {
    /// - Parameter highWatermark: The most bytes buffered before the producer pauses (at least
    ///   1); it reads on once the consumer has taken half of them.
    convenience init(highWatermark: Int) {
        self.init(limit: max(1, highWatermark), overflow: .pauseProducer, weight: { $0.count })
    }

    /// The body bytes the producer handed over so far, for the metrics of a stream whose
    /// consumer stopped before its end.
    var appendedByteCount: Int64 {
        Int64(appendedWeight)
    }

    /// Ends a stream that was never streamed with `data`, a whole response's body (before any
    /// consumer reads it, so nobody is woken).
    func finish(wholeBody data: Data) {
        _ = append(data)
        finish(.success(()))
    }
}
