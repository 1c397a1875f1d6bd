#if MoyaOpenAPI
import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sets the path and query of a request's URL to the ones a generated client encoded, whatever
/// the endpoint's URL had; its scheme, host and port stay.
struct OpenAPIURLEncoding: ParameterEncoding, Sendable {
    /// The server URL the generated client was made with.
    let baseURL: URL
    /// The request's whole URL on that server.
    let resolvedURL: URL
    /// The URL's path, percent-encoded.
    let percentEncodedPath: String
    /// The URL's query, percent-encoded; `nil` for none.
    let percentEncodedQuery: String?

    func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        var request = try urlRequest.asURLRequest()
        guard let url = request.url else { return request }
        // The endpoint kept the client's server (no endpoint closure moved it): the URL made
        // with the operation, without taking the endpoint's apart.
        if url.scheme == baseURL.scheme, url.host == baseURL.host, url.port == baseURL.port, url.user == baseURL.user,
            url.password == baseURL.password
        {
            request.url = resolvedURL
            return request
        }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return request }
        components.percentEncodedPath = percentEncodedPath
        components.percentEncodedQuery = percentEncodedQuery
        guard let encoded = components.url else {
            throw MoyaTransportError.invalidRequestURL(path: percentEncodedPath, baseURL: url)
        }
        request.url = encoded
        return request
    }
}
#endif
