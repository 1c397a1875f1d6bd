import NIOCore

/// The body of a response that is not the one the delegate stores or streams (a status the
/// validation rejects, a redirect): kept in memory up to a limit, so that the error can show it.
/// Used on the task's event loop only.
struct ErrorBody {
    /// The most bytes kept.
    let limit: Int
    /// What was kept so far.
    private(set) var buffer: ByteBuffer?

    init(limit: Int) {
        self.limit = limit
    }

    /// Keeps as much of `part` as the limit leaves room for.
    mutating func append(_ part: ByteBuffer) {
        var part = part
        let room = limit - (buffer?.readableBytes ?? 0)
        guard room > 0, var slice = part.readSlice(length: min(room, part.readableBytes)) else { return }
        if buffer == nil {
            buffer = slice
        } else {
            buffer!.writeBuffer(&slice)
        }
    }
}
