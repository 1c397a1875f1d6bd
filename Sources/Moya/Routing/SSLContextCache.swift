import NIOSSL

/// The NIOSSL contexts of a session's own connections (``SessionRoutes/openConnection(along:on:)``),
/// one per TLS configuration, so that opening a connection does not load the trust roots again.
/// Holds at most ``capacity`` contexts, dropping the oldest.
final class SSLContextCache: Sendable {
    /// The most contexts kept.
    static let capacity = 16

    private struct Entry: Sendable {
        let configuration: TLSConfiguration
        let context: NIOSSLContext
    }

    private let entries = Protected<[Entry]>([])

    init() {}

    /// The context for `configuration`: the one made before for an equal configuration, or a new
    /// one, kept.
    ///
    /// - Throws: NIOSSL's error when the configuration cannot make a context.
    func context(for configuration: TLSConfiguration) throws -> NIOSSLContext {
        if let cached = entries.withLock({ entries in entries.first { $0.configuration.bestEffortEquals(configuration) }?.context }) {
            return cached
        }
        // Made outside the lock: loading the trust roots takes a while.
        let context = try NIOSSLContext(configuration: configuration)
        entries.withLock { entries in
            guard !entries.contains(where: { $0.configuration.bestEffortEquals(configuration) }) else { return }
            if entries.count == Self.capacity { entries.removeFirst() }
            entries.append(Entry(configuration: configuration, context: context))
        }
        return context
    }
}
