/// The consumer's side of a stream, shared by the ``StreamedResponse`` and every sequence and
/// iterator made from it: when the last of them is released before the end, the stream stops
/// and its connection closes.
final class StreamConsumer: Sendable {
    let buffer: StreamBuffer

    init(buffer: StreamBuffer) {
        self.buffer = buffer
    }

    deinit {
        buffer.consumerStopped()
    }
}
