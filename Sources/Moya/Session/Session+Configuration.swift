import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// How a ``Session`` sends requests: timeouts, redirects, decompression, default headers,
    /// connection pooling, HTTP version, proxy, TLS, server trust, cookies and caching.
    public struct Configuration: Sendable {
        /// What to do with a redirect response: ``SessionRedirectPolicy``.
        public typealias RedirectPolicy = SessionRedirectPolicy

        /// Whether compressed responses (`gzip`, `deflate`) are decompressed.
        public enum Decompression: Sendable, Equatable {
            /// Bodies are delivered as received. Remove `Accept-Encoding` from ``headers`` too, or
            /// servers may send bodies you then have to decompress yourself.
            case disabled
            /// Bodies are decompressed; a body that grows more than `maximumRatio` times its
            /// compressed size fails (protection against decompression bombs).
            case enabled(maximumRatio: Int)
            /// Bodies are decompressed; a body larger than `maximumSize` bytes once decompressed
            /// fails.
            case enabledWithMaximumSize(Int)
        }

        /// Which HTTP versions the session may speak.
        public enum HTTPVersion: Sendable, Equatable {
            /// HTTP/1.1 only.
            case http1Only
            /// HTTP/2 when the server offers it over TLS (ALPN), HTTP/1.1 otherwise.
            case automatic
        }

        /// A proxy requests go through, or ``SessionProxy/direct`` for none (see ``SessionProxy``).
        public typealias Proxy = SessionProxy

        /// Which request metrics a session reports (see ``SessionMetricsOptions``).
        public typealias MetricsOptions = SessionMetricsOptions

        /// How long opening one connection (TCP, proxy and TLS handshakes) may take; never more
        /// than ``timeoutIntervalForRequest``. Waiting for a free connection in the pool is not
        /// charged to it. Default: 10 seconds.
        public var timeoutIntervalForConnect: TimeInterval

        /// How long a request may wait for the server: from its start until its response begins
        /// (waiting for a free connection included), then for each further part of the response.
        /// The wait for the response starts again once a streamed upload has sent its body.
        /// Only the server's silence counts: while a download waits for its file to be written,
        /// or a stream for its consumer, the clock is stopped. Default: 60 seconds.
        public var timeoutIntervalForRequest: TimeInterval

        /// How long an upload (a file, a stream, a multipart form, or data of 16 KiB or more)
        /// may wait for the network to take the next part of its body, typically because the
        /// server stopped reading it or the link went down; `nil` (the default) for
        /// ``timeoutIntervalForRequest``. The upload then fails with `URLError(.timedOut)`.
        /// Time spent reading the body from its file or stream does not count.
        public var timeoutIntervalForWrite: TimeInterval?

        /// How long a whole request may take, or `nil` for no limit (the default). Waiting for a
        /// connection, the upload, redirects and the answer to an authentication challenge all
        /// count.
        public var timeoutIntervalForResource: TimeInterval?

        /// What to do with redirects. Default: follow up to 10, no cycles.
        public var redirectPolicy: RedirectPolicy

        /// Whether compressed responses are decompressed. Default: enabled, ratio 100.
        public var decompression: Decompression

        /// Headers sent with every request unless the request sets the same header.
        /// Default: ``Session/defaultHTTPHeaders``.
        public var headers: [String: String]

        /// The HTTP versions the session may use. Default: ``HTTPVersion/automatic``.
        public var httpVersion: HTTPVersion

        /// The proxy requests go through; `nil` (the default) to follow the proxy environment
        /// variables as curl reads them (`http_proxy`, `https_proxy`, `all_proxy` and their
        /// upper-case forms, and `no_proxy`), and ``SessionProxy/direct`` for no proxy at all.
        ///
        /// With the environment, each request chooses for its own URL, so hosts that `no_proxy`
        /// lists go direct while the others go through the proxy. A malformed variable fails the
        /// requests it applies to, rather than send them around the proxy. The "Cookies, Caching
        /// and Proxies" article has the details.
        ///
        /// Requests to a host pinned by public key (``PublicKeysTrustEvaluator``) cannot go
        /// through a proxy and fail with ``TLSError/invalidConfiguration(_:)``: list the host in
        /// `no_proxy`, or set ``SessionProxy/direct``.
        public var proxy: Proxy?

        /// The cookies the session stores and sends, or `nil` (the default) for none.
        ///
        /// With a jar, every response's `Set-Cookie` is stored (redirects included) and every
        /// request carries the matching cookies in `Cookie`, as RFC 6265 says; a request with
        /// `httpShouldHandleCookies` set to `false` neither sends nor stores any. No cookie goes
        /// to a host it was not set for. The default is none because a server that calls one
        /// upstream for many users must never send one user's cookie on another's request: give
        /// each user (or tenant) a session with its own ``CookieJar``. A session made from a
        /// `URLSessionConfiguration` uses its `httpCookieStorage`, as `URLSession` does.
        public var cookieJar: CookieJar?

        /// The HTTP cache the session answers from and stores in (RFC 9111, a private cache), or
        /// `nil` (the default) for none. A session made from a `URLSessionConfiguration` uses a
        /// cache of its `urlCache`'s capacities, as `URLSession` does.
        ///
        /// Streamed responses use it as other requests do: a fresh hit or a `304` to the cache's
        /// validation streams the stored body, and a response from the network is stored while
        /// it streams, when its body ends whole and fits in the cache. Stubbed requests and
        /// downloads to a file never use the cache.
        public var cache: HTTPCache?

        /// How requests use the ``cache`` when their own `cachePolicy` is Foundation's default,
        /// `.useProtocolCachePolicy`, as `URLSessionConfiguration.requestCachePolicy`. Default:
        /// `.useProtocolCachePolicy`, the rules of HTTP.
        public var requestCachePolicy: URLRequest.CachePolicy

        /// The proxy environment to follow when ``proxy`` is `nil`; `nil` for this process's
        /// (tests set their own).
        var proxyEnvironment: ProxyEnvironment?

        /// TLS: trusted roots, minimum version, client certificate. Default: the system's roots,
        /// TLS 1.2 or later, no client certificate.
        public var tls: TLSSettings

        /// Per-host server trust evaluation (pinning), or `nil` (the default) to judge every
        /// server by ``tls`` alone. With a manager, each redirect hop is judged for its own
        /// host.
        public var serverTrustManager: ServerTrustManager?

        /// Whether the pool keeps trying to open a connection that failed (until the connect
        /// timeout runs out). Default: `false`, so a refused connection or a failed TLS
        /// handshake fails the request at once; use ``RetryPolicy`` to retry requests.
        public var retriesFailedConnections: Bool

        /// The most connections kept open to one host. Default: 8.
        public var maximumConnectionsPerHost: Int

        /// How long an idle connection stays in the pool. Default: 60 seconds.
        public var connectionIdleTimeout: TimeInterval

        /// The largest response body, in bytes, that a request keeps in memory, or `nil` for no
        /// limit. Default: ``defaultMaximumResponseBodySize`` (100 MiB).
        ///
        /// A response that announces a larger body in its `Content-Length` fails as soon as its
        /// head arrives, before any of the body is read; one without a `Content-Length` (or that
        /// sends more than it announced) fails as soon as the bytes received go over the limit.
        /// Either way the connection is closed and the request fails with
        /// ``SessionError/responseBodyTooLarge(limit:announcedLength:)``, so a server cannot make
        /// the process hold more than this much for one request. A body of exactly this size is
        /// accepted. The limit applies to the body as delivered, after decompression, and not to
        /// the responses of `HEAD` requests, which have no body.
        ///
        /// Downloads (``Task/downloadDestination(_:)`` and ``Task/downloadParameters(parameters:encoding:destination:)``)
        /// are not limited: they are written to disk as they arrive, never kept in memory (a
        /// rejected status code's body is kept, but only its first MiB).
        public var maximumResponseBodySize: Int64?

        /// The default ``maximumResponseBodySize``: 100 MiB.
        public static let defaultMaximumResponseBodySize: Int64 = 100 * 1024 * 1024

        /// Where downloads are written while they arrive, before they move to their destination.
        ///
        /// Default: `org.moya.downloads-XXXXXX` in the system's temporary directory (`TMPDIR`, or
        /// `/tmp`). That name is a template: each session makes a folder of its own from it on its
        /// first download (the `X`s become random characters, as `mkdtemp` makes them), that only
        /// the user the process runs as can enter (mode 0700), and removes it, with any partial
        /// files, when it shuts down or is released (the shared ``Session/default`` when the
        /// process exits). A path that ends in `org.moya.downloads-XXXXXX` in another folder
        /// works the same way there. So no other user of the machine can read your downloads,
        /// replace them, or make your downloads fail by taking the folder's name first.
        ///
        /// Any other path is used as it is, for every session that has it, and is never removed.
        /// It is created (mode 0700) when missing, and checked before each download: it must be a
        /// directory, not a symbolic link, that belongs to the user the process runs as, and that
        /// its group and others cannot write to (unless it has the sticky bit, as `/tmp` has).
        /// Otherwise the download fails before its request is sent, with a
        /// ``TemporaryDirectoryError`` that names the folder and says what to do.
        ///
        /// Put it on the same file system as your destinations and the final move is a rename,
        /// not a copy.
        public var temporaryDirectory: URL

        /// Which request metrics the session reports through swift-metrics when a metrics
        /// backend is in place (see ``SessionMetricsOptions``). Default: ``SessionMetricsOptions/default``,
        /// metrics on without target names.
        public var metrics: MetricsOptions

        /// What the session does so that a failing upstream is never multiplied by its retries:
        /// a retry budget per origin and `Retry-After` honoured by every retry (on by default), a
        /// circuit breaker per origin (off by default). See ``ResilienceOptions``.
        public var resilience: ResilienceOptions = .default

        /// The clock of the resilience policies' windows and breaks; tests move their own.
        var resilienceClock: ResilienceClock = .system

        /// How long, in seconds, requests already running may go on once a graceful shutdown of
        /// the session's `ServiceGroup` begins (see ``Session/run()``). Default: 30 seconds.
        ///
        /// From the start of the shutdown the session refuses new requests with
        /// ``SessionError/shuttingDown``. When every running request has ended, or when this
        /// period is over, the session shuts down; requests still running then fail with
        /// ``SessionError/stoppedByShutdown``. A streamed response counts as running until its
        /// whole body has arrived. `0` stops running requests at once. A session that is never
        /// run in a `ServiceGroup` does not use it.
        ///
        /// The period does not bound a shutdown by itself: it begins when the session's turn
        /// comes, once the services after it in the group (a server, which first finishes its
        /// own requests and the upstream calls they wait for) have stopped, however long that
        /// took. Give the group a `maximumGracefulShutdownDuration`, which counts from the start
        /// of the shutdown and covers every service, below the orchestrator's own grace period,
        /// and keep this period shorter than it: when the group's limit runs out, the group
        /// cancels the session, which then stops at once.
        public var shutdownGracePeriod: TimeInterval

        /// Creates a configuration; every argument has the default described on its property.
        public init(
            timeoutIntervalForConnect: TimeInterval = 10,
            timeoutIntervalForRequest: TimeInterval = 60,
            timeoutIntervalForResource: TimeInterval? = nil,
            timeoutIntervalForWrite: TimeInterval? = nil,
            redirectPolicy: RedirectPolicy = .follow(max: 10, allowCycles: false),
            decompression: Decompression = .enabled(maximumRatio: 100),
            headers: [String: String] = Session.defaultHTTPHeaders,
            maximumConnectionsPerHost: Int = 8,
            connectionIdleTimeout: TimeInterval = 60,
            temporaryDirectory: URL = FileManager.default.temporaryDirectory.appendingPathComponent("org.moya.downloads-XXXXXX", isDirectory: true),
            httpVersion: HTTPVersion = .automatic,
            proxy: Proxy? = nil,
            tls: TLSSettings = TLSSettings(),
            serverTrustManager: ServerTrustManager? = nil,
            retriesFailedConnections: Bool = false,
            maximumResponseBodySize: Int64? = Configuration.defaultMaximumResponseBodySize,
            metrics: MetricsOptions = .default,
            cookieJar: CookieJar? = nil,
            cache: HTTPCache? = nil,
            requestCachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy,
            shutdownGracePeriod: TimeInterval = 30
        ) {
            self.shutdownGracePeriod = shutdownGracePeriod
            self.cookieJar = cookieJar
            self.cache = cache
            self.requestCachePolicy = requestCachePolicy
            self.metrics = metrics
            self.maximumResponseBodySize = maximumResponseBodySize
            self.retriesFailedConnections = retriesFailedConnections
            self.tls = tls
            self.serverTrustManager = serverTrustManager
            self.httpVersion = httpVersion
            self.proxy = proxy
            self.timeoutIntervalForConnect = timeoutIntervalForConnect
            self.timeoutIntervalForRequest = timeoutIntervalForRequest
            self.timeoutIntervalForResource = timeoutIntervalForResource
            self.timeoutIntervalForWrite = timeoutIntervalForWrite
            self.redirectPolicy = redirectPolicy
            self.decompression = decompression
            self.headers = headers
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.connectionIdleTimeout = connectionIdleTimeout
            self.temporaryDirectory = temporaryDirectory
        }

        /// The default configuration.
        public static var `default`: Configuration { Configuration() }
    }

    /// The headers a default session sends: `Accept-Encoding` (what the transport can decode),
    /// `Accept-Language` (the user's preferred languages) and a `User-Agent` ending in
    /// `Moya/<version>`.
    public static let defaultHTTPHeaders: [String: String] = HTTPHeaders.default.dictionary
}
