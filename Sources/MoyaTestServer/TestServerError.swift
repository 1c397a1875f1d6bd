/// Errors thrown by ``TestServer``.
public enum TestServerError: Error, Sendable {
    /// The bound server channel did not report a local address.
    case noLocalAddress
}
