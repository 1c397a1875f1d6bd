import Foundation

/// Keeps the first bytes of a streamed body for the ``ExchangePluginType`` plugins of a request,
/// and counts every byte that passes: fed by whoever moves the body (the upload, the streamed
/// response's producer), read out once (``ExchangeEvent/requestBody(_:)`` or
/// ``ExchangeEvent/responseBody(_:)``).
///
/// The prefix goes out the first time more than ``limit`` bytes have passed (to the handler given
/// to ``connect(_:)``), or when its owner ends the body (``take(isComplete:)``), whichever comes
/// first; only once. A limit of 0 only counts.
final class BodyPrefixRecorder: Sendable {
    private struct State {
        var data = Data()
        var count: Int64 = 0
        var contentType: String?
        var isTaken = false
        var deliver: (@Sendable (BodyPrefix) -> Void)?
    }

    /// The most bytes kept.
    let limit: Int
    private let state = Protected(State())

    /// - Parameter limit: The most bytes kept (negative counts as 0).
    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Where the prefix goes when the body passes ``limit``.
    func connect(_ deliver: @escaping @Sendable (BodyPrefix) -> Void) {
        state.withLock { $0.deliver = deliver }
    }

    /// The body's `Content-Type`, reported with the prefix.
    func describe(contentType: String?) {
        state.withLock { $0.contentType = contentType }
    }

    /// A new attempt sends the body again from its start: what an earlier attempt recorded is
    /// dropped, unless its prefix went out already.
    func restart() {
        state.withLock { state in
            state.count = 0
            if !state.isTaken { state.data = Data() }
        }
    }

    /// Records the next bytes of the body.
    func record<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        record(bytes, counting: bytes.count)
    }

    /// Records `byteCount` bytes that passed, of which `bytes` (the first ones) are kept.
    private func record<Bytes: Collection>(_ bytes: Bytes, counting byteCount: Int) where Bytes.Element == UInt8 {
        let (prefix, deliver) = state.withLock { state -> (BodyPrefix?, (@Sendable (BodyPrefix) -> Void)?) in
            state.count += Int64(byteCount)
            guard !state.isTaken, limit > 0 else { return (nil, nil) }
            let room = limit - state.data.count
            if room > 0 {
                state.data.append(contentsOf: bytes.prefix(room))
            }
            guard state.count > Int64(limit) else { return (nil, nil) }
            state.isTaken = true
            return (BodyPrefix(data: state.data, byteCount: state.count, isComplete: false, contentType: state.contentType), state.deliver)
        }
        if let prefix { deliver?(prefix) }
    }

    /// Counts bytes whose content cannot be looked at (a region of a file handed to the
    /// connection as it is).
    func count(_ byteCount: Int) {
        record(EmptyCollection<UInt8>(), counting: byteCount)
    }

    /// The prefix, if it has not gone out yet and anything passed; the body ended
    /// (`isComplete`), or its exchange did. Nothing goes out after this.
    func take(isComplete: Bool) -> BodyPrefix? {
        state.withLock { state in
            guard !state.isTaken else { return nil }
            state.isTaken = true
            guard limit > 0, state.count > 0 else { return nil }
            return BodyPrefix(data: state.data, byteCount: state.count, isComplete: isComplete, contentType: state.contentType)
        }
    }

    /// The body ended: its prefix goes out to the connected handler, if it has not yet.
    func finish() {
        guard let prefix = take(isComplete: true) else { return }
        state.withLock { $0.deliver }?(prefix)
    }

    /// The bytes that passed so far (in the latest attempt).
    var byteCount: Int64 {
        state.withLock { $0.count }
    }
}
