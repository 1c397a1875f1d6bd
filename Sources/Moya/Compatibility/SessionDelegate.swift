import Foundation

/// Accepted where Alamofire's `Session(configuration:delegate:...)` takes a delegate, so that
/// Moya 15 code that passes `SessionDelegate()` compiles.
///
/// Moya for Linux has no `URLSession` underneath: the session answers authentication
/// challenges (``CredentialsPlugin``), follows redirects and evaluates server trust itself, so a
/// delegate has nothing to receive. Subclasses that override `URLSessionDelegate` methods do not
/// compile: move that logic into a ``RequestInterceptor`` or a ``PluginType``.
open class SessionDelegate: @unchecked Sendable {
    // Sendable: the class has no stored state; a subclass that adds some must guard it.

    /// Creates a delegate.
    public init() {}
}
