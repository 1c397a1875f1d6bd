import Foundation

extension Session {
    /// Creates a session from a `URLSessionConfiguration`, the way Moya 15 code creates
    /// Alamofire's `Session`:
    ///
    /// ```swift
    /// let configuration = URLSessionConfiguration.default
    /// configuration.headers = .default
    /// configuration.timeoutIntervalForRequest = 20
    /// let session = Session(configuration: configuration, startRequestsImmediately: false)
    /// ```
    ///
    /// Every argument has a default, so `Session(interceptor: tokenInterceptor)` and
    /// `Session(serverTrustManager: manager)` work as in Alamofire. `Session()` and
    /// `Session(configuration: .default)` still mean ``init(configuration:)`` with
    /// ``Session/Configuration/default``.
    ///
    /// The configuration's request and resource timeouts, additional headers (on top of
    /// ``Session/defaultHTTPHeaders``), connections per host, HTTP or SOCKS proxy, cookie
    /// storage and cache are read into a ``Session/Configuration`` (see
    /// ``Session/Configuration/init(_:)``).
    ///
    /// - Parameters:
    ///   - configuration:            The settings to read; `URLSessionConfiguration.default`
    ///                               by default.
    ///   - delegate:                 Accepted for source compatibility; see ``SessionDelegate``.
    ///   - rootQueue:                Accepted for source compatibility; the transport runs on
    ///                               its own event loops.
    ///   - startRequestsImmediately: Accepted for source compatibility: a provider always starts
    ///                               a request when it sends it (Moya 15 passes `false` and
    ///                               resumes requests itself, to the same effect).
    ///   - requestQueue:             Accepted for source compatibility.
    ///   - serializationQueue:       Accepted for source compatibility.
    ///   - interceptor:              Adapts and retries every request of every provider on this
    ///                               session, before the provider's own interceptors.
    ///   - serverTrustManager:       Per-host trust evaluation (pinning), or `nil`.
    @_disfavoredOverload
    public convenience init(
        configuration: URLSessionConfiguration = .default,
        delegate: SessionDelegate = SessionDelegate(),
        rootQueue: DispatchQueue? = nil,
        startRequestsImmediately: Bool = true,
        requestQueue: DispatchQueue? = nil,
        serializationQueue: DispatchQueue? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        serverTrustManager: ServerTrustManager? = nil
    ) {
        var settings = Configuration(configuration)
        settings.serverTrustManager = serverTrustManager
        self.init(configuration: settings, isShared: false, interceptor: interceptor, urlSessionConfiguration: configuration)
    }

    /// The session's settings as a `URLSessionConfiguration`: a copy of the one it was created
    /// from, or, for a session created from a ``Session/Configuration``, the default one with
    /// the timeouts, headers, connections per host and proxy written in. Changing the copy
    /// changes nothing: a session's configuration is fixed when it is created.
    public var sessionConfiguration: URLSessionConfiguration {
        if let original = urlSessionConfiguration {
            return original.value.copy() as! URLSessionConfiguration
        }
        let copy = URLSessionConfiguration.default
        copy.timeoutIntervalForRequest = configuration.timeoutIntervalForRequest
        if let resource = configuration.timeoutIntervalForResource {
            copy.timeoutIntervalForResource = resource
        }
        copy.httpAdditionalHeaders = configuration.headers
        copy.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
        if let proxy = configuration.proxy {
            copy.connectionProxyDictionary = proxy.urlSessionProxyDictionary
        }
        // Whether there are cookies and a cache; their storage is the session's own.
        copy.httpShouldSetCookies = configuration.cookieJar != nil
        if configuration.cookieJar == nil {
            copy.httpCookieStorage = nil
        }
        if configuration.cache == nil {
            copy.urlCache = nil
        }
        copy.requestCachePolicy = configuration.requestCachePolicy
        return copy
    }
}

extension Session.Configuration {
    /// Reads the settings of a `URLSessionConfiguration` that this transport honours:
    ///
    /// - `timeoutIntervalForRequest` and `timeoutIntervalForResource` (a resource limit of
    ///   7 days or more, `URLSession`'s default, means no limit);
    /// - `httpAdditionalHeaders`, on top of ``Session/defaultHTTPHeaders`` (a header named in
    ///   both takes the configuration's value);
    /// - `httpMaximumConnectionsPerHost`;
    /// - an HTTP, HTTPS or SOCKS proxy in `connectionProxyDictionary` (`HTTPSProxy` and
    ///   `HTTPSPort` win over `HTTPProxy` and `HTTPPort`; `SOCKSProxy` and `SOCKSPort` are used
    ///   when neither is set; a dictionary that enables none means no proxy, and no dictionary
    ///   means the proxy environment variables);
    /// - `httpCookieStorage`, `httpShouldSetCookies` and `httpCookieAcceptPolicy`: with cookies
    ///   on and a storage, the session's ``Session/Configuration/cookieJar`` stores its cookies
    ///   in that `HTTPCookieStorage` (by default `HTTPCookieStorage.shared`, as on Apple
    ///   platforms), so code that reads or writes the storage sees the cookies requests use;
    /// - `urlCache` and `requestCachePolicy`: a `urlCache` gives the session an ``HTTPCache`` in
    ///   memory, of the `URLCache`'s memory capacity (one per `URLCache` object, shared by the
    ///   sessions made with it; for a cache on disk set ``Session/Configuration/cache``).
    ///
    /// Everything else keeps its default. What cannot be honoured is logged once per process:
    /// `waitsForConnectivity` on Apple platforms (a request to an unreachable host fails at
    /// once; use ``RetryPolicy`` to retry).
    ///
    /// - Parameter configuration: The settings to read.
    public init(_ configuration: URLSessionConfiguration) {
        self.init()
        timeoutIntervalForRequest = configuration.timeoutIntervalForRequest
        let resource = configuration.timeoutIntervalForResource
        timeoutIntervalForResource = resource > 0 && resource < 7 * 86_400 ? resource : nil
        if configuration.httpMaximumConnectionsPerHost > 0 {
            maximumConnectionsPerHost = configuration.httpMaximumConnectionsPerHost
        }
        var merged = HTTPHeaders(Session.defaultHTTPHeaders)
        for header in configuration.headers {
            merged.update(header)
        }
        headers = merged.dictionary
        proxy = Proxy(urlSessionProxyDictionary: configuration.connectionProxyDictionary)
        if configuration.httpShouldSetCookies, let storage = configuration.httpCookieStorage {
            cookieJar = CookieJar(storage: storage, acceptPolicy: configuration.httpCookieAcceptPolicy)
        }
        cache = configuration.urlCache.map(URLCacheRegistry.shared.cache(for:))
        requestCachePolicy = configuration.requestCachePolicy
        for setting in UnsupportedSettingsLog.unsupportedSettings(of: configuration) {
            SessionLog.noticeOnce(
                "URLSessionConfiguration.\(setting.name)", "URLSessionConfiguration.\(setting.name) is not honoured by Moya's transport: \(setting.reason)")
        }
    }
}

extension SessionProxy {
    /// The proxy a `URLSessionConfiguration.connectionProxyDictionary` names: `nil` for no
    /// dictionary (the environment's proxies apply), ``direct`` for one that enables none.
    init?(urlSessionProxyDictionary dictionary: [AnyHashable: Any]?) {
        guard let dictionary else { return nil }
        func entry(_ kind: String) -> (host: String, port: Int)? {
            let enabled = (dictionary["\(kind)Enable"] as? NSNumber)?.boolValue ?? (dictionary["\(kind)Enable"] as? Bool) ?? true
            guard enabled, let host = dictionary["\(kind)Proxy"] as? String, !host.isEmpty else { return nil }
            let port = (dictionary["\(kind)Port"] as? NSNumber)?.intValue ?? (dictionary["\(kind)Port"] as? Int)
            return (host, port ?? (kind == "SOCKS" ? 1080 : 8080))
        }
        if let https = entry("HTTPS") ?? entry("HTTP") {
            self = .http(host: https.host, port: https.port)
        } else if let socks = entry("SOCKS") {
            self = .socks(host: socks.host, port: socks.port)
        } else {
            // A dictionary that enables no proxy means none, as on Apple platforms (`nil` means
            // the system's settings: here, the environment).
            self = .direct
        }
    }

    /// The proxy as a `URLSessionConfiguration.connectionProxyDictionary`.
    var urlSessionProxyDictionary: [AnyHashable: Any] {
        switch kind {
        case .http:
            return ["HTTPEnable": 1, "HTTPProxy": host, "HTTPPort": port, "HTTPSEnable": 1, "HTTPSProxy": host, "HTTPSPort": port]
        case .socks:
            return ["SOCKSEnable": 1, "SOCKSProxy": host, "SOCKSPort": port]
        case .direct:
            return [:]
        }
    }
}

/// The `URLSessionConfiguration` settings a session cannot honour, which ``SessionLog`` notes
/// once per process each.
enum UnsupportedSettingsLog {
    /// The settings of `configuration` that are ignored, by name, with why.
    static func unsupportedSettings(of configuration: URLSessionConfiguration) -> [(name: String, reason: String)] {
        var settings: [(name: String, reason: String)] = []
        #if !canImport(FoundationNetworking)
        if configuration.waitsForConnectivity {
            settings.append(("waitsForConnectivity", "a request to an unreachable host fails at once; retry it with RetryPolicy"))
        }
        #endif
        return settings
    }
}

/// The ``HTTPCache`` of each `URLCache` that sessions were made with: sessions made from
/// configurations that share a `URLCache` (usually `URLCache.shared`) share one cache, as
/// `URLSession`s do.
final class URLCacheRegistry: Sendable {
    static let shared = URLCacheRegistry()

    private let entries = Protected<[ObjectIdentifier: (urlCache: WeakURLCache, cache: HTTPCache)]>([:])

    /// The cache for `urlCache`, made on first use with its memory capacity; like `URLSession`, it
    /// sends a caller's own conditional requests to the server.
    func cache(for urlCache: URLCache) -> HTTPCache {
        entries.withLock { entries in
            let id = ObjectIdentifier(urlCache)
            if let entry = entries[id], entry.urlCache.value === urlCache {
                return entry.cache
            }
            entries = entries.filter { $0.value.urlCache.value != nil }
            let cache = HTTPCache(memoryCapacity: urlCache.memoryCapacity, diskCapacity: 0, directory: nil, callerConditionals: .passedThrough)
            entries[id] = (WeakURLCache(urlCache), cache)
            return cache
        }
    }
}

/// A `URLCache` held weakly, to tell whether the object a registry entry was made for is still
/// the one at its address.
///
/// `@unchecked Sendable`: the reference is only read to compare identities, never to use the
/// `URLCache`, and it is set once, at creation (a weak reference's loads are atomic).
final class WeakURLCache: @unchecked Sendable {
    /// The `URLCache`, while it exists.
    private(set) weak var value: URLCache?

    init(_ value: URLCache) {
        self.value = value
    }
}
