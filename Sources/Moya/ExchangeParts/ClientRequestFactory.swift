import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Makes the AsyncHTTPClient request of each attempt: the session's headers, then the request's,
/// the jar's cookies, the route's URL and `Host`, checked where AsyncHTTPClient would not check.
final class ClientRequestFactory: Sendable {
    /// The session's ``Session/Configuration/headers``, as the user gave them.
    let configuredHeaders: [String: String]
    /// ``configuredHeaders`` as AsyncHTTPClient takes them, built once.
    let sessionHeaders: NIOHTTP1.HTTPHeaders
    /// The session's cookie jar.
    let cookies: CookieStage
    /// The AsyncHTTPClient requests made for the URLs sent to recently, to copy for the next
    /// request to the same URL (see ``ClientRequestTemplates``).
    let templates = ClientRequestTemplates()

    /// A factory that adds `headers` and the cookies of `cookies` to every request.
    init(headers: [String: String], cookies: CookieStage) {
        self.configuredHeaders = headers
        self.sessionHeaders = NIOHTTP1.HTTPHeaders(headers.map { ($0.key, $0.value) })
        self.cookies = cookies
    }

    /// Builds the AsyncHTTPClient request for `urlRequest`.
    ///
    /// Refuses what AsyncHTTPClient would send as it is, or could not send at all: a method that
    /// is not a token (it would be written into the request line as it is, line breaks
    /// included), and a port outside `1...65535` (AsyncHTTPClient traps on one with an IP
    /// address and silently truncates one with a host name). Headers are checked by
    /// AsyncHTTPClient; ``ExchangeParts/explainingFailure(_:of:)`` names the culprit when it refuses them.
    ///
    /// - Parameters:
    ///   - urlRequest:    The request.
    ///   - authorization:   An `Authorization` value that replaces the request's.
    ///   - body:            A streamed body that replaces `urlRequest.httpBody`.
    ///   - route:           How the request reaches its server (``SessionRoutes/route(for:)``).
    ///   - socketPath:      For a bridged route, the bridge's socket for the host.
    ///   - crossedOrigin:   Whether a redirect led to another origin: the session's own
    ///                      credential headers are not sent either
    ///                      (``RedirectStep/credentialHeaders``).
    ///   - additionalHeaders: Headers that replace the request's of the same names (the HTTP
    ///                      cache's validators).
    ///
    /// With a cookie jar, the jar's cookies for the URL are added to the request's `Cookie`
    /// header (see ``CookieStage/header(for:adding:)``).
    func make(
        _ urlRequest: URLRequest,
        authorization: String?,
        body streamedBody: HTTPClient.Body? = nil,
        route: TransportRoute,
        socketPath: String? = nil,
        crossedOrigin: Bool = false,
        additionalHeaders: [(name: String, value: String)] = []
    ) throws -> HTTPClient.Request {
        guard let url = urlRequest.url else {
            throw URLError(.badURL)
        }
        try SessionRoutes.checkPort(of: url)
        // The session's headers, built once; a request without headers of its own shares them
        // as they are. A request header replaces the session's of the same (case-insensitive)
        // name, and comes after the session's.
        var headers = sessionHeaders
        if let requestHeaders = urlRequest.allHTTPHeaderFields, !requestHeaders.isEmpty {
            headers.reserveCapacity(headers.count + requestHeaders.count + 1)
            for name in requestHeaders.keys where headers.contains(name: name) {
                headers.remove(name: name)
            }
            for (name, value) in requestHeaders {
                headers.add(name: name, value: value)
            }
        }
        if crossedOrigin {
            for name in RedirectStep.credentialHeaders {
                headers.remove(name: name)
            }
        }
        if let authorization = authorization {
            headers.replaceOrAdd(name: "Authorization", value: authorization)
        }
        for header in additionalHeaders {
            headers.replaceOrAdd(name: header.name, value: header.value)
        }
        if cookies.jar != nil, urlRequest.httpShouldHandleCookies,
            let cookie = cookies.header(for: url, adding: headers.first(name: "Cookie"))
        {
            headers.replaceOrAdd(name: "Cookie", value: cookie)
        }
        let method = HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET")
        // The standard methods are recognised by NIO, and need no check.
        if case .RAW(let value) = method, !HTTPSyntax.isToken(value) {
            throw RequestValidationError.invalidMethod(value)
        }
        let body = streamedBody ?? urlRequest.httpBody.map { HTTPClient.Body.bytes($0) }
        switch route {
        case .direct:
            return try templates.request(for: url, method: method, headers: headers, body: body)
        case .directWithTLS(let tlsConfiguration):
            return try templates.request(for: url, method: method, headers: headers, body: body, tlsConfiguration: tlsConfiguration)
        case .bridged(let upstream):
            // The server must see its own name, not the socket's (a Host set by the request wins,
            // as it does on a direct connection).
            if !headers.contains(name: "Host") {
                headers.add(name: "Host", value: upstream.hostHeader)
            }
            return try HTTPClient.Request(url: Self.bridgeURL(for: url, socketPath: socketPath), method: method, headers: headers, body: body)
        case .forwarded(let proxy):
            // The bridge sends the request to the proxy with the target in absolute form, made
            // of `http://`, the `Host` header and this path.
            headers.replaceOrAdd(name: "Host", value: proxy.targetHostHeader)
            return try HTTPClient.Request(url: Self.bridgeURL(for: url, socketPath: socketPath), method: method, headers: headers, body: body)
        }
    }

    /// The URL that sends a request for `url` to the bridge's socket at `socketPath`: `url`'s
    /// path and query, on the socket.
    private static func bridgeURL(for url: URL, socketPath: String?) throws -> URL {
        guard let socketPath, let uri = originFormTarget(of: url) else {
            throw URLError(.badURL)
        }
        guard let bridgeURL = URL(httpURLWithSocketPath: socketPath, uri: uri) else {
            throw URLError(.badURL)
        }
        return bridgeURL
    }

    /// The request target of `url` in origin form, as a request line carries it: its
    /// percent-encoded path (`/` when empty) and query; `nil` when `url` cannot be taken apart.
    static func originFormTarget(of url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    /// Why AsyncHTTPClient would refuse `urlRequest` before sending it, if it would.
    func refusalCause(of urlRequest: URLRequest) -> (any Error)? {
        if let scheme = urlRequest.url?.scheme, !["http", "https"].contains(scheme.lowercased()) {
            return URLError(
                .unsupportedURL,
                userInfo: [
                    NSLocalizedDescriptionKey: "The URL scheme \(String(reflecting: scheme)) is not supported; only http and https are."
                ])
        }
        // The headers as `makeClientRequest` sends them: the session's, then the request's.
        let requestHeaders = urlRequest.allHTTPHeaderFields ?? [:]
        for (name, value) in Array(configuredHeaders) + Array(requestHeaders) {
            guard HTTPSyntax.isToken(name) else {
                return RequestValidationError.invalidHeaderName(name)
            }
            guard HTTPSyntax.isFieldValue(value) else {
                return RequestValidationError.invalidHeaderValue(name: name)
            }
        }
        return nil
    }

    /// The request's headers as the session sends them, for the cache's `Vary` matching (which
    /// always includes `Authorization` and `Cookie`) and for a WebSocket handshake, which is not
    /// an AsyncHTTPClient request: the session's ``Session/Configuration/headers``,
    /// then the request's, which replace them, with `authorization` (a challenge's answer) and the
    /// jar's cookies as ``make(_:authorization:body:route:socketPath:crossedOrigin:additionalHeaders:)``
    /// adds them.
    func headersAsSent(for urlRequest: URLRequest, authorization: String?) -> [(name: String, value: String)] {
        let own = urlRequest.allHTTPHeaderFields ?? [:]
        let ownNames = Set(own.keys.map { $0.lowercased() })
        var headers = configuredHeaders.filter { !ownNames.contains($0.key.lowercased()) }.map { (name: $0.key, value: $0.value) }
        headers += own.map { (name: $0.key, value: $0.value) }
        if let authorization {
            headers.removeAll { $0.name.lowercased() == "authorization" }
            headers.append((name: "Authorization", value: authorization))
        }
        if cookies.jar != nil, urlRequest.httpShouldHandleCookies, let url = urlRequest.url {
            let existing = headers.first { $0.name.lowercased() == "cookie" }?.value
            if let cookie = cookies.header(for: url, adding: existing) {
                headers.removeAll { $0.name.lowercased() == "cookie" }
                headers.append((name: "Cookie", value: cookie))
            }
        }
        return headers
    }
}
