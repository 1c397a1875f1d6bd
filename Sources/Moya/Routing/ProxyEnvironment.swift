import Foundation

/// The proxies the environment asks for, read the way curl reads them, with two differences
/// (both as Go's `net/http` reads them): `HTTP_PROXY` is read outside CGI programs, where curl
/// never reads it, and a `no_proxy` entry may carry a port, which curl does not understand.
///
/// - An `http` URL uses `http_proxy`, then `HTTP_PROXY`; the upper-case one is ignored when
///   `REQUEST_METHOD` is set, since a CGI program gets a request's `Proxy:` header as
///   `HTTP_PROXY` ("httpoxy"). An `https` URL uses `https_proxy`, then `HTTPS_PROXY`. Any URL
///   whose scheme has none of these uses `all_proxy`, then `ALL_PROXY`.
/// - Lower case wins over upper case, and an empty value counts as unset.
/// - `no_proxy`, then `NO_PROXY`, lists the hosts that are reached directly (see
///   ``NoProxyRule``).
///
/// Every variable is read and parsed once, when the value is made.
struct ProxyEnvironment: Sendable, Equatable {
    /// A proxy variable that is set: its name and its parsed value, or why it cannot be used.
    struct Setting: Sendable, Equatable {
        /// The variable's name, such as `https_proxy`.
        let variable: String
        /// The proxy it names, or why it cannot be used.
        let proxy: Result<SessionProxy, ProxyEnvironmentError>
    }

    /// The proxy for `http` URLs (`http_proxy` or `HTTP_PROXY`), if set.
    let httpProxy: Setting?
    /// The proxy for `https` URLs (`https_proxy` or `HTTPS_PROXY`), if set.
    let httpsProxy: Setting?
    /// The proxy for any other URL, or for one whose scheme's variable is unset (`all_proxy` or
    /// `ALL_PROXY`), if set.
    let allProxy: Setting?
    /// The hosts reached directly (`no_proxy` or `NO_PROXY`).
    let noProxy: [NoProxyRule]

    /// Reads the proxy variables from `environment`.
    init(environment: [String: String]) {
        self.init(variable: { environment[$0] })
    }

    /// Reads the proxy variables through `variable`, which gives the value of the variable of
    /// that name, or `nil` when it is unset.
    init(variable: (String) -> String?) {
        func value(_ name: String) -> (name: String, value: String)? {
            guard let raw = variable(name) else { return nil }
            let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : (name, trimmed)
        }
        func setting(_ names: String...) -> Setting? {
            // The first of `names` that is set.
            for name in names {
                if let found = value(name) {
                    return Setting(variable: found.name, proxy: Self.parseProxy(found.value, variable: found.name))
                }
            }
            return nil
        }
        let isCGI = variable("REQUEST_METHOD") != nil
        httpProxy = isCGI ? setting("http_proxy") : setting("http_proxy", "HTTP_PROXY")
        httpsProxy = setting("https_proxy", "HTTPS_PROXY")
        allProxy = setting("all_proxy", "ALL_PROXY")
        noProxy = (value("no_proxy") ?? value("NO_PROXY")).map { NoProxyRule.parseList($0.value) } ?? []
    }

    /// The proxy variables of this process, read once, when the first session is made.
    ///
    /// Each variable it needs is read with `getenv`: `ProcessInfo.processInfo.environment`
    /// would copy the whole environment into a dictionary, and the first call of it brings
    /// about 170 KiB of Foundation's code into memory, for a value every session reads.
    static let process = ProxyEnvironment(variable: ProcessEnvironment.variable)

    /// Whether no proxy variable that could apply is set: every request goes direct.
    var isEmpty: Bool { httpProxy == nil && httpsProxy == nil && allProxy == nil }

    /// The proxy for a request to `url`, `nil` to go direct, or a failure when the variable that
    /// applies cannot be used (malformed, or naming an unsupported proxy scheme).
    ///
    /// A host that `no_proxy` lists goes direct, even when the proxy variable is malformed. So
    /// does a URL without a host.
    func proxy(for url: URL) -> Result<SessionProxy?, ProxyEnvironmentError> {
        guard !isEmpty, let host = url.host, !host.isEmpty else { return .success(nil) }
        let scheme = url.scheme?.lowercased() ?? ""
        let applicable: Setting?
        switch scheme {
        case "http":
            applicable = httpProxy ?? allProxy
        case "https":
            applicable = httpsProxy ?? allProxy
        default:
            applicable = allProxy
        }
        guard let applicable else { return .success(nil) }
        if bypassesProxy(host: host, port: url.port ?? Self.defaultPort(scheme: scheme)) {
            return .success(nil)
        }
        return applicable.proxy.map { $0 }
    }

    /// Whether `no_proxy` sends a request to `host` on `port` direct.
    func bypassesProxy(host: String, port: Int?) -> Bool {
        guard !noProxy.isEmpty else { return false }
        var name = host.lowercased()[...]
        if name.first == "[", name.last == "]" {
            name = name.dropFirst().dropLast()
        }
        while name.last == "." {
            name = name.dropLast()
        }
        let address = IPAddressBytes(name)
        let normalized = String(name)
        return noProxy.contains { $0.matches(host: normalized, address: address, port: port) }
    }

    /// The port a URL of `scheme` uses when it names none, or `nil` for a scheme without one.
    static func defaultPort(scheme: String) -> Int? {
        switch scheme {
        case "http", "ws":
            return 80
        case "https", "wss":
            return 443
        default:
            return nil
        }
    }
}

extension ProxyEnvironment: CustomStringConvertible, CustomDebugStringConvertible {
    /// The variables that are set, their proxies without passwords, and the number of
    /// `no_proxy` entries.
    var description: String {
        let settings = [httpProxy, httpsProxy, allProxy].compactMap { setting -> String? in
            guard let setting else { return nil }
            switch setting.proxy {
            case .success(let proxy):
                let kind = proxy.kind == .socks ? "socks5" : "http"
                let user = proxy.username == nil ? "" : "<credentials>@"
                let host = proxy.host.contains(":") ? "[\(proxy.host)]" : proxy.host
                return "\(setting.variable)=\(kind)://\(user)\(host):\(proxy.port)"
            case .failure(let error):
                return "\(setting.variable)=<unusable: \(error.reason)>"
            }
        }
        return "ProxyEnvironment(\((settings + ["no_proxy: \(noProxy.count) entries"]).joined(separator: ", ")))"
    }

    /// The same as ``description``: never the passwords.
    var debugDescription: String { description }
}
