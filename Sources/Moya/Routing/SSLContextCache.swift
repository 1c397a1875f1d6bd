import NIOSSL

/// The NIOSSL contexts of a session's own connections (``SessionRoutes/openConnection(along:on:)``),
/// one per TLS configuration, so that opening a connection does not load the trust roots again:
/// a ``BoundedCache`` of at most ``capacity`` contexts, keyed by configuration.
final class SSLContextCache: Sendable {
    /// The most contexts kept.
    static let capacity = 16

    /// A configuration as a key: NIOSSL's best-effort equality and hash, which compare every
    /// setting (certificates and keys by value).
    private struct Key: Hashable, Sendable {
        let configuration: TLSConfiguration

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.configuration.bestEffortEquals(rhs.configuration)
        }

        func hash(into hasher: inout Hasher) {
            configuration.bestEffortHash(into: &hasher)
        }
    }

    private let contexts = BoundedCache<Key, NIOSSLContext>(capacity: SSLContextCache.capacity)

    init() {}

    /// The context for `configuration`: the one made before for an equal configuration, or a new
    /// one, kept.
    ///
    /// - Throws: NIOSSL's error when the configuration cannot make a context.
    func context(for configuration: TLSConfiguration) throws -> NIOSSLContext {
        let key = Key(configuration: configuration)
        if let cached = contexts.value(for: key) { return cached }
        // Made outside any lock: loading the trust roots takes a while.
        let context = try NIOSSLContext(configuration: configuration)
        contexts.keep(context, for: key)
        return contexts.value(for: key) ?? context
    }
}
