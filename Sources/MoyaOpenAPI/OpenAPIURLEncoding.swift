#if MoyaOpenAPI
import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sets the path and query of a request's URL to the ones a generated client encoded, whatever
/// the endpoint's URL had; its scheme, host and port stay.
struct OpenAPIURLEncoding: RequestURLEncoding, Sendable {
    /// The server URL the generated client was made with.
    let baseURL: URL
    /// The request's whole URL on that server.
    let resolvedURL: URL
    /// The URL's path, percent-encoded.
    let percentEncodedPath: String
    /// The URL's query, percent-encoded; `nil` for none.
    let percentEncodedQuery: String?

    /// The URL made with the operation when `endpointURL` is on the client's server (no endpoint
    /// closure moved it), without taking `endpointURL` apart; otherwise `endpointURL` with the
    /// operation's path and query. The parameters are none: the generated client encoded them
    /// into the path and query already.
    func requestURL(for endpointURL: URL, with parameters: Parameters?) throws -> URL {
        if Self.isOnServer(endpointURL.absoluteString, base: baseURL.absoluteString) {
            return resolvedURL
        }
        if endpointURL.scheme == baseURL.scheme, endpointURL.host == baseURL.host, endpointURL.port == baseURL.port,
            endpointURL.user == baseURL.user, endpointURL.password == baseURL.password
        {
            return resolvedURL
        }
        guard var components = URLComponents(url: endpointURL, resolvingAgainstBaseURL: true) else {
            throw MoyaTransportError.invalidRequestURL(path: percentEncodedPath, baseURL: endpointURL)
        }
        components.percentEncodedPath = percentEncodedPath
        components.percentEncodedQuery = percentEncodedQuery
        guard let encoded = components.url else {
            throw MoyaTransportError.invalidRequestURL(path: percentEncodedPath, baseURL: endpointURL)
        }
        return encoded
    }

    /// Whether `url` starts with the whole authority of `base` (scheme, user, host and port as
    /// written): `base` is a prefix that ends with `/`, or is followed in `url` by the start of a
    /// path, query or fragment, or by nothing.
    static func isOnServer(_ url: String, base: String) -> Bool {
        guard url.hasPrefix(base) else { return false }
        let rest = url.utf8.dropFirst(base.utf8.count)
        guard let next = rest.first else { return true }
        return base.utf8.last == UInt8(ascii: "/") || next == UInt8(ascii: "/") || next == UInt8(ascii: "?") || next == UInt8(ascii: "#")
    }
}
#endif
