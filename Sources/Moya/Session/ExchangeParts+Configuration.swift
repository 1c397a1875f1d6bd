import AsyncHTTPClient
import Foundation
import NIOSSL

extension ExchangeParts {
    /// The parts of a session with `configuration`, whose clients have `clientConfiguration` and
    /// whose TLS setup is `baseTLS`.
    convenience init(
        configuration: Session.Configuration, isShared: Bool, clientConfiguration: HTTPClient.Configuration,
        baseTLS: Result<TLSConfiguration, TLSError>
    ) {
        let routes = SessionRoutes(
            clientConfiguration: clientConfiguration,
            baseTLS: baseTLS,
            serverTrustManager: configuration.serverTrustManager,
            proxy: configuration.proxy,
            proxyEnvironment: configuration.proxyEnvironment ?? .process,
            connectTimeout: .interval(configuration.timeoutIntervalForConnect)
        )
        let cookies = CookieStage(jar: configuration.cookieJar)
        let requests = ClientRequestFactory(headers: configuration.headers, cookies: cookies)
        let cache = configuration.cache.map {
            CacheStage(
                cache: $0, requestCachePolicy: configuration.requestCachePolicy, requests: requests,
                maximumResponseBodySize: configuration.maximumResponseBodySize, metrics: HTTPCacheMetrics(options: configuration.metrics))
        }
        let inFlight = InFlightExchanges(isShared: isShared)
        let metricsFactory = configuration.metrics.currentFactory
        self.init(
            routes: routes, requests: requests, cookies: cookies, cache: cache,
            timeouts: ExchangeTimeouts(
                request: configuration.timeoutIntervalForRequest, write: configuration.timeoutIntervalForWrite,
                resource: configuration.timeoutIntervalForResource),
            inFlight: inFlight,
            placement: ConnectionPlacement(inFlight: inFlight, gatesFirstConnections: configuration.httpVersion == .automatic),
            downloadFolder: DownloadFolder(configuration.temporaryDirectory), tracing: TracePropagation.current,
            redirectPolicy: configuration.redirectPolicy, maximumResponseBodySize: configuration.maximumResponseBodySize,
            metricsFactory: metricsFactory,
            policies: PolicyStage(
                options: configuration.resilience, clock: configuration.resilienceClock, metrics: ResilienceMetrics(factory: metricsFactory)))
    }
}
