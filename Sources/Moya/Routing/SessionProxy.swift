import Foundation

/// A proxy requests go through, or ``direct`` for none: ``Session/Configuration/proxy``
/// (``Session/Configuration/Proxy`` is this type).
///
/// With an HTTP proxy, `https` requests are tunnelled with `CONNECT` and plain `http`
/// requests are sent to the proxy in absolute form (`GET http://host/path`), as curl and
/// browsers send them: many proxies only allow `CONNECT` to port 443. A proxy's password
/// is never logged, and ``description`` hides it.
public struct SessionProxy: Sendable, Hashable, CustomStringConvertible {
    /// The kind of proxy.
    public enum Kind: Sendable, Hashable {
        /// An HTTP proxy.
        case http
        /// A SOCKS5 proxy (no authentication).
        case socks
        /// No proxy: every request goes straight to its server, whatever the environment
        /// says (see ``direct``).
        case direct
    }

    /// The kind of proxy.
    public let kind: Kind
    /// The proxy's host name or address.
    public let host: String
    /// The proxy's port.
    public let port: Int
    /// The credentials for an HTTP proxy's `Proxy-Authorization: Basic`, if it wants them.
    public let username: String?
    /// The password that goes with ``username``.
    public let password: String?

    /// The `Proxy-Authorization` value for ``username`` and ``password`` (`Basic`), or `nil`
    /// without a username.
    var basicAuthorization: String? {
        username.map { "Basic " + Data("\($0):\(password ?? "")".utf8).base64EncodedString() }
    }

    /// An HTTP proxy, optionally with Basic credentials sent as `Proxy-Authorization`.
    public static func http(host: String, port: Int, username: String? = nil, password: String? = nil) -> SessionProxy {
        SessionProxy(kind: .http, host: host, port: port, username: username, password: password)
    }

    /// A SOCKS5 proxy.
    public static func socks(host: String, port: Int = 1080) -> SessionProxy {
        SessionProxy(kind: .socks, host: host, port: port, username: nil, password: nil)
    }

    /// No proxy, whatever the proxy environment variables say: set
    /// ``Session/Configuration/proxy`` to this to keep a session's requests direct.
    public static let direct = SessionProxy(kind: .direct, host: "", port: 0, username: nil, password: nil)

    /// The proxy as `http://user:***@host:port`, `socks5://host:port` or `direct`: the
    /// password is never shown.
    public var description: String {
        switch kind {
        case .direct:
            return "direct"
        case .http, .socks:
            let scheme = kind == .http ? "http" : "socks5"
            let name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            let credentials = username.map { "\($0):***@" } ?? ""
            return "\(scheme)://\(credentials)\(name):\(port)"
        }
    }
}
